"""Warm start, the run's side (opt-in: --warm or `warm = true`): adopt a TUI a keeper
(keeper.py) started earlier with the same key, else run cold; afterwards, leave a keeper
for the next run.

The key is everything the TUI's start depends on that claude-print can name: claude-print
itself, the Claude Code binary, the cwd, the options but for the prompt and the timeout,
and the whole environment. What the TUI reads from disk at its start is checked at
adoption (fingerprint.py). Either differs: a cold run, as without --warm.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import sys
import time
from types import FrameType
from typing import Callable, Dict, Iterator, List, Mapping, Optional

from claude_print import __version__, contract, fingerprint, handover, permissions
from claude_print.errors import EXIT_USAGE, ClaudePrintError
from claude_print.options import Options, choose_delivery
from claude_print.user_hooks import hooks_possible

DEFAULT_IDLE = 60.0  # seconds a keeper waits for a run
# How long a run waits for a keeper to take its prompt: it may still be booting.
ACCEPT_WAIT = 30.0
# After the run's own deadline, how long to wait for the keeper's exit status.
RESULT_GRACE = 15.0
# What a run hands the keeper with its prompt: the TUI does not depend on them.
_NOT_IN_KEY = ("prompt", "prompt_source", "timeout", "trace")
# Hooks that would run at the keeper's start and end, not around the run's prompt.
SESSION_HOOKS = ("SessionStart", "SessionEnd")
_FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def key(options: Options, environ: Mapping[str, str], cwd: str) -> str:
    """The name a keeper is found by: equal only for runs whose TUIs start the same."""
    st = os.stat(options.claude_binary)
    fields = {k: v for k, v in options._asdict().items() if k not in _NOT_IN_KEY}
    identity = {
        "claude-print": [__version__, os.path.dirname(os.path.abspath(__file__))],
        "binary": [os.path.realpath(options.claude_binary), st.st_size, st.st_mtime_ns],
        "cwd": cwd,
        "uid": os.getuid(),
        "options": fields,
        "environ": dict(environ),
    }
    text = json.dumps(identity, sort_keys=True, default=list, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def cold_reason(options: Options, environ: Mapping[str, str], cwd: str) -> Optional[str]:
    """Why these options cannot run warm (None: they can)."""
    if options.input_format == "stream-json":
        return "stream-json input"
    if options.resume or options.session_id:
        return "a session of the caller's choosing (--resume, --continue, --session-id)"
    if options.files:
        return "--file"
    if options.prompt_via in ("argv", "paste"):
        return f"--prompt-via {options.prompt_via}"
    sources = permissions.setting_sources(options.inherit_hooks, options.forwarded)
    if hooks_possible(SESSION_HOOKS, sources, cwd, environ, options.user_settings):
        # They would run when the keeper starts its TUI, not when the prompt comes.
        return "a SessionStart or SessionEnd hook (or a plugin) may run"
    return None


def prompt_reason(options: Options, facts: contract.Facts) -> Optional[str]:
    """Why this prompt cannot go into a warm TUI: the editor, which a warm TUI takes it
    by, would hand the model other text than a cold run's delivery."""
    from claude_print.delivery import sent_forms

    cold = choose_delivery(options)
    if sent_forms(options.prompt, "editor", facts) != sent_forms(options.prompt, cold, facts):
        return f"the editor would change this prompt where {cold} does not"
    return None


def adopt(
    options: Options, started: float, environ: Mapping[str, str], trace: Callable[[str], None]
) -> Optional[int]:
    """Run the prompt in a warm TUI: its exit code, or None for a cold run."""
    cwd = os.getcwd()
    reason = cold_reason(options, environ, cwd)
    if reason is None:
        from claude_print.release import installed_version

        facts = contract.facts_for(installed_version(options.claude_binary))
        reason = prompt_reason(options, facts)
    if reason is not None:
        trace(f"warm start: cold run ({reason})")
        return None
    try:
        paths = handover.paths_for(key(options, environ, cwd), environ)
    except (ClaudePrintError, OSError) as exc:
        trace(f"warm start: cold run ({exc})")
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        return _hand_over(sock, paths, options, started, environ, cwd, trace)
    finally:
        sock.close()


def _hand_over(
    sock: socket.socket,
    paths: handover.Paths,
    options: Options,
    started: float,
    environ: Mapping[str, str],
    cwd: str,
    trace: Callable[[str], None],
) -> Optional[int]:
    try:
        sock.connect(paths.socket)
    except OSError:
        trace("warm start: no warm TUI for this key; cold run")
        return None
    keeper, uid = handover.peer(sock)
    if uid != os.getuid():
        trace(f"warm start: {paths.socket} belongs to uid {uid}; cold run")
        return None
    request = {
        "fingerprint": fingerprint.take(cwd, environ),
        "prompt": options.prompt,
        "started": started,
        "timeout": options.timeout,
        "trace": options.trace,
    }
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        handover.send(sock, request, fds=[sys.stdout.fileno(), sys.stderr.fileno()])
    except OSError as exc:  # it took another run, or left, as we connected
        trace(f"warm start: keeper {keeper} is gone ({exc}); cold run")
        return None
    deadline = started + options.timeout
    sock.settimeout(max(0.1, min(deadline, time.monotonic() + ACCEPT_WAIT) - time.monotonic()))
    try:
        reply, _ = handover.receive(sock)
    except (OSError, ValueError) as exc:  # socket.timeout is an OSError
        trace(f"warm start: keeper {keeper} did not take the prompt ({exc}); cold run")
        return None
    if reply is None or reply.get("stale"):
        why = reply.get("stale") if reply else "it closed the connection"
        trace(f"warm start: keeper {keeper} declined ({why}); cold run")
        return None
    trace(f"warm start: keeper {keeper} runs the prompt")
    with _forwarding_signals(keeper):
        sock.settimeout(max(0.1, deadline + RESULT_GRACE - time.monotonic()))
        try:
            reply, _ = handover.receive(sock)
        except (OSError, ValueError) as exc:
            with contextlib.suppress(OSError):
                os.kill(keeper, signal.SIGTERM)
            raise ClaudePrintError(f"warm start: no result from keeper {keeper} ({exc})") from exc
    code = reply.get("exit") if reply else None
    if not isinstance(code, int):
        raise ClaudePrintError(f"warm start: keeper {keeper} ended without a result")
    return code


@contextlib.contextmanager
def _forwarding_signals(pid: int) -> Iterator[None]:
    """While the keeper runs our prompt, a signal to us is a signal to it (it reports
    and exits as an interrupted run would)."""

    def forward(signum: int, frame: Optional[FrameType]) -> None:
        with contextlib.suppress(OSError):
            os.kill(pid, signum)

    previous: Dict[int, object] = {s: signal.signal(s, forward) for s in _FORWARDED_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]


def leave_keeper(options: Options, environ: Mapping[str, str]) -> bool:
    """Start a keeper for the next run with these options, detached (True: started)."""
    cwd = os.getcwd()
    if cold_reason(options, environ, cwd) is not None:
        return False
    try:
        warm_key = key(options, environ, cwd)
        handover.runtime_dir(environ)
    except (ClaudePrintError, OSError):
        return False
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)  # the middle process leaves at once
        return True
    code = 1
    try:
        os.setsid()  # no terminal, no process group of the caller's
        if os.fork():
            os._exit(0)
        _detach_stdio()
        from claude_print import keeper

        code = keeper.serve(options, warm_key, dict(environ))
    finally:
        os._exit(code)


def _detach_stdio() -> None:
    """/dev/null for 0-2 and nothing else open: the caller must not wait on a pipe the
    keeper still holds."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    for fd in _open_fds():
        if fd > 2:
            with contextlib.suppress(OSError):
                os.close(fd)


def _open_fds() -> List[int]:
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 256))


def check_idle(value: float) -> float:
    if not value > 0:
        raise ClaudePrintError("the warm start's idle lifetime must be over 0 seconds", EXIT_USAGE)
    return value
