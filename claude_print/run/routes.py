"""Where what the pump reads goes: the TUI's bytes to the screen (`tui_screen`), hooks to
the turn, to the asking hooks (`asking`) or to the delivery, stdin to the control channel
(`stream_input`), a hook's news of the session to the transcript and the stream output
(`stream_out`). It changes the run's state (`run_state.RunState`); the I/O it answers on
(the relay's replies, the keys) is the pump's (`pump.Pump`), which alone reads.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from claude_print import contract
from claude_print.errors import ClaudePrintError
from claude_print.hooks.relay import EDITOR_EVENT, HookEvent
from claude_print.mcp.sdk_mcp import MCP_EVENT
from claude_print.tui import release, screens
from claude_print.tui.tui_screen import failure_message
from claude_print.turns.turn_state import DONE, EscPressed, Stopped, advance
from claude_print.turns.turn_watch import prompt_recorded

if TYPE_CHECKING:
    from claude_print.hooks.hook_events import HookRun
    from claude_print.run.pump import Pump
    from claude_print.run.run_state import RunState


class Routes:
    """The routing of the pump's input into the run's state (runner.Session makes it)."""

    def __init__(self, state: RunState, pump: Pump) -> None:
        self.state = state
        self.pump = pump  # its keys, its relay (answers, the staged prompt), its mode

    def open_transcript(self, path: str) -> None:
        state = self.state
        state.transcript.open(path)
        if state.emitter.streams_events and state.session_id:
            relay = self.pump.relay
            own = relay.dir if relay is not None else ""
            state.stream.open(state.session_id, state.reports_hooks, state.reported_hooks, own)

    def download_files(self, session_id: Optional[str]) -> None:
        state = self.state
        if state.files_pending and session_id is not None:
            state.files_pending = False
            from claude_print.run import file_downloads  # urllib: only when asked for

            file_downloads.download(state.options.files, session_id, state.trace)

    def on_output(self, data: bytes, now: float) -> None:
        if not data:
            return
        state, pump = self.state, self.pump
        pump.keys.last_output = now
        pump.keys.reply(state.tui.feed(data, pump.rendering or pump.keeps_screen))
        if not state.claude_version and pump.rendering and not state.results.count:
            version = screens.claude_version_on_screen(state.tui.lines())
            if version:
                self.learn_version(version, "its welcome banner")

    def learn_version(self, version: str, source: str) -> None:
        """A release learned after the spawn: later phases use its facts."""
        state = self.state
        state.facts = contract.facts_for(version)
        state.emitter.release = version
        state.trace(f"Claude Code {version} (from {source}){contract.drift_note(state.facts)}")

    def on_stdin(self, now: float) -> None:
        state = self.state
        assert state.channel is not None
        turn = state.turn
        busy = turn.submitted_at is not None and turn.state is not DONE
        # A prompt being loaded is a turn the CLI would have under way: its interrupt
        # waits for the Enter (an Esc now would hit the loading box).
        state.channel.take_ready(now, busy or state.delivering is not None)
        if busy:
            self.press_interrupt(now)

    def press_interrupt(self, now: float, why: str = "") -> None:
        state = self.state
        turn = state.turn
        if state.channel is not None and state.channel.interrupts and turn.interrupt_at is None:
            if not prompt_recorded(state.transcript, turn):
                state.trace(f"interrupt: held until the TUI records the prompt{why}")
                return  # the turn's watch presses it (turn_watch.HELD_INTERRUPT_LIMIT)
            state.trace(f"interrupt: pressing Esc{why}")
            advance(turn, EscPressed(now))
            self.pump.keys.press_now(contract.KEY_ESCAPE, now)

    def on_hook(self, event: HookEvent, now: float) -> None:
        state = self.state
        turn = state.turn
        if event.name == EDITOR_EVENT:
            if self.pump.relay is not None:
                # a later $EDITOR (a tool the model runs) is the user's
                self.pump.relay.unstage_prompt()
            if state.delivering is not None:
                state.delivering.editor_done(now)
            return
        if event.name == MCP_EVENT:  # an SDK server's message: not a hook of the turn
            state.asks.add(event, now)
            return
        turn.hooks_seen += 1
        state.trace(f"hook {event.name}" + (f" ({event.error})" if event.error else ""))
        self.learn_session(event.payload)
        if event.reply is not None:
            state.asks.add(event, now)
        elif event.name == contract.HOOK_PERMISSION_REQUEST:
            turn.denied(event.payload)
        elif event.name in (contract.HOOK_STOP, contract.HOOK_STOP_FAILURE):
            if self._stop_of_a_later_turn(event):
                # The TUI already ran the turn it started by itself (background work's
                # notification) before this one's end was read: that turn's, not ours.
                state.later_stops.append(event)
                return
            advance(turn, Stopped(event, now))

    def _stop_of_a_later_turn(self, event: HookEvent) -> bool:
        """A Stop whose `prompt_id` is not the turn's (once the transcript has named
        the turn's prompt): a later turn's."""
        state = self.state
        theirs = event.payload.get("prompt_id")
        if not isinstance(theirs, str) or state.turn.stop_event is None:
            return False
        state.transcript.poll()
        ours = state.transcript.summary(state.turn).prompt_id
        return ours is not None and ours != theirs

    def learn_session(self, payload: Dict[str, Any]) -> None:
        """A hook knows the session (a resumed one gets its id here) and where its
        transcript really is: our guess may differ (HOME, CLAUDE_CONFIG_DIR, --resume)."""
        state = self.state
        session_id = payload.get("session_id")
        if state.session_id is None and isinstance(session_id, str):
            state.transcript.session_id = session_id
            if state.channel is not None:
                state.channel.session_id = session_id
            self.download_files(session_id)
        reported = payload.get("transcript_path")
        if isinstance(reported, str) and state.transcript.path != reported:
            state.trace(f"transcript at {reported}")
            state.turn.first_record = 0
            self.open_transcript(reported)

    def on_hook_run(self, run: HookRun, now: float) -> None:
        """A watched hook of the user's started or ended: its stream-json event, held
        until its place (a tool's hook runs wait for the assistant message that calls the
        tool, which the transcript read that follows may bring)."""
        state = self.state
        state.trace(f"user hook {run.phase}: {run.payload.get('hook_event_name')}")
        state.hook_watch.take(run, now, state.session_id or "")
        state.stream.release_hooks()
        if not self.pump.draining:
            state.transcript.poll()

    def answer(self, event: HookEvent, decision: Optional[Dict[str, Any]]) -> None:
        relay = self.pump.relay
        assert relay is not None
        said = json_preview(decision) if decision else "no decision"
        self.state.trace(f"answered {event.name}: {said}")
        relay.answer(event, decision)

    def screen_error(self, what: str, lines: List[str]) -> ClaudePrintError:
        """A failure with the screen's text and, if it drifted, Claude Code's version."""
        state = self.state
        if not state.claude_version:
            with contextlib.suppress(ClaudePrintError):  # a process start: only on failure
                version = release.claude_version(state.options.claude_binary)
                if version:
                    self.learn_version(version, "its --version")
        return ClaudePrintError(failure_message(what, lines, state.claude_version))


def json_preview(value: Dict[str, Any], limit: int = 300) -> str:
    """A decision for the trace, cut short (an MCP answer can be a whole tool result)."""
    text = str(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"
