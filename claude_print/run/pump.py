"""The run's I/O owner: the one `select` over the child's PTY, the hook FIFO, stdin and
the signal pipe, and the keys it writes to the child.

`runner.Session` drives the phases (boot, each turn, the end): each phase is an object
with a `step(now)` that `Pump.run` calls after every batch of I/O until it returns a
value. The pump alone reads the child and the relay; what it reads goes to `routes.Routes`
(the TUI's bytes to the screen, hooks to the turn, to the asking hooks or to the
delivery, stdin to the control channel), which changes the run's state
(`run_state.RunState`). What the pump owns (the child, the relay, the signal pipe) it
also closes.
"""

from __future__ import annotations

import select
import time
from typing import TYPE_CHECKING, Callable, List, Optional, Protocol, Sequence, TypeVar, Union

from claude_print.errors import EXIT_TIMEOUT, ClaudePrintError
from claude_print.hooks.relay import HookEvent, Relay
from claude_print.run.signals import SignalPipe
from claude_print.tui import screens
from claude_print.tui.keys import Keyboard, Timed
from claude_print.tui.pty_session import PtyChild
from claude_print.turns.turn_state import DONE
from claude_print.turns.turn_watch import TRANSCRIPT_POLL

if TYPE_CHECKING:
    from claude_print.hooks.hook_events import HookRun
    from claude_print.run.run_state import RunState

T = TypeVar("T")
TEARDOWN_GRACE = 2.0


class Reader(Protocol):
    """Where what the pump reads goes (routes.Routes, which knows the pump: the pump
    knows it only by this face)."""

    def on_output(self, data: bytes, now: float) -> None: ...

    def on_stdin(self, now: float) -> None: ...

    def on_hook(self, event: HookEvent, now: float) -> None: ...

    def on_hook_run(self, run: HookRun, now: float) -> None: ...

    def screen_error(self, what: str, lines: List[str]) -> ClaudePrintError: ...


class Pump:
    """The event loop and what it reads from and writes to (runner.Session sets it up)."""

    routes: Reader  # where what it reads goes (set by runner.Session, which makes both)

    def __init__(self, state: RunState, deadline: float, keys: Keyboard) -> None:
        self.state = state  # the run's state it reads: what wakes it, what asks
        self.deadline = deadline  # --timeout, on the monotonic clock
        self.keys = keys
        self.relay: Optional[Relay] = None
        self.child: Optional[PtyChild] = None
        self.rendering = True  # the screen is read (boot, delivery); else bytes are kept
        # Between turns the screen must stay true for the next prompt's input box.
        self.keeps_screen = False
        self.idle_poll = 1.0  # seconds between looks at the files a waiting phase awaits
        self.relay_pending: List[HookEvent] = []  # relay lines read, not yet handled
        self.draining = False  # in `hook_runs_first`
        self.signals = SignalPipe()

    # --- teardown -----------------------------------------------------------

    def close_child(self) -> None:
        """Shutdown's first step: the child."""
        if self.child is not None:
            code = self.child.terminate(TEARDOWN_GRACE)
            self.state.trace(f"child {self.child.pid} ended with status {code}")
            self.child = None

    def close(self) -> None:
        """Shutdown's last steps: the child if still there, the relay, the signals."""
        self.close_child()
        if self.relay is not None:
            self.relay.close()
            self.relay = None
        self.signals.restore()

    def wait(self, step: Callable[[float], Optional[T]], also: List[int], poll: float = 1.0) -> T:
        """The pump between boot and turn, until `step` has a value; `also`: more
        descriptors whose input wakes it (a keeper's listening socket); `step` is asked
        at least every `poll` seconds."""
        self.rendering = False
        self.keeps_screen = True
        self.idle_poll = poll
        return self.run(step, also)

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

    def run(self, step: Callable[[float], Optional[T]], also: Sequence[int] = ()) -> T:
        """Run the event loop until `step(now)` returns a value (the phase's outcome)."""
        assert self.child is not None and self.relay is not None
        child, relay, keys = self.child, self.relay, self.keys
        state, routes = self.state, self.routes
        first = True  # a new phase is asked at once, not after the next wake-up
        while True:
            now = time.monotonic()
            self.signals.check()
            if now >= self.deadline:
                raise ClaudePrintError(
                    f"timed out after {state.options.timeout:g}s", EXIT_TIMEOUT, "error_timeout"
                )
            keys.flush(now)
            readers = [child.fd, relay.read_fd, self.signals.fd, *also]
            if state.channel is not None and state.channel.reading:
                readers.append(state.channel.fd)
            writers = [child.fd] if keys.outbox else []
            wait = 0.0 if first else self._wait_time(now)
            first = False
            ready_r, ready_w, _ = select.select(readers, writers, [], wait)
            now = time.monotonic()
            if self.signals.fd in ready_r:
                self.signals.drain()
            if child.fd in ready_r:
                routes.on_output(child.read(), now)
            if child.fd in ready_w and keys.outbox:
                keys.written(child.write_some(keys.chunk()))
            if relay.read_fd in ready_r or self.relay_pending:
                self._on_relay(now)
            if state.channel is not None:
                if state.channel.fd in ready_r:
                    routes.on_stdin(now)
                state.channel.check_caller()
            if state.asks.waiting:
                state.transcript.poll()
                summary = state.transcript.summary(state.turn)
                state.asks.serve(now, state.turn, summary, state.delivering)
            outcome = step(now)
            if outcome is not None:
                return outcome
            if self.child_gone():
                self._on_child_exit()

    def _wait_time(self, now: float) -> float:
        if self.relay_pending:
            return 0.0
        state = self.state
        wake = [self.deadline]
        if state.asks.waiting:
            wake.append(now + TRANSCRIPT_POLL)
        key_at = self.keys.next_key_at()
        if key_at is not None:
            wake.append(key_at)
        watch = state.watch
        if self.rendering:
            wake.append(now + 0.1)  # dialog quiet gaps, screen grace periods, startup deadline
        elif watch is not None and watch.turn is state.turn and state.turn.state is not DONE:
            wake.append(watch.wake_at(now))
        else:
            wake.append(now + self.idle_poll)  # between turns: stdin, hooks, the child
        return max(0.0, min(wake) - now)

    def _on_relay(self, now: float) -> None:
        """The relay's lines in the order they came, but for runs of the user's hooks
        that a transcript read takes first (`hook_runs_first`)."""
        assert self.relay is not None
        self.relay_pending.extend(self.relay.read_events())
        while self.relay_pending:
            event = self.relay_pending.pop(0)
            if event.run is not None:
                self.routes.on_hook_run(event.run, now)
            else:
                self.routes.on_hook(event, now)

    def hook_runs_first(self) -> None:
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
                    self.routes.on_hook_run(event.run, now)
        finally:
            self.draining = False

    def child_gone(self) -> bool:
        return self.child is None or self.child.gone()

    def _on_child_exit(self) -> None:
        assert self.child is not None
        tui = self.state.tui
        tui.keep(self.child.last_words())
        code = self.child.terminate(0.5)
        self.child = None
        lines = tui.lines()
        # A screen with advice (first-run connectivity, say) the TUI exited on before
        # claude-print read it (a loaded machine): the advice, not only the exit.
        advice = screens.BLOCKING_ADVICE.get(screens.classify(lines).kind)
        what = f"Claude Code exited (status {code}) before answering"
        raise self.routes.screen_error(f"{advice} ({what})" if advice else what, lines)
