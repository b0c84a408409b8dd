"""The small pieces the pump drives, each without a PTY: the keyboard's quiet gap, the
boot phase, the MCP wait, the results' totals, the signal pipe."""

from __future__ import annotations

import os
import signal
from typing import Any, Dict, List, Optional, Tuple, cast

import pytest
from harness import TESTS

from claude_print import contract
from claude_print.errors import ClaudePrintError
from claude_print.hooks.relay import Relay
from claude_print.printing.emit import Emitter
from claude_print.run.signals import Interrupted, SignalPipe
from claude_print.tui.boot import READY, STARTUP_TIMEOUT, Boot, StartupScreens
from claude_print.tui.keys import Keyboard
from claude_print.tui.terminal import Screen
from claude_print.turns.mcp_wait import McpWait
from claude_print.turns.results import Results
from claude_print.turns.turn_end import Ending

SCREENS = TESTS / "data" / "screens"


def capture(name: str) -> List[str]:
    screen = Screen(contract.WINDOW_COLS, contract.WINDOW_ROWS)
    screen.feed((SCREENS / name).read_bytes())
    return screen.lines()


def fail(what: str, lines: List[str]) -> ClaudePrintError:
    return ClaudePrintError(what)


# --- Keyboard ------------------------------------------------------------------


def test_a_key_waits_for_the_tui_to_be_quiet_and_goes_alone() -> None:
    keys = Keyboard(0.0)
    keys.press(b"\r")
    keys.press(b"\x07")
    keys.last_output = 1.0
    keys.flush(1.0 + contract.QUIET_BEFORE_KEYS / 2)
    assert not keys.outbox  # the TUI drew a moment ago
    assert keys.next_key_at() == 1.0 + contract.QUIET_BEFORE_KEYS
    keys.flush(1.0 + contract.QUIET_BEFORE_KEYS)
    assert bytes(keys.outbox) == b"\r"
    keys.flush(5.0)
    assert bytes(keys.outbox) == b"\r"  # the next one only once this one is written
    keys.written(1)
    keys.flush(5.0 + contract.QUIET_BEFORE_KEYS)
    assert bytes(keys.outbox) == b"\x07" and not keys.pending


def test_probe_replies_and_esc_skip_the_line() -> None:
    keys = Keyboard(0.0)
    keys.press(b"\r")
    keys.reply(b"\x1b[1;1R")
    keys.press_now(contract.KEY_ESCAPE, 0.0)
    assert bytes(keys.outbox) == b"\x1b[1;1R" + contract.KEY_ESCAPE
    assert keys.pending == [b"\r"] and keys.busy


# --- Boot ----------------------------------------------------------------------


def boot(argv_prompt: Optional[str] = None) -> Boot:
    return Boot(StartupScreens(False, fail, print), argv_prompt, 0.0, fail, print)


def test_boot_is_ready_at_the_input_box() -> None:
    assert boot().step(1.0, capture("ready.bin"), Keyboard(0.0), False) == READY


def test_an_argv_prompt_whose_transcript_exists_has_gone_in() -> None:
    """The argv prompt may be submitted before the box is read: its transcript says so."""
    assert boot("hi").step(1.0, [], Keyboard(0.0), True) == READY
    assert boot(None).step(1.0, [], Keyboard(0.0), True) is None


def test_boot_answers_the_trust_dialog_after_the_quiet_gap() -> None:
    lines = capture("trust.bin")
    keys = Keyboard(0.0)
    keys.last_output = 1.0
    assert boot().step(1.0, lines, keys, False) is None  # still mounting
    key = boot().step(1.0 + contract.QUIET_BEFORE_DIALOG_KEYS, lines, keys, False)
    assert key == contract.KEY_ENTER


def test_a_startup_that_never_shows_the_box_fails_in_time() -> None:
    phase = boot()
    assert phase.step(STARTUP_TIMEOUT - 0.1, [], Keyboard(0.0), False) is None
    with pytest.raises(ClaudePrintError, match="drew nothing"):
        phase.step(STARTUP_TIMEOUT, [], Keyboard(0.0), False)


def test_a_slash_prompt_that_opens_a_panel_fails_fast() -> None:
    with pytest.raises(ClaudePrintError, match="slash command"):
        boot("/model").step(20.0, ["some panel"], Keyboard(0.0), False)
    assert boot("plain").step(20.0, ["some panel"], Keyboard(0.0), False) is None


# --- McpWait -------------------------------------------------------------------


class FakeRelay:
    def __init__(self, waits: int) -> None:
        self.mcp_waits = waits
        self.pending = waits
        self.settled = False

    def mcp_pending(self) -> int:
        return self.pending

    def mcp_settled(self) -> None:
        self.settled = True


def test_the_first_prompt_waits_for_the_servers_then_a_moment_more() -> None:
    relay = FakeRelay(2)
    wait = McpWait(cast(Relay, relay), 0.0, print)
    assert wait.holding(1.0)
    relay.pending = 0
    assert wait.holding(2.0)  # listed: the TUI takes the tools in
    assert wait.holding(2.0 + contract.MCP_SETTLE_SECS - 0.01)
    assert not wait.holding(2.0 + contract.MCP_SETTLE_SECS + 0.001)
    assert relay.settled
    relay.pending = 5
    assert not wait.holding(3.0)  # once settled, for good


def test_servers_that_never_come_up_hold_the_prompt_a_bounded_time() -> None:
    relay = FakeRelay(1)
    wait = McpWait(cast(Relay, relay), 0.0, print)
    assert wait.holding(contract.MCP_WAIT_SECS - 0.1)
    assert wait.holding(contract.MCP_WAIT_SECS)  # given up on: the settle moment
    assert not wait.holding(contract.MCP_WAIT_SECS + contract.MCP_SETTLE_SECS + 0.001)


def test_no_servers_no_wait() -> None:
    assert not McpWait(cast(Relay, FakeRelay(0)), 0.0, print).holding(0.0)


# --- Results -------------------------------------------------------------------


def result(cost: float) -> Dict[str, Any]:
    return {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "total_cost_usd": cost,
        "modelUsage": {"m": {"inputTokens": 1, "costUSD": cost}},
        "result_index": 0,
        "model_usage_since_last_result": {},
    }


def test_several_turns_count_and_add_up(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    results = Results(Emitter("stream-json", True), print, multi_turn=True)
    assert results.emit(Ending(result(0.5), 0)) == 0
    assert results.emit(Ending(result(0.25), 1)) == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if "{" in line]
    printed = [line for line in lines if line.get("type") == "result"]
    assert [r.get("result_index") for r in printed] == [0, 1]
    assert printed[1]["total_cost_usd"] == pytest.approx(0.75)
    assert printed[1]["modelUsage"]["m"]["inputTokens"] == 2


def turn_result(cost: float, tokens: Dict[str, int]) -> Dict[str, Any]:
    """A turn's result as the turn builds it: its own usage, per model."""
    usage = {m: {"inputTokens": n, "outputTokens": 2 * n} for m, n in tokens.items()}
    return {**result(cost), "modelUsage": usage}


def test_each_result_says_its_own_usage_since_the_last_and_the_running_total(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """stream-json input, as `claude -p` (2.1.309 on): `modelUsage` and `total_cost_usd`
    are the session's so far, `model_usage_since_last_result` the turn's own."""
    import json

    results = Results(Emitter("stream-json", True), print, multi_turn=True)
    results.emit(Ending(turn_result(0.5, {"m": 3}), 0))
    results.emit(Ending(turn_result(0.25, {"m": 5, "n": 7}), 0))
    results.emit(Ending(turn_result(0.125, {"n": 11}), 0))
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if "{" in line]
    printed = [line for line in lines if line.get("type") == "result"]

    def tokens(usage: Dict[str, Any]) -> Dict[str, Tuple[int, int]]:
        return {m: (u["inputTokens"], u["outputTokens"]) for m, u in usage.items()}

    since = [tokens(r["model_usage_since_last_result"]) for r in printed]
    assert since == [{"m": (3, 6)}, {"m": (5, 10), "n": (7, 14)}, {"n": (11, 22)}]
    totals = [tokens(r["modelUsage"]) for r in printed]
    assert totals == [
        {"m": (3, 6)},
        {"m": (8, 16), "n": (7, 14)},
        {"m": (8, 16), "n": (18, 36)},
    ]
    assert [r["total_cost_usd"] for r in printed] == pytest.approx([0.5, 0.75, 0.875])


def test_the_running_model_usage_adds_counts_not_the_model_s_facts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Across a session's results the counts add up; a model's context window and
    output limit are what they are, in every result (written out)."""
    import json

    facts = {"contextWindow": 200000, "maxOutputTokens": 64000}
    results = Results(Emitter("stream-json", True), print, multi_turn=True)
    for n in (3, 5, 7):
        turn = result(0.5)
        turn["modelUsage"] = {"m": {"inputTokens": n, "webSearchRequests": 1, **facts}}
        results.emit(Ending(turn, 0))
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if "{" in line]
    printed = [line for line in lines if line.get("type") == "result"]
    usage = [r["modelUsage"]["m"] for r in printed]
    assert [u["inputTokens"] for u in usage] == [3, 8, 15]
    assert [u["webSearchRequests"] for u in usage] == [1, 2, 3]
    assert [(u["contextWindow"], u["maxOutputTokens"]) for u in usage] == [(200000, 64000)] * 3
    assert printed[2]["model_usage_since_last_result"]["m"]["contextWindow"] == 200000


# --- SignalPipe ----------------------------------------------------------------


def test_a_signal_wakes_the_pipe_and_interrupts_once_restored_after() -> None:
    before = signal.getsignal(signal.SIGTERM)
    pipe = SignalPipe()
    pipe.install()
    try:
        pipe.check()  # nothing yet
        os.kill(os.getpid(), signal.SIGTERM)
        assert os.read(pipe.fd, 16)  # the wakeup byte: select would see it
        with pytest.raises(Interrupted) as caught:
            pipe.check()
        assert caught.value.signum == signal.SIGTERM
    finally:
        pipe.restore()
    assert signal.getsignal(signal.SIGTERM) == before and pipe.fd == -1
