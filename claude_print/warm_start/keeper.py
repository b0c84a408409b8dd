"""Warm start, the keeper's side: a detached claude-print that boots a TUI as a run
would, waits at its input box for one run with its key, and then is that run.

Its life:
1. the key's lock (one keeper per key) and its socket (handover.py);
2. the fingerprint of what the TUI will read (fingerprint.py), then the boot, exactly
   as a cold run's but with prompts to come by the editor, and the wait for its MCP
   servers that a cold run's first prompt makes, and a dry run of the paste and of the
   editor (then "ready"): all through the run's face for it (`run.held_run.HeldRun`);
3. waiting, at most `options.warm` seconds of idling, for a run to connect;
4. the run's request: a fingerprint equal to the recorded one, else "stale" and out;
   then the run's stdout and stderr become ours, the run's clock the session's, and the
   turn goes as a cold run's (`HeldRun.run_turn`); the exit code goes back;
5. shutdown, as a cold run's.
A keeper killed with SIGKILL takes its TUI with it: the TUI exits once its terminal is
gone (measured on 2.1.197 and 2.1.331: 0.1 s), and the next run sweeps the relay dir.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

from claude_print.errors import ClaudePrintError
from claude_print.options import Options
from claude_print.run.held_run import HeldRun
from claude_print.run.signals import SIGNALS
from claude_print.tui.delivery import pastes_as_typed
from claude_print.warm_start import fingerprint, handover

BOOT_LIMIT = 120.0  # seconds for the keeper's TUI to reach its input box
READY_MARK = handover.READY  # written into the lock file once the TUI waits at its box
REQUEST_WAIT = 10.0  # seconds from a connection to its request


def serve(options: Options, claim: handover.Claim, listener: socket.socket) -> int:
    """The keeper's whole life (in the detached process), once it holds its key's claim
    and listens on its socket; its exit status."""
    # Outside the session's pump a signal (its caller's watch sends one when the caller
    # goes) must not end the keeper in the middle of the session's cleanup.
    for signum in SIGNALS:
        signal.signal(signum, lambda signum, frame: None)
    try:
        return _keep(options, listener, claim)
    finally:
        listener.close()
        claim.release()


def _keep(options: Options, listener: socket.socket, claim: handover.Claim) -> int:
    paths = fingerprint.named(options.forwarded, options.mcp_configs)
    recorded = fingerprint.take(os.getcwd(), os.environ, paths=paths)
    started = time.monotonic()
    held = HeldRun(options, started)
    try:
        try:
            held.boot(until=started + BOOT_LIMIT)
        except ClaudePrintError as exc:
            handover.record_failure(claim.paths, f"its TUI did not get ready: {exc}")
            return 1
        handover.clear_failure(claim.paths)
        claim.mark(READY_MARK)
        try:
            until = time.monotonic() + options.warm
            conn = held.wait(lambda now: _accept(listener), [listener.fileno()], until)
        except ClaudePrintError:
            return 1  # nobody came: the TUI goes with it
        # One run only: later ones find no socket and start a keeper of their own.
        listener.close()
        claim.release()
        with conn:
            return _serve_run(conn, held, recorded)
    finally:
        held.close()


def _serve_run(conn: socket.socket, held: HeldRun, recorded: Dict[str, str]) -> int:
    conn.settimeout(REQUEST_WAIT)
    try:
        request, fds = handover.receive(conn)
    except (OSError, ValueError, ClaudePrintError):
        return 1
    if request is None or len(fds) != 2:
        _close_all(fds)
        return 1
    if not _handed_over(conn, request, recorded, held):
        _close_all(fds)
        return 0
    for target, fd in zip((1, 2), fds):
        os.dup2(fd, target)
        os.close(fd)
    trace = bool(request.get("trace"))
    held.adopt(request["prompt"], request["via"], request["started"], request["timeout"], trace)
    _watch_caller(conn)
    try:
        code = held.run_turn()
    except OSError:  # the run gave us up (its timeout) and closed our output
        code = 1
    _let_go_of_output()
    with contextlib.suppress(OSError):
        handover.send(conn, {"exit": code})
    return 0


def _handed_over(
    conn: socket.socket, request: Dict[str, Any], recorded: Dict[str, str], held: HeldRun
) -> bool:
    """Whether the run's prompt is ours now: its request fits this TUI, we said so, and
    the run said go. It may have given us up meanwhile (its deadline, a signal): only
    its go makes the prompt ours, so a prompt never runs in a keeper and a cold run."""
    _pid, uid = handover.peer(conn)
    stale = _why_stale(request, recorded, uid)
    try:
        if stale:
            handover.send(conn, {"stale": stale})
            return False
        accepted = {
            "accepted": True,
            "session_id": held.session_id,
            "claude_version": held.claude_version,
        }
        handover.send(conn, accepted)
        go, more = handover.receive(conn)
    except (OSError, ValueError, ClaudePrintError):
        return False
    _close_all(more)
    return bool(go and go.get("go"))


def _why_stale(request: Dict[str, Any], recorded: Dict[str, str], uid: int) -> str:
    if uid != os.getuid():
        return "another user"
    now = request.get("fingerprint")
    if now != recorded:
        # Named (the run's --trace shows it): a date that turned at midnight is no bug.
        names = fingerprint.changed(recorded, now if isinstance(now, dict) else {})
        more = f" and {len(names) - 3} more" if len(names) > 3 else ""
        return f"what the TUI read at its start has changed since: {', '.join(names[:3])}{more}"
    prompt, via = request.get("prompt"), request.get("via")
    ok = (
        isinstance(prompt, str)
        and (via == "editor" or (via == "paste" and pastes_as_typed(prompt)))
        and isinstance(request.get("started"), (int, float))
        and isinstance(request.get("timeout"), (int, float))
    )
    return "" if ok else "a malformed request"


def _watch_caller(conn: socket.socket) -> None:
    """The run that handed us its prompt is gone (SIGKILL, or it gave us up at its
    deadline): end as an interrupted run."""

    def watch() -> None:
        with contextlib.suppress(OSError):
            conn.settimeout(None)
            while conn.recv(1):
                pass
        # Its output pipes have no reader now: what we still write goes nowhere, and a
        # write must not fail the session's cleanup.
        null = os.open(os.devnull, os.O_WRONLY)
        for fd in (1, 2):
            os.dup2(null, fd)
        os.close(null)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="caller-watch", daemon=True).start()


def _let_go_of_output() -> None:
    """Flush and drop the run's stdout and stderr: its caller may read to end of file."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    null = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        os.dup2(null, fd)
    os.close(null)


def _accept(listener: socket.socket) -> Optional[socket.socket]:
    try:
        conn, _ = listener.accept()
    except (BlockingIOError, InterruptedError):
        return None
    conn.setblocking(True)
    return conn


def _close_all(fds: List[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


__all__: Tuple[str, ...] = ("serve",)
