"""--max-budget-usd's asking PreToolUse hook: when claude-print decides, and what."""

from __future__ import annotations

import json
import time
from typing import Any, Dict

from conftest import MOCK_CLAUDE, Sandbox, run_claude_print

from claude_print import contract
from claude_print.options import Options
from claude_print.relay import HookEvent
from claude_print.runner import Emitter, Session, Trace


def session(budget: float) -> Session:
    started = time.monotonic()
    options = Options(prompt="hi", prompt_source="argv", max_budget_usd=budget)
    return Session(options, Trace(False, started), Emitter("json"), started)


def pre_tool_use(**payload: Any) -> HookEvent:
    return HookEvent(contract.HOOK_PRE_TOOL_USE, dict(payload), None, "/nonexistent/reply")


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
    s = session(1.0)
    s.session_id = "s"
    s.records.append(PROMPT)
    event = pre_tool_use(tool_use_id="toolu_1")
    assert s._awaits_tool_use(event)
    s.records.append(assistant("toolu_1", 100))
    assert not s._awaits_tool_use(event)


def test_a_subagent_tool_does_not_wait_for_the_main_transcript() -> None:
    s = session(1.0)
    assert not s._awaits_tool_use(pre_tool_use(tool_use_id="toolu_9", agent_id="a1"))


def test_the_decision_stops_once_the_cost_reaches_the_budget() -> None:
    s = session(0.01)
    s.session_id = "s"
    s.records += [PROMPT, assistant("toolu_1", 100)]  # far below a cent
    assert s._budget_decision() is None and not s.turn.budget_spent
    s.records.append(assistant("toolu_2", 10_000_000, parent="toolu_1"))
    assert s._budget_decision() == contract.BUDGET_STOP
    assert s.turn.budget_spent


def test_the_decision_boundary_is_the_budget_itself() -> None:
    # `claude -p` stops once the cost reaches the budget: at exactly one call's cost it
    # runs no tool of that call (measured on 2.1.197 and 2.1.331 against the fake API).
    records = [PROMPT, assistant("toolu_1", 100)]
    probe = session(1.0)
    probe.session_id = "s"
    probe.records += records
    cost = probe._summary().total_cost_usd
    assert cost > 0
    for budget, stops in [
        (cost * (1 - 1e-9), True),
        (cost, True),
        (cost * (1 + 1e-9), False),
    ]:
        s = session(budget)
        s.session_id = "s"
        s.records += records
        decision = s._budget_decision()
        assert (decision == contract.BUDGET_STOP, s.turn.budget_spent) == (stops, stops), budget


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
