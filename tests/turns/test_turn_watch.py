"""The turn phase without a PTY: records appended to a transcript file, hooks set on the
turn, a screen handed in; `TurnWatch.step` must give the verdict `claude -p` would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from claude_print import contract
from claude_print.errors import ClaudePrintError
from claude_print.hooks.hook_events import HookWatch
from claude_print.hooks.relay import HookEvent
from claude_print.tui.keys import Keyboard
from claude_print.turns import turn_end
from claude_print.turns.transcript_feed import TranscriptFeed
from claude_print.turns.turn import Turn
from claude_print.turns.turn_state import BudgetReached, EscPressed, Stopped, Submitted, advance
from claude_print.turns.turn_watch import (
    INTERRUPT_SETTLE,
    MISSING_HOOK_GRACE,
    STOP_CLOSE_QUIET,
    Rules,
    TurnWatch,
    Verdict,
)

SID = "5f0c1b9e-3f7e-4c55-9a51-000000000001"
MODEL = "claude-sonnet-4-5-20250929"
IDLE = ["─" * 40, contract.CARET + " ", "─" * 40, "  ? for shortcuts"]  # the empty input box


class Log:
    """A session transcript the test writes record by record, chained as the TUI does."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.path.write_text("")
        self.last: Optional[str] = None
        self.n = 0

    def add(self, kind: str, **fields: Any) -> Dict[str, Any]:
        self.n += 1
        record = {
            "type": kind,
            "uuid": f"u{self.n}",
            "parentUuid": self.last,
            "sessionId": SID,
            "timestamp": f"2026-11-25T06:00:{self.n:02d}.000Z",
            **fields,
        }
        self.last = record["uuid"]
        with self.path.open("a") as f:
            f.write(json.dumps(record) + "\n")
        return record

    def prompt(self, text: str = "hi") -> None:
        self.add("user", message={"role": "user", "content": text}, promptId="p1")

    def answer(self, text: str, stop: str = "end_turn", tokens: int = 10, call: str = "") -> None:
        blocks = [{"type": "text", "text": text}]
        self.add(
            "assistant",
            message={
                "id": call or f"msg{self.n}",
                "role": "assistant",
                "model": MODEL,
                "content": blocks,
                "stop_reason": stop,
                "usage": {"input_tokens": tokens, "output_tokens": tokens},
            },
        )

    def tool_round(self, name: str = "Bash") -> None:
        use = f"tu{self.n}"
        self.add(
            "assistant",
            message={
                "id": f"msg{self.n}",
                "role": "assistant",
                "model": MODEL,
                "content": [{"type": "tool_use", "id": use, "name": name, "input": {}}],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 5, "output_tokens": 5},
            },
        )
        self.add(
            "user",
            message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": use}]},
        )

    def close(self) -> None:
        self.add("system", subtype="turn_duration", durationMs=1000)


class Rig:
    def __init__(self, tmp_path: Path, rules: Optional[Rules] = None) -> None:
        rules = rules or Rules(others_stop_hooks=False)
        tmp_path.mkdir(parents=True, exist_ok=True)
        self.log = Log(tmp_path / f"{SID}.jsonl")
        self.feed = TranscriptFeed(SID, lambda record: None)
        self.feed.open(str(self.log.path))
        self.turn = Turn("hi", "editor", 0.0)
        advance(self.turn, Submitted(0.0))
        self.keys = Keyboard(0.0)
        self.screen: List[str] = IDLE
        self.gone = False
        self.asking = False
        self.interrupts: List[str] = []
        self.traces: List[str] = []
        self.status: Optional[str] = None  # the TUI's session registry status
        self.watch = TurnWatch(
            self.turn,
            rules,
            self.feed,
            self.keys,
            lambda: self.screen,
            lambda: self.gone,
            HookWatch([]),
            lambda: self.asking,
            self.interrupts,
            lambda what, lines: ClaudePrintError(what),
            self.traces.append,
            lambda: self.status,
        )

    def stop(self, now: float, last: str = "") -> None:
        payload = {"last_assistant_message": last} if last else {}
        advance(self.turn, Stopped(HookEvent(contract.HOOK_STOP, payload), now))

    def step(self, now: float) -> Optional[Verdict]:
        self.watch.next_tail = 0.0  # every step reads the transcript
        return self.watch.step(now)

    def result(self, verdict: Optional[Verdict]) -> Dict[str, Any]:
        assert verdict is not None
        facts = contract.facts_for(contract.NEWEST_TESTED)
        ctx = turn_end.Context(SID, facts.version, facts, self.turn, 1.0)
        return verdict.build(ctx).obj


def test_stop_with_the_answer_on_disk_is_the_result(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.log.prompt()
    rig.log.answer("four")
    assert rig.step(0.5) is None  # no Stop yet: an end_turn answer alone ends nothing
    rig.stop(1.0)
    result = rig.result(rig.step(1.0))
    assert (result["subtype"], result["result"], result["num_turns"]) == ("success", "four", 1)


def test_stop_before_the_answer_is_written_waits_for_it_then_falls_back(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.log.prompt()
    rig.stop(1.0, last="from the hook")
    assert rig.step(1.0) is None  # the write queue has not flushed the answer yet
    assert rig.step(1.0 + 2.9) is None
    result = rig.result(rig.step(1.0 + 3.0))  # TRANSCRIPT_SETTLE: what there is
    assert result["result"] == "from the hook"
    assert any("incomplete" in line for line in rig.traces)


def test_a_blocking_stop_hook_sends_the_turn_on_until_turn_duration(tmp_path: Path) -> None:
    """With other Stop hooks possible, our Stop is not the end: one of theirs may block
    (the reason goes to the model). The turn ends with the transcript's turn_duration."""
    rig = Rig(tmp_path, Rules(others_stop_hooks=True))
    rig.log.prompt()
    rig.log.answer("first")
    rig.stop(1.0)
    rig.keys.last_output = 1.0
    rig.screen = ["  ✻ Thinking… (esc to interrupt)"]
    assert rig.step(1.1) is None  # busy: the blocked turn goes on
    rig.log.add(  # the blocking hook's reason, as the TUI injects it
        "user", isMeta=True, message={"role": "user", "content": "Stop hook feedback: say BANANA"}
    )
    rig.log.answer("BANANA")
    rig.stop(2.0)
    assert rig.step(2.1) is None  # not closed yet, the TUI still drawing
    rig.log.close()
    result = rig.result(rig.step(2.2))
    assert (result["result"], result["num_turns"]) == ("BANANA", 2)


def test_a_quiet_idle_tui_after_stop_ends_the_turn_without_turn_duration(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path, Rules(others_stop_hooks=True))
    rig.log.prompt()
    rig.log.answer("done")
    rig.stop(1.0)
    rig.keys.last_output = 1.0
    assert rig.step(1.0 + STOP_CLOSE_QUIET - 0.1) is None
    assert rig.result(rig.step(1.0 + STOP_CLOSE_QUIET))["result"] == "done"
    assert any("no turn_duration" in line for line in rig.traces)


@pytest.mark.parametrize(("limit", "ends"), [(1, True), (2, False)])
def test_max_turns_ends_the_turn_once_exceeded(tmp_path: Path, limit: int, ends: bool) -> None:
    rig = Rig(tmp_path, Rules(max_turns=limit, others_stop_hooks=False))
    rig.log.prompt()
    rig.log.tool_round()  # the tool's result is turn 2
    verdict = rig.step(1.0)
    assert (verdict is not None) == ends
    if verdict is not None:
        assert rig.result(verdict)["subtype"] == "error_max_turns"


def test_the_budget_boundary_after_stop(tmp_path: Path) -> None:
    """`claude -p` reports error_max_budget_usd once the cost reaches the budget: at
    exactly the turn's cost too, not a hair above it."""
    probe = Rig(tmp_path / "probe")
    probe.log.prompt()
    probe.log.answer("x", tokens=1000)
    probe.feed.poll()
    cost = probe.feed.summary(probe.turn).total_cost_usd
    assert cost > 0
    for factor, subtype in [
        (0.999999, "error_max_budget_usd"),
        (1.0, "error_max_budget_usd"),
        (1.000001, "success"),
    ]:
        rig = Rig(
            tmp_path / str(factor), Rules(max_budget_usd=cost * factor, others_stop_hooks=False)
        )
        rig.log.prompt()
        rig.log.answer("x", tokens=1000)
        rig.stop(1.0)
        assert rig.result(rig.step(1.0))["subtype"] == subtype, factor


def test_a_spent_budget_ends_the_turn_at_once(tmp_path: Path) -> None:
    rig = Rig(tmp_path, Rules(max_budget_usd=0.01, others_stop_hooks=False))
    rig.log.prompt()
    advance(rig.turn, BudgetReached())  # the asking PreToolUse hook said so
    assert rig.result(rig.step(0.1))["subtype"] == "error_max_budget_usd"


def test_a_prompt_that_never_arrives_fails_with_the_transcript_path(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    assert rig.step(19.0) is None
    with pytest.raises(ClaudePrintError, match="did not reach Claude Code within 20s"):
        rig.step(20.0)


def test_a_dialog_no_hook_answers_fails_once_the_tui_is_quiet(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.log.prompt()
    rig.screen = [
        "Bash command",
        "  rm -rf build",
        "Do you want to proceed?",
        "\N{HEAVY RIGHT-POINTING ANGLE QUOTATION MARK ORNAMENT} 1. Yes",
        "  2. No, and tell Claude what to do differently (esc)",
    ]
    rig.keys.last_output = 5.0
    assert rig.step(6.0) is None  # drawn a moment ago: may still change
    rig.asking = True
    assert rig.step(7.0) is None  # one of our hooks is waiting: its answer may close it
    rig.asking = False
    # Our PermissionRequest hook answers such a dialog, and the TUI draws it while the
    # hook runs (on a loaded machine, for longer than the quiet gap: a CI failure at load
    # 15): stuck only once the hook's own limit, 30 s, has passed.
    assert rig.step(7.0) is None
    assert rig.step(5.0 + 29.9) is None
    with pytest.raises(ClaudePrintError, match="permission to run a tool on screen"):
        rig.step(5.0 + 30.0)


def test_an_interrupt_ends_the_turn_with_the_interruption_first(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.log.prompt()
    rig.interrupts.append("req-1")
    advance(rig.turn, EscPressed(1.0))
    rig.keys.last_output = 0.5  # nothing drawn since Esc
    assert rig.step(1.1) is None
    rig.log.add(
        "user",
        message={
            "role": "user",
            "content": [{"type": "text", "text": contract.INTERRUPTED_PREFIX}],
        },
    )
    verdict = rig.step(1.2)
    assert verdict is not None and verdict.notice is not None
    assert verdict.notice["type"] == "user" and rig.interrupts == []
    assert rig.result(verdict)["subtype"] == "error_during_execution"


def test_an_interrupt_with_no_sign_is_reported_after_the_settle_time(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.log.prompt()
    advance(rig.turn, EscPressed(1.0))
    rig.watch.escs = 3  # Esc pressed again as often as it may be
    rig.screen = ["  ✻ Thinking… (esc to interrupt)"]
    rig.keys.last_output = 1.5
    assert rig.step(1.0 + INTERRUPT_SETTLE - 0.1) is None
    assert rig.step(1.0 + INTERRUPT_SETTLE) is not None


# 2.1.197 to 2.1.202 with a status line (claude-print's empty one): no busy footer while
# a turn runs, the same footer as at rest (measured on 2.1.197).
BUSY_NO_FOOTER = ["● Inferring…", *IDLE]


def test_a_busy_tui_without_its_footer_is_not_taken_for_interrupted(tmp_path: Path) -> None:
    """Issue 42's CI failure under load: the Esc was lost, the screen looked idle (no busy
    footer on 2.1.197 with a status line), the turn was reported interrupted while it
    ran on, and the next prompt was queued behind it. The TUI's own status says busy:
    Esc again, once it had time to take the first one (no frame needed)."""
    rig = Rig(tmp_path)
    rig.log.prompt()
    rig.interrupts.append("req-1")
    advance(rig.turn, EscPressed(1.0))
    rig.screen = BUSY_NO_FOOTER
    rig.status = "busy"
    rig.keys.last_output = 1.05
    assert rig.step(1.05) is None, "not interrupted while the TUI says busy"
    assert rig.step(1.99) is None and bytes(rig.keys.outbox) == b"", "too soon to tell"
    assert rig.step(2.0) is None
    assert bytes(rig.keys.outbox) == contract.KEY_ESCAPE
    rig.keys.outbox.clear()
    rig.status = "idle"  # the second Esc took
    rig.keys.last_output = 2.1
    verdict = rig.step(2.1)
    assert verdict is not None and rig.result(verdict)["subtype"] == "error_during_execution"


BUSY = ["  ✻ Thinking… (esc to interrupt)", *IDLE]  # 2.1.197's footer while a turn runs


def test_a_lost_esc_is_pressed_again_while_the_busy_footer_stays(tmp_path: Path) -> None:
    """An interrupt sent the instant system/init arrives: its Esc reached the TUI before
    the turn was under way and was lost (TypeScript SDK, loaded 2.1.197). The busy footer
    drawn 0.5 s past the TUI's first frame since the Esc means so: Esc again."""
    rig = Rig(tmp_path)
    rig.log.prompt()
    rig.interrupts.append("req-1")
    advance(rig.turn, EscPressed(1.0))
    rig.screen = BUSY
    rig.keys.last_output = 1.1  # the first frame since the Esc
    assert rig.step(1.1) is None
    rig.keys.last_output = 1.59
    assert rig.step(1.59) is None and bytes(rig.keys.outbox) == b"", "too soon to tell"
    rig.keys.last_output = 1.6
    assert rig.step(1.6) is None
    assert bytes(rig.keys.outbox) == b"\x1b" and rig.turn.interrupt_at == 1.6
    rig.keys.outbox.clear()
    rig.keys.last_output = 1.7  # that Esc worked: the prompt is back in the idle box
    rig.screen = IDLE
    verdict = rig.step(1.7)
    assert verdict is not None and verdict.notice is not None
    assert rig.result(verdict)["subtype"] == "error_during_execution"
    assert bytes(rig.keys.outbox) == b""


def test_no_second_esc_once_the_tui_is_idle(tmp_path: Path) -> None:
    """A second Esc on an idle TUI would be a key of its own (a double Esc rewinds)."""
    rig = Rig(tmp_path)
    rig.log.prompt()
    advance(rig.turn, EscPressed(1.0))
    rig.keys.last_output = 1.1
    rig.screen = IDLE
    assert rig.step(1.1) is not None
    assert bytes(rig.keys.outbox) == b""


def test_esc_again_three_times_at_most_then_the_settle_time(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.log.prompt()
    advance(rig.turn, EscPressed(0.0))
    rig.screen = BUSY
    pressed = 0
    now = 0.0
    while now < 10.0:
        now = round(now + 0.1, 1)
        rig.keys.last_output = now  # the spinner redraws all the time
        if rig.step(now) is not None:
            break
        pressed += len(rig.keys.outbox)
        rig.keys.outbox.clear()
    assert pressed == 3
    assert rig.turn.interrupt_at is not None
    assert now == pytest.approx(rig.turn.interrupt_at + INTERRUPT_SETTLE)


def api_error(log: Log, text: str) -> None:
    """Claude Code's own error answer (2.1.332's refusal of a prompt over its window)."""
    log.add(
        "assistant",
        isApiErrorMessage=True,
        message={
            "id": f"err{log.n}",
            "role": "assistant",
            "model": "<synthetic>",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "stop_sequence",
            "usage": {"input_tokens": 0, "output_tokens": 0},
        },
    )


def first_verdict(rig: Rig, start: float, end: float) -> Optional[Tuple[float, Verdict]]:
    """When a step every 0.05 s from `start` first gives a verdict, and the verdict
    (None: none by `end`)."""
    for tick in range(int((end - start) / 0.05) + 1):
        now = start + tick * 0.05
        verdict = rig.step(now)
        if verdict is not None:
            return now, verdict
    return None


def test_an_api_error_without_any_hook_ends_the_turn_soon_after_the_tui_goes_quiet(
    tmp_path: Path,
) -> None:
    """2.1.332 refuses a prompt over its context window before any request: the
    transcript has its error as the answer, and no Stop, StopFailure or turn_duration
    ever comes. The run ends as `claude -p` does (an error result, "blocking_limit") once
    the TUI has been quiet and idle a while: 2.5 s after its last frame (1.5 s quiet,
    then 1 s), written out, never later than 3 s, and never at --timeout."""
    rig = Rig(tmp_path)
    rig.log.prompt()
    api_error(rig.log, "Prompt is too long")
    rig.keys.last_output = 10.0
    ended = first_verdict(rig, 10.0, 30.0)
    assert ended is not None and 12.4 <= ended[0] <= 13.0, ended
    result = rig.result(ended[1])
    assert (result["is_error"], result["result"]) == (True, "Prompt is too long")
    assert result["terminal_reason"] == "blocking_limit"


def test_an_api_error_while_the_tui_is_busy_or_drawing_does_not_end_the_turn(
    tmp_path: Path,
) -> None:
    """The other side: a 5xx the TUI retries shows its busy footer (and keeps drawing);
    the turn is not over while it does."""
    rig = Rig(tmp_path)
    rig.log.prompt()
    api_error(rig.log, "API Error: 529 Overloaded")
    rig.keys.last_output = 10.0
    rig.screen = [*IDLE[:3], "  ✻ Retrying… (esc to interrupt)"]
    assert first_verdict(rig, 10.0, 20.0) is None
    rig.screen = IDLE
    for tick in range(100):  # idle, but a frame every 0.5 s
        now = 20.0 + tick * 0.1
        if tick % 5 == 0:
            rig.keys.last_output = now
        assert rig.step(now) is None, now
    assert first_verdict(rig, 30.0, 33.0) is not None  # quiet at last


def test_a_turn_cut_short_lists_its_denials(tmp_path: Path) -> None:
    """--max-turns ends the turn with an error result that still lists the tool use
    a hook denied (claude -p's error results carry permission_denials); a tool that ran
    is not listed."""
    rig = Rig(tmp_path, Rules(max_turns=2, others_stop_hooks=False))
    rig.log.prompt()
    for use, command, denied in (("tu-ok", "ls", False), ("tu-no", "rm -rf /", True)):
        rig.log.add(
            "assistant",
            message={
                "id": f"msg-{use}",
                "role": "assistant",
                "model": MODEL,
                "content": [
                    {"type": "tool_use", "id": use, "name": "Bash", "input": {"command": command}}
                ],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 5, "output_tokens": 5},
            },
        )
        if denied:
            decision = {"type": "hook_permission_decision", "decision": "deny", "toolUseID": use}
            rig.log.add("attachment", attachment=decision)
        block = {"type": "tool_result", "tool_use_id": use, "is_error": denied}
        rig.log.add("user", message={"role": "user", "content": [block]})
    result = rig.result(rig.step(1.0))
    assert (result["subtype"], result["num_turns"]) == ("error_max_turns", 3)
    assert result["permission_denials"] == [
        {"tool_name": "Bash", "tool_use_id": "tu-no", "tool_input": {"command": "rm -rf /"}}
    ]


def test_a_turn_closed_without_any_stop_hook_fails_loudly(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.log.prompt()
    rig.log.answer("x")
    rig.log.close()
    assert rig.step(1.0) is None
    assert rig.step(1.0 + MISSING_HOOK_GRACE - 0.1) is None
    with pytest.raises(ClaudePrintError, match="no Stop/StopFailure hook arrived"):
        rig.step(1.0 + MISSING_HOOK_GRACE)


@pytest.mark.parametrize(("message", "ends"), [("tests failed", True), ("claude-print: x", False)])
def test_a_user_hook_s_continue_false_ends_the_turn_ours_does_not(
    tmp_path: Path, message: str, ends: bool
) -> None:
    """A user's tool hook that answers continue:false closes the turn with no Stop hook:
    claude -p's result is what there is. Ours (max-turns, budget) end it their own way."""
    rig = Rig(tmp_path)
    rig.log.prompt()
    rig.log.tool_round()
    rig.log.add("attachment", attachment={"type": "hook_stopped_continuation", "message": message})
    rig.log.close()
    verdict = rig.step(1.0)
    assert (verdict is not None) == ends
    if verdict is not None:
        assert rig.result(verdict)["subtype"] == "success"


def test_wake_at_polls_after_stop_and_rests_otherwise(tmp_path: Path) -> None:
    rig = Rig(tmp_path, Rules(streams=True))
    rig.watch.next_tail = 5.0
    assert rig.watch.wake_at(1.0) == 5.0  # streaming: the next transcript read
    rig.stop(1.0)
    assert rig.watch.wake_at(1.0) < 1.05
    quiet = Rig(tmp_path / "q")
    assert quiet.watch.wake_at(1.0) == 2.0  # nothing to stream: the child's liveness
