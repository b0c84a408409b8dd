"""--max-budget-usd's asking PreToolUse hook: when claude-print decides, and what."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple

from harness import MOCK_CLAUDE, Sandbox, run_claude_print

from claude_print import contract
from claude_print.hooks.relay import HookEvent
from claude_print.turns.asking import ASK_SETTLE, AskingHooks
from claude_print.turns.turn import Turn
from claude_print.turns.turn_state import OVER_BUDGET


class Rig:
    """AskingHooks with a budget, a turn, its transcript records and the answers given."""

    def __init__(self, budget: float) -> None:
        self.answers: List[Tuple[str, Optional[Dict[str, Any]]]] = []
        self.asks = AskingHooks(lambda e, d: self.answers.append((e.name, d)), print, budget)
        self.turn = Turn("hi", "argv", 0.0)
        self.records: List[Dict[str, Any]] = []

    def serve(self, event: HookEvent, now: float = 0.0) -> None:
        if event not in [e for e, _ in self.asks.waiting]:
            self.asks.add(event, 0.0)
        summary = self.turn.summary(self.records, "s")
        self.asks.serve(now, self.turn, summary, None)


def pre_tool_use(**payload: Any) -> HookEvent:
    return HookEvent(contract.HOOK_PRE_TOOL_USE, dict(payload), None, "/nonexistent/reply")


def post_tool_batch(*tool_use_ids: str, **payload: Any) -> HookEvent:
    calls = [{"tool_name": "Bash", "tool_use_id": i, "tool_response": {}} for i in tool_use_ids]
    return HookEvent(
        contract.HOOK_POST_TOOL_BATCH, {"tool_calls": calls, **payload}, None, "/nonexistent/reply"
    )


PROMPT = {
    "type": "user",
    "sessionId": "s",
    "uuid": "p0",
    "parentUuid": None,
    "message": {"role": "user", "content": "hi"},
}


def assistant(tool_id: str, cost_tokens: int, parent: str = "p0") -> Dict[str, Any]:
    return {
        "type": "assistant",
        "sessionId": "s",
        "uuid": tool_id,
        "parentUuid": parent,
        "message": {
            "id": f"msg_{tool_id}",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "tool_use", "id": tool_id, "name": "Bash", "input": {}}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": cost_tokens, "output_tokens": 10},
        },
    }


def test_a_main_thread_tool_waits_for_its_call_in_the_transcript() -> None:
    rig = Rig(1.0)
    rig.records.append(PROMPT)
    event = pre_tool_use(tool_use_id="toolu_1")
    rig.serve(event)
    assert rig.answers == []  # its call is not in the transcript yet
    rig.records.append(assistant("toolu_1", 100))
    rig.serve(event)
    assert rig.answers == [(contract.HOOK_PRE_TOOL_USE, None)]


def test_a_main_thread_tool_is_answered_after_the_settle_time_anyway() -> None:
    rig = Rig(1.0)
    rig.records.append(PROMPT)
    rig.serve(pre_tool_use(tool_use_id="toolu_1"), now=ASK_SETTLE + 0.01)
    assert rig.answers == [(contract.HOOK_PRE_TOOL_USE, None)]


def test_a_subagent_tool_does_not_wait_for_the_main_transcript() -> None:
    rig = Rig(1.0)
    rig.serve(pre_tool_use(tool_use_id="toolu_9", agent_id="a1"))
    assert rig.answers == [(contract.HOOK_PRE_TOOL_USE, None)]


def test_the_decision_stops_once_the_cost_reaches_the_budget() -> None:
    rig = Rig(0.01)
    rig.records += [PROMPT, assistant("toolu_1", 100)]  # far below a cent
    rig.serve(pre_tool_use(tool_use_id="toolu_1"))
    assert rig.answers == [(contract.HOOK_PRE_TOOL_USE, None)] and rig.turn.state is not OVER_BUDGET
    rig.records.append(assistant("toolu_2", 10_000_000, parent="toolu_1"))
    rig.serve(pre_tool_use(tool_use_id="toolu_2"))
    assert rig.answers[-1] == (contract.HOOK_PRE_TOOL_USE, contract.BUDGET_STOP)
    assert rig.turn.state is OVER_BUDGET


def test_the_decision_boundary_is_the_budget_itself() -> None:
    # `claude -p` stops once the cost reaches the budget: at exactly one call's cost it
    # runs no tool of that call (measured on 2.1.197 and 2.1.331 against the fake API).
    probe = Rig(1.0)
    probe.records += [PROMPT, assistant("toolu_1", 100)]
    cost = probe.turn.summary(probe.records, "s").total_cost_usd
    assert cost > 0
    for budget, stops in [
        (cost * (1 - 1e-9), True),
        (cost, True),
        (cost * (1 + 1e-9), False),
    ]:
        rig = Rig(budget)
        rig.records += [PROMPT, assistant("toolu_1", 100)]
        rig.serve(pre_tool_use(tool_use_id="toolu_1"))
        decision = rig.answers[-1][1]
        assert (decision == contract.BUDGET_STOP, rig.turn.state is OVER_BUDGET) == (
            stops,
            stops,
        ), budget


def test_an_answer_that_costs_exactly_the_budget_reaches_it(sandbox: Sandbox) -> None:
    # Measured with `claude -p` 2.1.197 and 2.1.331 on the fake API (whose prices and
    # token counts mock_claude repeats): a budget of exactly the answer's cost is reached
    # (error_max_budget_usd, exit 1), and so is one a hair below it; a hair above is not.
    def run(budget: float, code: int) -> Dict[str, Any]:
        args = ["--output-format", "json", "--max-budget-usd", repr(budget), "What is 2+2?"]
        proc = run_claude_print(sandbox, args, binary=str(MOCK_CLAUDE))
        assert proc.returncode == code, (budget, proc.stderr.decode())
        result: Dict[str, Any] = json.loads(proc.stdout)
        return result

    cost = run(1e-7, 1)["total_cost_usd"]  # far below: the first call reaches it
    assert cost > 0
    for budget in (cost * (1 - 1e-9), cost):
        result = run(budget, 1)
        assert result["subtype"] == "error_max_budget_usd"
        assert result["errors"] == [f"Reached maximum budget (${budget!r})"]
        assert result["total_cost_usd"] == cost
    result = run(cost * (1 + 1e-9), 0)
    assert (result["subtype"], result["result"]) == ("success", "The answer is 4.")
    assert result["total_cost_usd"] == cost


def test_a_tool_started_mid_stream_runs_and_the_batch_stops_the_turn() -> None:
    """The TUI records a message whose tool it started mid-stream only after the tool's
    PreToolUse has answered (measured, 2.1.197 and 2.1.332): the settle time passes
    without it, and the tool runs, as in `claude -p`. After the batch, its call is
    recorded: PostToolBatch stops the turn before a further call, as `claude -p` does."""
    rig = Rig(0.0000001)
    rig.records.append(PROMPT)
    rig.serve(pre_tool_use(tool_use_id="toolu_1"), now=ASK_SETTLE + 0.01)
    assert rig.answers == [(contract.HOOK_PRE_TOOL_USE, None)] and rig.turn.state is not OVER_BUDGET
    batch = post_tool_batch("toolu_1")
    rig.serve(batch)
    assert rig.answers[1:] == []  # waits for the batch's call in the transcript
    rig.records.append(assistant("toolu_1", 100))
    rig.serve(batch)
    assert rig.answers[1:] == [(contract.HOOK_POST_TOOL_BATCH, contract.BUDGET_STOP)]
    assert rig.turn.state is OVER_BUDGET


def test_a_batch_waits_for_every_call_of_it() -> None:
    rig = Rig(1.0)
    rig.records += [PROMPT, assistant("toolu_1", 100)]
    batch = post_tool_batch("toolu_1", "toolu_2")
    rig.serve(batch)
    assert rig.answers == []
    rig.records.append(assistant("toolu_2", 100, parent="toolu_1"))
    rig.serve(batch)
    assert rig.answers == [(contract.HOOK_POST_TOOL_BATCH, None)]


def test_a_batch_under_the_budget_or_a_subagents_goes_on() -> None:
    rig = Rig(1.0)
    rig.records += [PROMPT, assistant("toolu_1", 100)]
    rig.serve(post_tool_batch("toolu_1"))
    spent = Rig(0.0000001)
    spent.serve(post_tool_batch("toolu_9", agent_id="a1"))
    assert rig.answers == spent.answers == [(contract.HOOK_POST_TOOL_BATCH, None)]
    assert rig.turn.state is not OVER_BUDGET and spent.turn.state is not OVER_BUDGET
