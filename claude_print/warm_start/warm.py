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
import select
import signal
import socket
import sys
import time
import unicodedata
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from claude_print import __version__, contract
from claude_print.errors import EXIT_INTERRUPTED, EXIT_TIMEOUT, EXIT_USAGE, ClaudePrintError
from claude_print.hooks import permissions
from claude_print.hooks.user_hooks import hooks_possible
from claude_print.options import Options
from claude_print.run.signals import Interrupted, SignalPipe
from claude_print.warm_start import fingerprint, handover, warm_pool
from claude_print.warm_start.warm_link import Link, TimedOut

DEFAULT_IDLE = 60.0  # seconds a keeper waits for a run
# How long a run waits for a keeper to take its prompt: it may still be booting.
ACCEPT_WAIT = 30.0
# After the run's own deadline, how long the keeper has to report its own timeout (its
# session's deadline is the run's); then the run gives it up and reports it.
RESULT_GRACE = 1.0
BIND_WAIT = 5.0  # seconds a run waits, at its end, for the keeper it leaves to listen
MAX_KEEPERS = 8  # idle keepers per user (runtime dir); the oldest go first
# What a run hands the keeper with its prompt: the TUI does not depend on them.
# A pool's size neither: runs that leave pools of different sizes share the keepers.
_NOT_IN_KEY = ("prompt", "prompt_source", "timeout", "trace", "warm_pool")
# Hooks that would run at the keeper's start and end, not around the run's prompt.
SESSION_HOOKS = ("SessionStart", "SessionEnd")
# Variables a shell sets per command: `_` is the path of the program it started
# (`claude-print` from bash, `python` from a script), so `--warm-up` typed in a shell
# never served a script's runs. Nothing the TUI does shows it: the shell its tools run
# in sets `_` itself.
NOT_IN_ENV_KEY = ("_",)


def key(options: Options, environ: Mapping[str, str], cwd: str) -> str:
    """The name a keeper is found by: equal only for runs whose TUIs start the same."""
    st = os.stat(options.claude_binary)
    fields = {k: v for k, v in options._asdict().items() if k not in _NOT_IN_KEY}
    identity = {
        "claude-print": [__version__, os.path.dirname(os.path.abspath(__file__))],
        "binary": [os.path.realpath(options.claude_binary), st.st_size, st.st_mtime_ns],
        "cwd": cwd,
        "process": process_context(cwd),
        "options": fields,
        "environ": {k: v for k, v in environ.items() if k not in NOT_IN_ENV_KEY},
    }
    text = json.dumps(identity, sort_keys=True, default=list, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]


# /proc/self/status lines a TUI inherits: its identity, file mode mask, privileges.
_STATUS_FIELDS = (
    "Umask",
    "Uid",
    "Gid",
    "Groups",
    "NoNewPrivs",
    "Seccomp",
    "Seccomp_filters",
    "CapInh",
    "CapPrm",
    "CapEff",
    "CapBnd",
    "CapAmb",
)


def process_context(cwd: str) -> Dict[str, object]:
    """What the TUI inherits from the process that starts it, beyond its environment:
    ids and groups, umask, privileges, namespaces, cgroup, resource limits, and which
    directory `cwd` is (one deleted and made again at the same path is another)."""
    context: Dict[str, object] = {
        "ids": [os.getuid(), os.geteuid(), os.getgid(), os.getegid(), sorted(os.getgroups())],
    }
    try:
        st = os.stat(cwd)
        context["cwd"] = [st.st_dev, st.st_ino]
    except OSError as exc:
        context["cwd"] = f"-{exc.errno}"
    status = _read("/proc/self/status")
    context["status"] = [
        line for line in status.splitlines() if line.split(":", 1)[0] in _STATUS_FIELDS
    ]
    if "Umask:" not in status:  # before Linux 4.7, or not Linux: set it back at once
        mask = os.umask(0o022)
        os.umask(mask)
        context["umask"] = mask
    namespaces = {}
    with contextlib.suppress(OSError):
        for name in sorted(os.listdir("/proc/self/ns")):
            with contextlib.suppress(OSError):
                namespaces[name] = os.readlink(os.path.join("/proc/self/ns", name))
    context["ns"] = namespaces
    context["cgroup"] = _read("/proc/self/cgroup")
    context["limits"] = _read("/proc/self/limits")
    return context


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return f.read()
    except OSError as exc:
        return f"-{exc.errno}"


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


def command_reason(prompt: str) -> Optional[str]:
    """A prompt that names a command, or that the TUI may read as one, goes the cold way,
    where the slash rules answer, refuse or send it before anything starts: a refusal
    then costs no keeper (one that took the prompt would refuse it too, and be used up)."""
    if "/" not in unicodedata.normalize("NFKC", prompt):
        return None  # no reading makes a command of it (slash.plainly_text)
    from claude_print.turns import slash

    return "a prompt the slash rules decide" if slash.names_a_command(prompt) else None


def prompt_reason(options: Options, facts: contract.Facts) -> Optional[str]:
    """Why this prompt cannot go into a warm TUI (None: it can, `warm_delivery`)."""
    from claude_print.tui.delivery import warm_delivery

    return warm_delivery(options, facts)[1]


def adopt(
    options: Options, started: float, environ: Mapping[str, str], trace: Callable[[str], None]
) -> Optional[int]:
    """Run the prompt in a warm TUI: its exit code, or None for a cold run."""
    cwd = os.getcwd()
    reason = cold_reason(options, environ, cwd) or command_reason(options.prompt)
    if reason is not None:
        trace(f"warm start: cold run ({reason})")
        return None
    git = fingerprint.git_started(cwd, environ)  # runs while we do the rest
    try:
        from claude_print.tui.release import installed_version

        facts = contract.facts_for(installed_version(options.claude_binary))
        from claude_print.tui.delivery import warm_delivery

        via, reason = warm_delivery(options, facts)
        return _try_keeper(options, started, environ, cwd, trace, reason, git, via)
    finally:
        git(cwd, environ)  # reaped, never left running or a zombie


def _try_keeper(
    options: Options,
    started: float,
    environ: Mapping[str, str],
    cwd: str,
    trace: Callable[[str], None],
    reason: Optional[str],
    git: Callable[[str, Mapping[str, str]], bytes],
    via: str = "editor",
) -> Optional[int]:
    if reason is not None:
        trace(f"warm start: cold run ({reason})")
        return None
    try:
        directory, this_key = handover.runtime_dir(environ), key(options, environ, cwd)
        slots = warm_pool.choices(directory, this_key, os.getpid())
    except (ClaudePrintError, OSError) as exc:
        trace(f"warm start: cold run ({exc})")
        return None
    if not slots:
        trace("warm start: no warm TUI for this key; cold run")
        for why in warm_pool.failures(directory, this_key):
            trace(f"warm start: a keeper for this key failed: {why}")
        return None
    signals = SignalPipe()
    signals.install()
    # It may still be booting: wait for it, but not past our deadline; and all slots
    # together no longer than one (a run that loses one keeper tries the next at once).
    until = min(started + options.timeout, time.monotonic() + ACCEPT_WAIT)
    request: Dict[str, Any] = {}
    connected = False
    try:
        for paths in slots:
            if paths is not slots[0] and time.monotonic() >= until:
                break
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            link = Link(sock, signals)
            try:
                return _hand_over(
                    link, paths, options, started, environ, cwd, trace, git, until, request, via
                )
            except NextSlot as exc:  # taken by another run, gone, or stale: not ours
                connected = connected or exc.connected
                if str(exc):
                    trace(f"warm start: {exc}")
            finally:
                link.close()
                sock.close()
        taken = " took the prompt" if connected else ""
        trace(f"warm start: no warm TUI for this key{taken}; cold run")
        return None
    except Interrupted as exc:  # before the keeper took the prompt: as a cold run would
        return _report(options, started, f"interrupted by {exc}", EXIT_INTERRUPTED)
    finally:
        signals.restore()


class NextSlot(Exception):
    """This keeper will not run the prompt (and never got a go): try the next one."""

    def __init__(self, why: str = "", connected: bool = True) -> None:
        super().__init__(why)
        self.connected = connected


def _hand_over(
    link: Link,
    paths: handover.Paths,
    options: Options,
    started: float,
    environ: Mapping[str, str],
    cwd: str,
    trace: Callable[[str], None],
    git: Optional[Callable[[str, Mapping[str, str]], bytes]] = None,
    until: Optional[float] = None,
    request: Optional[Dict[str, Any]] = None,
    via: str = "editor",
) -> Optional[int]:
    """Hand the prompt to the keeper at `paths`: the run's exit code once it ran it, None
    for a cold run, NextSlot when it is not ours (taken by another run as we came, gone,
    or what its TUI read has changed). `request` is filled on the first call and reused."""
    sock = link.sock
    try:
        sock.connect(paths.socket)
    except OSError:
        raise NextSlot(connected=False) from None
    keeper, uid = handover.peer(sock)
    if uid != os.getuid():
        trace(f"warm start: {paths.socket} belongs to uid {uid}; cold run")
        return None
    if request is None:
        request = {}
    if not request:
        named = fingerprint.named(options.forwarded, options.mcp_configs)
        request.update(
            fingerprint=fingerprint.take(cwd, environ, git=git, paths=named),
            prompt=options.prompt,
            via=via,
            started=started,
            timeout=options.timeout,
            trace=options.trace,
        )
    link.signals.check()
    ends = link.make_pipes()
    try:
        handover.send(sock, request, fds=ends)
    except OSError as exc:  # it took another run, or left, as we connected
        raise NextSlot(f"keeper {keeper} is gone ({exc})") from None
    finally:
        for fd in ends:
            os.close(fd)
    trace(f"warm start: keeper {keeper} has the request")
    deadline = started + options.timeout
    if until is None:
        until = min(deadline, time.monotonic() + ACCEPT_WAIT)
    try:
        reply = link.next_message(until)
    except (TimedOut, OSError, ValueError, ClaudePrintError) as exc:
        if time.monotonic() >= deadline:
            trace(f"warm start: keeper {keeper} did not take the prompt in time")
            return _report(options, started, _timed_out(options), EXIT_TIMEOUT)
        # Reset: it took another run's connection as ours came (or it left).
        raise NextSlot(f"keeper {keeper} did not take the prompt ({_why(exc)})") from None
    if reply is None or not reply.get("accepted"):
        why = reply.get("stale") if reply else "it closed the connection"
        raise NextSlot(f"keeper {keeper} declined ({why})")
    try:
        handover.send(sock, {"go": True})  # from here on the prompt is the keeper's
    except OSError as exc:  # it never ran the prompt: it runs nothing without our go
        raise NextSlot(f"keeper {keeper} is gone ({exc})") from None
    trace(f"warm start: keeper {keeper} runs the prompt")
    # The next run's TUI boots while this one's turn runs, not after it: a worker that
    # runs tasks back to back then finds it at its input box (issue 43, bench/).
    leave_keeper(options, environ)
    session = {k: reply.get(k) or "" for k in ("session_id", "claude_version")}
    return _follow(link, keeper, options, started, deadline + RESULT_GRACE, session)


def _follow(
    link: Link,
    keeper: int,
    options: Options,
    started: float,
    cutoff: float,
    session: Dict[str, str],
) -> int:
    """The keeper runs our prompt: copy its output until its exit code comes. Signals go
    on to it; at `cutoff` it is given up: stopped, and the run reports its timeout."""
    reply: Optional[Dict[str, Any]] = None
    while True:
        try:
            reply = link.next_message(cutoff)
            break
        except Interrupted as exc:
            link.signals.caught = None
            with contextlib.suppress(OSError):
                os.kill(keeper, exc.signum)  # it reports and exits as an interrupted run
        except TimedOut:
            reply = link.waiting_message()
            if reply is None:
                link.close()  # nothing it writes from now on reaches our caller
                with contextlib.suppress(OSError):
                    os.kill(keeper, signal.SIGTERM)
                return _report(options, started, _timed_out(options), EXIT_TIMEOUT, **session)
            break
        except (OSError, ValueError, ClaudePrintError):
            reply = None
            break
    link.drain()
    code = reply.get("exit") if reply else None
    if not isinstance(code, int):
        link.close()
        return _report(
            options, started, f"warm start: keeper {keeper} ended without a result", EXIT_USAGE
        )
    return code


def _timed_out(options: Options) -> str:
    return f"timed out after {options.timeout:g}s"


def _why(exc: Exception) -> str:
    return "timed out" if isinstance(exc, TimedOut) else str(exc) or type(exc).__name__


def _report(options: Options, started: float, message: str, code: int, **fields: str) -> int:
    """The run's own result, as a cold run reports the same failure."""
    from claude_print.printing.emit import report_failure

    subtype = {EXIT_TIMEOUT: "error_timeout", EXIT_INTERRUPTED: "error_interrupted"}.get(
        code, "error_during_execution"
    )
    duration_ms = int((time.monotonic() - started) * 1000)
    error = ClaudePrintError(message, code, subtype)
    report_failure(error, options.output_format, duration_ms=duration_ms, **fields)
    return code


def leave_keeper(options: Options, environ: Mapping[str, str], strict: bool = False) -> bool:
    """Top the key's pool up to `options.warm_pool` keepers for the next runs with these
    options, each detached (True: one or more started). Returns once they listen (or
    have failed): a run that comes next finds their sockets. `strict` (--warm-up, whose
    only job this is): a keeper that cannot be left is an error, not a quiet False."""
    cwd = os.getcwd()
    if cold_reason(options, environ, cwd) is not None:
        return False
    try:
        directory = handover.runtime_dir(environ)
        name = key(options, environ, cwd)
        claims = warm_pool.claim_free(directory, name, options.warm_pool)
    except (ClaudePrintError, OSError) as exc:
        if strict:
            raise ClaudePrintError(f"--warm-up: no keeper can be left ({exc})") from exc
        return False
    if not claims:
        return False
    warm_pool.make_room(directory, MAX_KEEPERS - len(claims), f"warm-{name}")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    waiting = []
    for claim in claims:
        try:
            waiting.append(_start_keeper(options, claim))
        except OSError:
            claim.release()
    limit = time.monotonic() + BIND_WAIT
    while waiting:  # each keeper closes its end once it listens, or at its end
        left = limit - time.monotonic()
        ready, _, _ = select.select(waiting, [], [], max(0.0, left)) if left > 0 else ([], [], [])
        if not ready:
            break
        for fd in ready:
            os.close(fd)
            waiting.remove(fd)
    for fd in waiting:
        os.close(fd)
    return True


def _start_keeper(options: Options, claim: handover.Claim) -> int:
    """A detached keeper holding `claim` (the fork inherits its lock); the read end of a
    pipe it closes once it listens."""
    bound, bound_w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(bound)
        os.close(bound_w)
        raise
    if pid:
        os.close(bound_w)
        claim.hand_off()
        os.waitpid(pid, 0)  # the middle process leaves at once
        return bound
    code = 1
    try:
        os.close(bound)
        # Started as the run's prompt goes in, the fork has the run's signal wakeup fd,
        # a number _detach_stdio frees for the keeper's own files: a signal must not
        # write into one of them.
        signal.set_wakeup_fd(-1)
        os.setsid()  # no terminal, no process group of the caller's
        if os.fork():
            os._exit(0)
        assert claim.fd is not None
        _detach_stdio(keep=(bound_w, claim.fd))  # other slots' claims are not ours
        code = _serve(options, claim, bound_w)
    finally:
        os._exit(code)


def _serve(options: Options, claim: handover.Claim, bound: int) -> int:
    try:
        listener = handover.listen(claim.paths.socket)
    except OSError:
        claim.release()
        return 1
    finally:
        os.close(bound)
    from claude_print.warm_start import keeper  # after the run has gone on: it imports the rest

    return keeper.serve(options, claim, listener)


def _detach_stdio(keep: Sequence[int]) -> None:
    """/dev/null for 0-2 and nothing else open but `keep`: the caller must not wait on a
    pipe the keeper still holds."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    for fd in _open_fds():
        if fd > 2 and fd not in keep:
            with contextlib.suppress(OSError):
                os.close(fd)


def _open_fds() -> List[int]:
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 256))


def check_pool(size: int) -> int:
    if not 1 <= size <= MAX_KEEPERS:
        raise ClaudePrintError(
            f"the warm pool must hold 1 to {MAX_KEEPERS} TUIs (at most {MAX_KEEPERS} wait "
            f"per user), not {size}",
            EXIT_USAGE,
        )
    return size
