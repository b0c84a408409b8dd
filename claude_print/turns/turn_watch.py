"""The turn from its submission to its verdict.

After the prompt went in, the pump calls `step(now)` after every batch of I/O. (Stop and
denials are recorded on the `Turn` itself: they can come before this phase starts, while
an argv prompt's boot is still being read.) The turn is over when:

- Stop or StopFailure came and the transcript holds the whole turn (or the grace for it
  ran out), unless a user's Stop hook that blocks sends the turn on;
- the transcript shows it ended without an answer (a hook stopped it, a slash command
  answered by itself), or it went over --max-turns, the budget or the structured-output
  retries;
- an interrupt's Esc stopped it (stream-json input).

The verdict names the summary and how to build the result (`turn_end`); the orchestrator
settles the cost and emits. What cannot end (no transcript, a dialog no hook answers, a
transcript that closed the turn without any Stop hook) fails with the screen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, List, NamedTuple, Optional

from claude_print import contract
from claude_print.errors import Fail
from claude_print.hooks.hook_events import HookWatch
from claude_print.tui import screens
from claude_print.tui.boot import SLASH_HINT
from claude_print.tui.delivery import GRACE as PROMPT_ARRIVAL_GRACE
from claude_print.tui.keys import Keyboard
from claude_print.turns import turn_end
from claude_print.turns.transcript_feed import TranscriptFeed
from claude_print.turns.turn import Turn
from claude_print.turns.turn_end import Ending
from claude_print.turns.turn_state import (
    INTERRUPTING,
    OVER_BUDGET,
    STOPPED,
    TRANSCRIPT_SETTLE,
    EscPressed,
    advance,
)

if TYPE_CHECKING:
    from claude_print.records.summary import TurnSummary

TRANSCRIPT_POLL = 0.01  # the TUI flushes its transcript queue every 100 ms
TAIL_INTERVAL = 0.05
MISSING_HOOK_GRACE = 10.0  # a finished turn without a Stop hook: drift, not a hang
STOP_SUMMARY_WAIT = 1.0  # --include-hook-events: how long a Stop waits for the hooks' summary
STUCK_DIALOG_QUIET = 1.5  # a turn this quiet is read off the screen for a dialog no hook answers
# After Stop, a TUI this quiet is read off the screen: idle there, the turn is over.
STOP_CLOSE_QUIET = 1.5
INTERRUPT_SETTLE = 3.0  # after Esc, the interruption is reported after this at the latest
# An Esc that reaches the TUI before its turn is under way (an SDK program interrupting
# the instant system/init arrives, on a loaded 2.1.197) is lost: the busy footer stays.
# The TUI drawing it over this long after its first frame since the Esc had that Esc
# in its input all along (its event loop ran meanwhile): Esc again, a few times at most.
# Not sooner: a second Esc on an idle TUI is a key of its own (a double Esc rewinds).
ESC_AGAIN_AFTER = 0.5
ESC_TRIES = 3
# An interrupt is pressed once the TUI has recorded its turn's prompt: an Esc between
# the prompt's Enter and that record drops the turn unrecorded (2.1.332: 1 run in 4 with
# a prompt and an interrupt sent at once), where the CLI's transcript has the prompt. A
# prompt the TUI never records (a hook blocked it) gets its Esc after this.
HELD_INTERRUPT_LIMIT = 3.0
# After Claude Code's own API error record, how long the TUI stays idle before the turn
# counts as over without a StopFailure hook.
API_ERROR_HOOK_GRACE = 1.0
PROMPT_TOO_LONG = "Prompt is too long"  # the TUI's own refusal of an oversized prompt
# The reasons of claude-print's own `continue: false` answers start with this.
OWN_STOP_PREFIX = "claude-print:"

Build = Callable[[turn_end.Context], Ending]


class Verdict(NamedTuple):
    summary: TurnSummary
    build: Build  # the result object, given the context at the end
    notice: Optional[Dict[str, Any]] = None  # a raw line before the result (interrupted)


class Rules(NamedTuple):
    """The run's limits and what may run beside our hooks, fixed at the start."""

    max_turns: int = 0  # 0: none
    max_budget_usd: Optional[float] = None
    structured_max: Optional[int] = None  # --json-schema: rejected calls allowed
    others_stop_hooks: bool = True  # a Stop of ours may not end the turn
    awaits_stop_summary: bool = False  # --include-hook-events on stream-json
    streams: bool = False  # stream-json output: records go out as they come


def ended_early(
    message: Optional[str], trace: Callable[[str], None], summary: Optional[TurnSummary] = None
) -> Verdict:
    """No answer: a hook stopped the turn, or a command answered without a model turn."""
    from claude_print.records.summary import TurnSummary

    trace(f"the turn ended without an answer{': ' + message if message else ''}")
    done = summary or TurnSummary(result_text=message or "", num_turns=0)
    return Verdict(done, lambda ctx: turn_end.stopped_by_hook(done, ctx, message))


# How the TUI answers a command name it does not know ("Unknown skill: x" on 2.1.332,
# "Unknown command: /x" on 2.1.197).
UNKNOWN_COMMAND = ("Unknown skill", "Unknown command")


def prompt_recorded(transcript: TranscriptFeed, turn: Turn) -> bool:
    """The TUI's transcript has the turn's prompt (an Esc now interrupts a recorded turn)."""
    from claude_print.records.transcript import is_human_prompt

    transcript.poll()
    return any(is_human_prompt(record) for record in transcript.of(turn))


class TurnWatch:
    def __init__(
        self,
        turn: Turn,
        rules: Rules,
        transcript: TranscriptFeed,
        keyboard: Keyboard,
        screen: Callable[[], List[str]],
        child_gone: Callable[[], bool],
        hook_watch: HookWatch,
        asking: Callable[[], bool],
        interrupts: List[str],
        fail: Fail,
        trace: Callable[[str], None],
        tui_status: Callable[[], Optional[str]] = lambda: None,
    ) -> None:
        self.turn = turn
        self.rules = rules
        self.transcript = transcript
        self.keyboard = keyboard
        self.screen = screen
        self.child_gone = child_gone
        self.hook_watch = hook_watch
        self.asking = asking  # one of our hooks waits for its answer
        self.interrupts = interrupts  # the channel's pending `interrupt` requests
        self.fail = fail
        self.trace = trace
        self.tui_status = tui_status  # the TUI's own "busy" / "idle" (session_status)
        self.next_tail = 0.0
        self.escs = 0  # Esc presses for an interrupt beyond the runner's first
        self.drawn_after_esc: Optional[float] = None  # the TUI's first frame since the Esc

    # --- the clock -------------------------------------------------------------

    def wake_at(self, now: float) -> float:
        """When the pump must call `step` again even if nothing happens."""
        if self.turn.state is STOPPED:
            return now + TRANSCRIPT_POLL
        if self.turn.interrupt_at is None and self.interrupts:
            return now + TAIL_INTERVAL  # a held interrupt: until the prompt is recorded
        rules = self.rules
        if self.transcript.tail is not None and (
            rules.streams or rules.max_turns or rules.structured_max is not None
        ):
            return self.next_tail
        return now + 1.0  # the child's liveness

    # --- the step --------------------------------------------------------------

    def step(self, now: float) -> Optional[Verdict]:
        turn = self.turn
        if turn.state is OVER_BUDGET:
            return self._budget_exhausted(self._summary())
        if turn.state is STOPPED:
            return self._after_stop(now)
        if turn.interrupt_at is None and self.interrupts:
            self._press_held_interrupt(now)
        if turn.state is INTERRUPTING:
            verdict = self._interrupted(now)
            if verdict is not None:
                return verdict
        if now < self.next_tail:
            return None
        self.next_tail = now + TAIL_INTERVAL
        return self._read_transcript(now)

    def _after_stop(self, now: float) -> Optional[Verdict]:
        gone = self.child_gone()
        if not gone and (self.hook_watch.running(now) or self._stop_hooks_pending(now)):
            return None  # claude -p reports the user's Stop hooks before the result
        if not gone and self._goes_on(now):
            return None
        return self._try_finish(force=gone or now >= self.turn.settle_until)

    def _read_transcript(self, now: float) -> Optional[Verdict]:
        from claude_print.records.transcript import hook_stopped, local_output, prompt_stopped

        turn = self.turn
        self.transcript.poll()
        records = self.transcript.of(turn)
        stopped = prompt_stopped(records)
        if stopped is not None:
            return ended_early(stopped, self.trace)
        said = local_output(records) if turn.prompt.lstrip().startswith("/") else None
        if said is not None and said.startswith(UNKNOWN_COMMAND):
            # Only custom commands reach the TUI (slash.decide): this one is not there,
            # and claude -p would have sent the prompt to the model as text.
            raise self.fail(
                f"Claude Code has no command by that name here (the TUI said: {said}); "
                "claude -p would send the prompt to the model as text",
                self.screen(),
            )
        if said is not None:  # a custom command the TUI ran itself: its 0-turn result
            return ended_early(said, self.trace)
        self._check_prompt_arrived(now)
        self._check_stuck_dialog(now)
        summary = self._summary()
        if self.rules.max_turns and summary.num_turns > self.rules.max_turns:
            return self._max_turns(summary)
        if self.rules.structured_max is not None:
            verdict = self._structured_end(summary)
            if verdict is not None:
                return verdict
        if hook_stopped(records, OWN_STOP_PREFIX):
            return ended_early(None, self.trace, summary)
        if summary.is_api_error and self._ended_without_hook(now):
            return self._api_error_without_hook(summary)
        if summary.turn_closed:
            # The transcript says the turn is over, yet no Stop/StopFailure came.
            turn.closed_at = turn.closed_at or now
            if now - turn.closed_at >= MISSING_HOOK_GRACE:
                raise self.fail(
                    f"the turn ended {MISSING_HOOK_GRACE:g}s ago in the transcript but no "
                    "Stop/StopFailure hook arrived: Claude Code's hooks may have changed",
                    self.screen(),
                )
        return None

    def _ended_without_hook(self, now: float) -> bool:
        """The transcript's last answer is Claude Code's own API error, and no Stop or
        StopFailure came: 2.1.332 refuses a prompt over its context limit before any
        request ("Prompt is too long") and fires neither hook nor writes turn_duration.
        Over once the TUI has been quiet a while with its input box idle (a retry of a
        5xx shows its busy footer and keeps it drawing)."""
        turn = self.turn
        quiet = now - self.keyboard.last_output >= STOP_CLOSE_QUIET
        if not quiet or not screens.is_idle(self.screen()):
            turn.closed_at = None
            return False
        turn.closed_at = turn.closed_at or now
        return now - turn.closed_at >= API_ERROR_HOOK_GRACE

    def _api_error_without_hook(self, summary: TurnSummary) -> Verdict:
        from claude_print.hooks.relay import HookEvent

        self.trace("the turn ended on an API error without a Stop/StopFailure hook")
        failure = HookEvent(contract.HOOK_STOP_FAILURE, {})
        # claude -p's terminal_reason for its own refusal (measured on 2.1.332)
        reason = "blocking_limit" if summary.result_text == PROMPT_TOO_LONG else None
        return Verdict(summary, lambda ctx: turn_end.finished(summary, ctx, failure, reason))

    # --- after Stop ------------------------------------------------------------

    def _goes_on(self, now: float) -> bool:
        """After Stop, the TUI still runs the other Stop hooks, and one that blocks sends
        the turn on (its reason goes to the model, as in `claude -p`). The turn is over
        once the transcript closes it (`turn_duration`, written after every Stop hook);
        a TUI quiet and idle without one has drifted: finish with what there is."""
        turn = self.turn
        if turn.stop_event is None or turn.stop_event.name != contract.HOOK_STOP:
            return False
        if not self.rules.others_stop_hooks:
            return False
        self.transcript.poll()
        if self._summary().turn_closed:
            return False
        quiet = now - self.keyboard.last_output >= STOP_CLOSE_QUIET
        if not quiet or not screens.is_idle(self.screen()):
            turn.settle_until = now + TRANSCRIPT_SETTLE
            return True
        self.trace("Stop came and the TUI is idle, but no turn_duration record closed the turn")
        return False

    def _stop_hooks_pending(self, now: float) -> bool:
        """--include-hook-events: the user's Stop hooks run beside ours, and a run that
        starts late would miss the result. The TUI writes a `stop_hook_summary` record once
        all have ended (not at all on 2.1.331 when ours is the only one): wait for it a
        little."""
        turn = self.turn
        if not self.rules.awaits_stop_summary:
            return False
        if turn.stop_event is None or turn.stop_event.name != contract.HOOK_STOP:
            return False
        self.transcript.poll()
        if any(r.get("subtype") == contract.STOP_HOOK_SUMMARY for r in self.transcript.of(turn)):
            return False
        return now < turn.stop_at + STOP_SUMMARY_WAIT

    def _try_finish(self, force: bool) -> Optional[Verdict]:
        """The verdict once the turn is on disk (or, with `force`, with what there is)."""
        event = self.turn.stop_event
        assert event is not None
        self.transcript.poll()
        summary = self._summary()
        if not summary.complete and not force:
            return None
        if self.rules.max_turns and summary.num_turns > self.rules.max_turns:
            return self._max_turns(summary)
        budget = self.rules.max_budget_usd
        if budget is not None and summary.complete and summary.total_cost_usd >= budget:
            return self._budget_exhausted(summary)
        if not summary.complete:
            where = self.transcript.path or "no transcript path"
            self.trace(f"transcript incomplete ({where}); using the hook's last_assistant_message")
        return Verdict(summary, lambda ctx: turn_end.finished(summary, ctx, event))

    # --- the ways a turn is cut short ------------------------------------------

    def _structured_end(self, summary: TurnSummary) -> Optional[Verdict]:
        """--json-schema: the turn is over once the server accepted a call (success) or
        rejected the last allowed one (error_max_structured_output_retries)."""
        from claude_print.mcp import mcp_structured as ms

        value = ms.structured_result(summary.tool_uses, summary.tool_results)
        if value is not None:
            return Verdict(summary, lambda ctx: turn_end.structured(summary, ctx, value))
        failed = ms.failed_attempts(summary.tool_uses, summary.tool_results)
        limit = self.rules.structured_max
        if limit is None or failed < limit:
            return None
        records = self.transcript.of(self.turn)
        return Verdict(
            summary, lambda ctx: turn_end.structured_retries(summary, ctx, failed, records)
        )

    def _max_turns(self, summary: TurnSummary) -> Verdict:
        limit = self.rules.max_turns
        return Verdict(summary, lambda ctx: turn_end.max_turns(summary, ctx, limit))

    def _budget_exhausted(self, summary: TurnSummary) -> Verdict:
        budget = self.rules.max_budget_usd
        assert budget is not None
        return Verdict(summary, lambda ctx: turn_end.budget_exhausted(summary, ctx, budget))

    def _interrupted(self, now: float) -> Optional[Verdict]:
        """After Esc: the TUI ends the turn without a Stop hook; its transcript records
        the interruption. The result is `claude -p`'s for an interrupted turn, after the
        interruption as a user message (raw, as the CLI prints it: conforming would give
        it a tool result's keys)."""
        from claude_print.sdk.user_events import interruption_event, is_interruption

        turn = self.turn
        assert turn.interrupt_at is not None
        self.transcript.poll()
        stopped = any(is_interruption(record) for record in self.transcript.of(turn))
        if not stopped and self.keyboard.last_output > turn.interrupt_at:
            # A frame drawn after Esc (an older one may predate the busy footer) that shows
            # the idle input box, with the TUI not saying it is busy: the turn was dropped
            # before any answer.
            stopped = screens.is_idle(self.screen()) and self.tui_status() != "busy"
        if not stopped and self._esc_lost(now):
            self.escs += 1
            self.trace("interrupt: the TUI is still busy; pressing Esc again")
            advance(turn, EscPressed(now))
            self.drawn_after_esc = None
            self.keyboard.press_now(contract.KEY_ESCAPE, now)
            return None
        if not stopped and now - turn.interrupt_at < INTERRUPT_SETTLE:
            return None
        self.trace("interrupted" if stopped else "no sign of the interruption; reporting it")
        self.interrupts.clear()
        summary = self._summary()
        notice = interruption_event(self.transcript.session_id or "")
        return Verdict(summary, lambda ctx: turn_end.interrupted(summary, ctx), notice)

    def _press_held_interrupt(self, now: float) -> None:
        """The Esc of an interrupt held until the TUI recorded the turn's prompt."""
        turn = self.turn
        recorded = prompt_recorded(self.transcript, turn)
        if recorded or now - (turn.submitted_at or now) >= HELD_INTERRUPT_LIMIT:
            why = "the prompt is recorded" if recorded else "the prompt was never recorded"
            self.trace(f"interrupt: pressing Esc ({why})")
            advance(turn, EscPressed(now))
            self.keyboard.press_now(contract.KEY_ESCAPE, now)

    def _esc_lost(self, now: float) -> bool:
        """The TUI still says it is busy (its busy footer, or its own session status)
        `ESC_AGAIN_AFTER` past its first frame since the Esc, or twice that long after the
        Esc when it drew nothing (a reduced-motion spinner may not redraw)."""
        turn = self.turn
        if turn.interrupt_at is None or self.escs >= ESC_TRIES:
            return False
        drawn = self.keyboard.last_output
        if drawn > turn.interrupt_at and self.drawn_after_esc is None:
            self.drawn_after_esc = drawn
        late = now - turn.interrupt_at >= 2 * ESC_AGAIN_AFTER
        settled = (
            self.drawn_after_esc is not None and drawn - self.drawn_after_esc >= ESC_AGAIN_AFTER
        )
        if not late and not settled:
            return False
        busy = any(contract.BUSY_FOOTER in line for line in self.screen())
        return busy or self.tui_status() == "busy"

    # --- what cannot end -------------------------------------------------------

    def _check_stuck_dialog(self, now: float) -> None:
        """A dialog that no hook answers would hold the turn until the timeout: once the
        TUI has been quiet a while (and none of our hooks is waiting), read the screen."""
        quiet = self.keyboard.last_output
        if self.asking() or now - quiet < STUCK_DIALOG_QUIET or self.turn.dialog_checked == quiet:
            return
        lines = self.screen()
        state = screens.classify(lines)
        if state.kind == "permission_dialog" and now - quiet < contract.HOOK_TIMEOUT_SECS:
            # Our PermissionRequest hook answers this dialog, which the TUI draws while the
            # hook runs: on a loaded machine the hook can take longer than the quiet gap.
            # Stuck only past the hook's own time limit (read again until then).
            return
        self.turn.dialog_checked = quiet
        if state.kind in screens.BLOCKING_ADVICE and state.selected is not None:
            raise self.fail(screens.BLOCKING_ADVICE[state.kind], lines)

    def _check_prompt_arrived(self, now: float) -> None:
        """The TUI logs a submitted prompt at once; silence means it never got it."""
        turn = self.turn
        path = self.transcript.path
        if self.transcript.of(turn) or turn.hooks_seen or path is None or turn.submitted_at is None:
            return
        if now - turn.submitted_at >= PROMPT_ARRIVAL_GRACE:
            hint = SLASH_HINT if turn.prompt.startswith("/") else ""
            raise self.fail(
                f"the prompt did not reach Claude Code within {PROMPT_ARRIVAL_GRACE:g}s "
                f"(no transcript at {path}{hint})",
                self.screen(),
            )

    def _summary(self) -> TurnSummary:
        return self.transcript.summary(self.turn)
