"""The session's event loop: the one `select` over the child's PTY, the hook FIFO, stdin
and the signal pipe, and where what it reads goes.

`runner.Session` drives the phases (boot, each turn, the end) and is an EventLoop: each
phase is an object with a `step(now)` that `_pump` calls after every batch of I/O until
it returns a value. The pump alone reads; it routes the TUI's bytes to the screen
(`tui_screen`), hooks to the turn, to the asking hooks (`asking`) or to the delivery,
stdin to the control channel (`stream_input`), a hook's news of the session to the
transcript and the stream output (`stream_out`). What the loop owns (the child, the
relay, the signal pipe) it also closes.
"""

from __future__ import annotations

import contextlib
import select
import time
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    FrozenSet,
    List,
    Optional,
    Sequence,
    TypeVar,
    Union,
)

from claude_print import contract
from claude_print.errors import EXIT_TIMEOUT, ClaudePrintError
from claude_print.hooks.hook_events import HookRun, HookWatch
from claude_print.hooks.relay import EDITOR_EVENT, HookEvent, Relay
from claude_print.mcp.sdk_mcp import MCP_EVENT
from claude_print.options import Options
from claude_print.printing.emit import Emitter, Trace
from claude_print.run.signals import SignalPipe
from claude_print.tui import release, screens
from claude_print.tui.keys import Keyboard, Timed
from claude_print.tui.pty_session import PtyChild
from claude_print.tui.tui_screen import TuiScreen, failure_message
from claude_print.turns.asking import AskingHooks
from claude_print.turns.results import Results
from claude_print.turns.stream_out import StreamOut
from claude_print.turns.transcript_feed import TranscriptFeed
from claude_print.turns.turn import Turn
from claude_print.turns.turn_state import DONE, EscPressed, Stopped, advance
from claude_print.turns.turn_watch import TRANSCRIPT_POLL, TurnWatch, prompt_recorded

if TYPE_CHECKING:
    from claude_print.sdk.stream_input import ControlChannel
    from claude_print.tui.delivery import Delivery

T = TypeVar("T")
TEARDOWN_GRACE = 2.0


class EventLoop:
    """A session's state and its event loop (runner.Session sets the state up)."""

    options: Options
    trace: Trace
    emitter: Emitter
    started: float
    deadline: float  # --timeout, on the monotonic clock
    facts: contract.Facts
    channel: Optional[ControlChannel]  # stream-json input
    relay: Optional[Relay]
    child: Optional[PtyChild]
    tui: TuiScreen
    rendering: bool  # the screen is read (boot, delivery); else bytes are kept
    keeps_screen: bool  # between turns the screen must stay true for the next prompt
    idle_poll: float  # seconds between looks at the files a waiting phase awaits
    keys: Keyboard
    transcript: TranscriptFeed
    stream: StreamOut
    turn: Turn
    delivering: Optional[Delivery]  # the prompt on its way into the box
    watch: Optional[TurnWatch]  # the turn after its submission
    results: Results
    asks: AskingHooks
    files_pending: bool  # --file downloads not made yet
    reports_hooks: bool
    reported_hooks: Optional[FrozenSet[str]]
    hook_watch: HookWatch
    signals: SignalPipe
    relay_pending: List[HookEvent]  # relay lines read, not yet handled
    later_stops: List[HookEvent]  # Stops of a turn the TUI started before ours was over
    draining: bool  # in `_hook_runs_first`

    @property
    def session_id(self) -> Optional[str]:
        return self.transcript.session_id

    @property
    def claude_version(self) -> str:
        return self.facts.version

    @property
    def multi_turn(self) -> bool:
        return self.channel is not None

    # --- setup / teardown -------------------------------------------------

    def close(self) -> None:
        """Shutdown: the child, the transcript (--no-session-persistence), the relay."""
        if self.child is not None:
            code = self.child.terminate(TEARDOWN_GRACE)
            self.trace(f"child {self.child.pid} ended with status {code}")
            self.child = None
        if self.options.no_session_persistence:
            for path in self.transcript.forget():
                self.trace(f"--no-session-persistence: removed {path}")
        if self.relay is not None:
            self.relay.close()
            self.relay = None
        self.signals.restore()

    def _open_transcript(self, path: str) -> None:
        self.transcript.open(path)
        if self.emitter.streams_events and self.session_id:
            own = self.relay.dir if self.relay is not None else ""
            self.stream.open(self.session_id, self.reports_hooks, self.reported_hooks, own)

    def _download_files(self, session_id: Optional[str]) -> None:
        if self.files_pending and session_id is not None:
            self.files_pending = False
            from claude_print.run import file_downloads  # urllib: only when asked for

            file_downloads.download(self.options.files, session_id, self.trace)

    def wait(self, step: Callable[[float], Optional[T]], also: List[int], poll: float = 1.0) -> T:
        """The pump between boot and turn, until `step` has a value; `also`: more
        descriptors whose input wakes it (a keeper's listening socket); `step` is asked
        at least every `poll` seconds."""
        self.rendering = False
        self.keeps_screen = True
        self.idle_poll = poll
        return self._pump(step, also)

    def keyed(
        self, step: Callable[[float], Optional[Union[bytes, str]]], done: str
    ) -> Callable[[float], Optional[bool]]:
        """A phase that answers with keys (boot, delivery, a mode switch) as a pump step:
        its keys wait in line, it is asked again once they are out, `done` ends it."""

        def pumped(now: float) -> Optional[bool]:
            if self.keys.busy:
                return None
            outcome = step(now)
            if isinstance(outcome, Timed):
                self.keys.press_now(outcome, now)
                return None
            if isinstance(outcome, bytes):
                self.keys.press(outcome)
                return None
            return True if outcome == done else None

        return pumped

    # --- the pump -----------------------------------------------------------

    def _pump(self, step: Callable[[float], Optional[T]], also: Sequence[int] = ()) -> T:
        """Run the event loop until `step(now)` returns a value (the phase's outcome)."""
        assert self.child is not None and self.relay is not None
        child, relay, keys = self.child, self.relay, self.keys
        first = True  # a new phase is asked at once, not after the next wake-up
        while True:
            now = time.monotonic()
            self.signals.check()
            if now >= self.deadline:
                raise ClaudePrintError(
                    f"timed out after {self.options.timeout:g}s", EXIT_TIMEOUT, "error_timeout"
                )
            keys.flush(now)
            readers = [child.fd, relay.read_fd, self.signals.fd, *also]
            if self.channel is not None and self.channel.reading:
                readers.append(self.channel.fd)
            writers = [child.fd] if keys.outbox else []
            wait = 0.0 if first else self._wait_time(now)
            first = False
            ready_r, ready_w, _ = select.select(readers, writers, [], wait)
            now = time.monotonic()
            if self.signals.fd in ready_r:
                self.signals.drain()
            if child.fd in ready_r:
                self._on_output(child.read(), now)
            if child.fd in ready_w and keys.outbox:
                keys.written(child.write_some(keys.chunk()))
            if relay.read_fd in ready_r or self.relay_pending:
                self._on_relay(now)
            if self.channel is not None:
                if self.channel.fd in ready_r:
                    self._on_stdin(now)
                self.channel.check_caller()
            if self.asks.waiting:
                self.transcript.poll()
                summary = self.transcript.summary(self.turn)
                self.asks.serve(now, self.turn, summary, self.delivering)
            outcome = step(now)
            if outcome is not None:
                return outcome
            if self._child_gone():
                self._on_child_exit()

    def _wait_time(self, now: float) -> float:
        if self.relay_pending:
            return 0.0
        wake = [self.deadline]
        if self.asks.waiting:
            wake.append(now + TRANSCRIPT_POLL)
        key_at = self.keys.next_key_at()
        if key_at is not None:
            wake.append(key_at)
        watch = self.watch
        if self.rendering:
            wake.append(now + 0.1)  # dialog quiet gaps, screen grace periods, startup deadline
        elif watch is not None and watch.turn is self.turn and self.turn.state is not DONE:
            wake.append(watch.wake_at(now))
        else:
            wake.append(now + self.idle_poll)  # between turns: stdin, hooks, the child
        return max(0.0, min(wake) - now)

    def _on_output(self, data: bytes, now: float) -> None:
        if not data:
            return
        self.keys.last_output = now
        self.keys.reply(self.tui.feed(data, self.rendering or self.keeps_screen))
        if not self.claude_version and self.rendering and not self.results.count:
            version = screens.claude_version_on_screen(self.tui.lines())
            if version:
                self._learn_version(version, "its welcome banner")

    def _learn_version(self, version: str, source: str) -> None:
        """A release learned after the spawn: later phases use its facts."""
        self.facts = contract.facts_for(version)
        self.emitter.release = version
        self.trace(f"Claude Code {version} (from {source}){contract.drift_note(self.facts)}")

    def _on_stdin(self, now: float) -> None:
        assert self.channel is not None
        turn = self.turn
        busy = turn.submitted_at is not None and turn.state is not DONE
        # A prompt being loaded is a turn the CLI would have under way: its interrupt
        # waits for the Enter (an Esc now would hit the loading box).
        self.channel.take_ready(now, busy or self.delivering is not None)
        if busy:
            self._press_interrupt(now)

    def _press_interrupt(self, now: float, why: str = "") -> None:
        turn = self.turn
        if self.channel is not None and self.channel.interrupts and turn.interrupt_at is None:
            if not prompt_recorded(self.transcript, turn):
                self.trace(f"interrupt: held until the TUI records the prompt{why}")
                return  # the turn's watch presses it (turn_watch.HELD_INTERRUPT_LIMIT)
            self.trace(f"interrupt: pressing Esc{why}")
            advance(turn, EscPressed(now))
            self.keys.press_now(contract.KEY_ESCAPE, now)

    def _on_hook(self, event: HookEvent, now: float) -> None:
        turn = self.turn
        if event.name == EDITOR_EVENT:
            if self.relay is not None:
                self.relay.unstage_prompt()  # a later $EDITOR (a tool the model runs) is the user's
            if self.delivering is not None:
                self.delivering.editor_done(now)
            return
        if event.name == MCP_EVENT:  # an SDK server's message: not a hook of the turn
            self.asks.add(event, now)
            return
        turn.hooks_seen += 1
        self.trace(f"hook {event.name}" + (f" ({event.error})" if event.error else ""))
        self._learn_session(event.payload)
        if event.reply is not None:
            self.asks.add(event, now)
        elif event.name == contract.HOOK_PERMISSION_REQUEST:
            turn.denied(event.payload)
        elif event.name in (contract.HOOK_STOP, contract.HOOK_STOP_FAILURE):
            if self._stop_of_a_later_turn(event):
                # The TUI already ran the turn it started by itself (background work's
                # notification) before this one's end was read: that turn's, not ours.
                self.later_stops.append(event)
                return
            advance(turn, Stopped(event, now))

    def _stop_of_a_later_turn(self, event: HookEvent) -> bool:
        """A Stop whose `prompt_id` is not the turn's (once the transcript has named
        the turn's prompt): a later turn's."""
        theirs = event.payload.get("prompt_id")
        if not isinstance(theirs, str) or self.turn.stop_event is None:
            return False
        self.transcript.poll()
        ours = self.transcript.summary(self.turn).prompt_id
        return ours is not None and ours != theirs

    def _learn_session(self, payload: Dict[str, Any]) -> None:
        """A hook knows the session (a resumed one gets its id here) and where its
        transcript really is: our guess may differ (HOME, CLAUDE_CONFIG_DIR, --resume)."""
        session_id = payload.get("session_id")
        if self.session_id is None and isinstance(session_id, str):
            self.transcript.session_id = session_id
            if self.channel is not None:
                self.channel.session_id = session_id
            self._download_files(session_id)
        reported = payload.get("transcript_path")
        if isinstance(reported, str) and self.transcript.path != reported:
            self.trace(f"transcript at {reported}")
            self.turn.first_record = 0
            self._open_transcript(reported)

    def _on_relay(self, now: float) -> None:
        """The relay's lines in the order they came, but for runs of the user's hooks
        that a transcript read takes first (`_hook_runs_first`)."""
        assert self.relay is not None
        self.relay_pending.extend(self.relay.read_events())
        while self.relay_pending:
            event = self.relay_pending.pop(0)
            if event.run is not None:
                self._on_hook_run(event.run, now)
            else:
                self._on_hook(event, now)

    def _hook_runs_first(self) -> None:
        """New transcript records are about to go out: the user's hook runs reported
        before they were written go first, those read and not yet handled included. A
        loaded machine can keep claude-print from its FIFO for longer than the TUI takes
        to run a hook and go on: then the FIFO holds the run's report while the
        transcript already holds what followed it. Other relay lines keep their turn."""
        if self.relay is None or self.draining:
            return
        self.draining = True
        try:
            now = time.monotonic()
            pending = self.relay_pending + self.relay.read_events()
            self.relay_pending = [event for event in pending if event.run is None]
            for event in pending:
                if event.run is not None:
                    self._on_hook_run(event.run, now)
        finally:
            self.draining = False

    def _on_hook_run(self, run: HookRun, now: float) -> None:
        """A watched hook of the user's started or ended: its stream-json event, held
        until its place (a tool's hook runs wait for the assistant message that calls the
        tool, which the transcript read that follows may bring)."""
        self.trace(f"user hook {run.phase}: {run.payload.get('hook_event_name')}")
        self.hook_watch.take(run, now, self.session_id or "")
        self.stream.release_hooks()
        if not self.draining:
            self.transcript.poll()

    def _answer(self, event: HookEvent, decision: Optional[Dict[str, Any]]) -> None:
        assert self.relay is not None
        said = json_preview(decision) if decision else "no decision"
        self.trace(f"answered {event.name}: {said}")
        self.relay.answer(event, decision)

    def _child_gone(self) -> bool:
        return self.child is None or self.child.gone()

    def _on_child_exit(self) -> None:
        assert self.child is not None
        self.tui.keep(self.child.last_words())
        code = self.child.terminate(0.5)
        self.child = None
        lines = self.tui.lines()
        # A screen with advice (first-run connectivity, say) the TUI exited on before
        # claude-print read it (a loaded machine): the advice, not only the exit.
        advice = screens.BLOCKING_ADVICE.get(screens.classify(lines).kind)
        what = f"Claude Code exited (status {code}) before answering"
        raise self._screen_error(f"{advice} ({what})" if advice else what, lines)

    def _screen_error(self, what: str, lines: List[str]) -> ClaudePrintError:
        """A failure with the screen's text and, if it drifted, Claude Code's version."""
        if not self.claude_version:
            with contextlib.suppress(ClaudePrintError):  # a process start: only on failure
                version = release.claude_version(self.options.claude_binary)
                if version:
                    self._learn_version(version, "its --version")
        return ClaudePrintError(failure_message(what, lines, self.claude_version))


def json_preview(value: Dict[str, Any], limit: int = 300) -> str:
    """A decision for the trace, cut short (an MCP answer can be a whole tool result)."""
    text = str(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"
