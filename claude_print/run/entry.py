"""The ways into a session: a cold run (`run`, what the command line calls) and the
guard that reports a failure or an interruption as `claude -p` would (`guarded`, which a
held run's turn goes through too)."""

from __future__ import annotations

import time
from typing import Callable, Optional

from claude_print.errors import EXIT_INTERRUPTED, ClaudePrintError
from claude_print.options import Options
from claude_print.printing.emit import Emitter, Trace, report_failure
from claude_print.run.runner import Session
from claude_print.run.signals import Interrupted


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


def run(options: Options, started: Optional[float] = None) -> int:
    """The run; `started` (monotonic) is when claude-print began, for --timeout."""
    started = time.monotonic() if started is None else started
    # --verbose means what it means to claude -p (stream-json callers always pass it):
    # claude-print's own lines have their own switch.
    trace = Trace(options.trace, started)
    emitter = Emitter(options.output_format, options.verbose)
    try:
        session = Session(options, trace, emitter, started)
    except ClaudePrintError as exc:
        report_failure(exc, options.output_format)
        return exc.exit_code
    try:
        return guarded(session, session.run)
    finally:
        session.close()


def guarded(session: Session, body: Callable[[], int]) -> int:
    """`body`'s exit code; a failure or an interruption reported as `claude -p` would."""
    state = session.state
    options, started = state.options, state.started
    try:
        return body()
    except ClaudePrintError as exc:
        report_failure(
            exc,
            options.output_format,
            session_id=state.session_id or "",
            duration_ms=_ms(time.monotonic() - started),
            claude_version=state.claude_version,
        )
        return exc.exit_code
    except Interrupted as exc:
        child = session.pump.child
        if child is not None:
            child.pass_on(exc.signum)
        report_failure(
            ClaudePrintError(f"interrupted by {exc}", EXIT_INTERRUPTED, "error_interrupted"),
            options.output_format,
            session_id=state.session_id or "",
            duration_ms=_ms(time.monotonic() - started),
            claude_version=state.claude_version,
        )
        return EXIT_INTERRUPTED
