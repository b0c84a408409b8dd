"""`--check`: a credential-free self-test, one line per check.

Each check prints ``ok   <check>: detail``, ``warn <check>: detail`` or
``FAIL <check>: detail``. The exit code is 0 when nothing failed (warnings
allowed) and 2 otherwise. Nothing here talks to Anthropic: Claude Code itself
is only asked for ``--version``; the full round trip runs claude-print against
mock_claude (a fake TUI) in a throw-away HOME, when mock_claude is installed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from typing import Dict, List, Mapping, Optional, Set, TextIO, Tuple

from claude_print import contract
from claude_print.errors import EXIT_OK, EXIT_USAGE, ClaudePrintError
from claude_print.hooks import leftovers
from claude_print.hooks.relay import TEMP_PREFIX
from claude_print.tui.release import claude_version, resolve_binary

MIN_PYTHON = (3, 8)
ORPHAN_AGE_SECS = 3600.0
ROUND_TRIP_TIMEOUT = 60.0
ROUND_TRIP_PROMPT = "claude-print --check: a round trip through mock_claude."
# The user's environment must not steer the round trip.
_ROUND_TRIP_DROPPED_PREFIXES = ("CLAUDE_CODE_", "ANTHROPIC_", "MOCK_CLAUDE_", "CLAUDE_PRINT_")
_ROUND_TRIP_DROPPED_NAMES = ("CLAUDECODE", "CLAUDE_CONFIG_DIR", "SHIV_FORCE_EXTRACT")


class Report:
    """Prints one line per check and remembers whether any failed."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.failed = False

    def line(self, status: str, check: str, detail: str) -> None:
        if status == "FAIL":
            self.failed = True
        self.out.write(f"{status:<4} {check}: {detail}\n")
        self.out.flush()

    def ok(self, check: str, detail: str) -> None:
        self.line("ok", check, detail)

    def warn(self, check: str, detail: str) -> None:
        self.line("warn", check, detail)

    def fail(self, check: str, detail: str) -> None:
        self.line("FAIL", check, detail)


def run(binary: str, clean: bool = False) -> int:
    """Run every check; 0 when none failed, 2 otherwise."""
    report = Report(sys.stdout)
    check_python(report)
    check_config(report)
    check_claude(report, binary)
    check_login(report, os.environ)
    check_pty(report)
    check_tmpdir(report)
    check_startup_fetches(report, os.environ)
    check_round_trip(report)
    check_orphans(report, clean)
    check_needle(report)
    return EXIT_USAGE if report.failed else EXIT_OK


# --- the checks ------------------------------------------------------------------------


def check_python(report: Report) -> None:
    version = ".".join(str(n) for n in sys.version_info[:3])
    where = sys.executable or "unknown interpreter"
    if sys.version_info[:2] < MIN_PYTHON:
        report.fail("python", f"{version} ({where}); claude-print needs 3.8 or newer")
    else:
        report.ok("python", f"{version} ({where})")


def check_config(report: Report) -> None:
    from claude_print.command.config import config_path, load_defaults

    path = config_path(os.environ)
    try:
        defaults = load_defaults(os.environ)
    except ClaudePrintError as exc:
        report.fail("config", exc.message)
        return
    if path is None or not os.path.exists(path):
        report.ok("config", f"no config file ({path or 'neither XDG_CONFIG_HOME nor HOME set'})")
        return
    values = {k: v for k, v in defaults._asdict().items() if v is not None}
    shown = ", ".join(f"{k}={v!r}" for k, v in values.items()) or "no values"
    report.ok("config", f"{path}: {shown}")


def check_claude(report: Report, binary: str) -> None:
    try:
        path = resolve_binary(binary)
        version = claude_version(path)
    except ClaudePrintError as exc:
        report.fail("claude", exc.message)
        return
    tested = f"{contract.OLDEST_SUPPORTED} to {contract.NEWEST_TESTED}"
    facts = contract.facts_for(version)
    if facts.tested:
        report.ok("claude", f"{path}: Claude Code {version} (tested range {tested})")
    elif contract.older_than_supported(version):
        report.warn(
            "claude",
            f"{path}: Claude Code {version} is older than the oldest supported release "
            f"({contract.OLDEST_SUPPORTED}); update it (npm install -g @anthropic-ai/claude-code)",
        )
    else:
        report.warn(
            "claude",
            f"{path}: Claude Code {version} is newer than tested ({tested}): claude-print "
            f"uses the facts of {contract.NEWEST_TESTED}; a screen it does not know fails "
            "loudly with the screen in the message (try a prompt with --verbose)",
        )


def check_login(report: Report, environ: Mapping[str, str]) -> None:
    """Whether the TUI gets past its start-up screens (no request spent)."""
    from claude_print.command.login_check import startup_verdict

    verdict = startup_verdict(environ)
    (report.ok if verdict.ok else report.fail)("login", verdict.detail)


def check_pty(report: Report) -> None:
    try:
        master, slave = os.openpty()
    except OSError as exc:
        report.fail(
            "pty",
            f"cannot open a pseudo-terminal ({exc}); in a container, mount /dev/pts "
            "(and /dev/ptmx) or run with a TTY-capable runtime",
        )
        return
    try:
        name = os.ttyname(slave)
    except OSError:
        name = "a pty"
    finally:
        os.close(master)
        os.close(slave)
    report.ok("pty", f"opened {name}")


def check_tmpdir(report: Report) -> None:
    env = os.environ.get("TMPDIR")
    if env and not os.path.isdir(env):
        what = "does not exist" if not os.path.exists(env) else "is not a directory"
        report.fail("tmpdir", f"TMPDIR={env} {what}; point it at a writable directory")
        return
    root = tempfile.gettempdir()
    try:
        scratch = tempfile.mkdtemp(prefix="claude-print-check-", dir=root)
    except OSError as exc:
        report.fail("tmpdir", f"cannot create a directory in {root} ({exc}); set TMPDIR")
        return
    try:
        fifo = os.path.join(scratch, "check.fifo")
        os.mkfifo(fifo, 0o600)
        os.unlink(fifo)
    except OSError as exc:
        report.fail("tmpdir", f"cannot make a FIFO in {root} ({exc}); set TMPDIR elsewhere")
        return
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report.ok("tmpdir", f"{root} is writable and takes FIFOs")


STARTUP_PROBE_SECS = 3.0


def check_startup_fetches(
    report: Report, environ: Mapping[str, str], timeout: float = STARTUP_PROBE_SECS
) -> None:
    """Where a proxy black-holes Anthropic's other hosts, the TUI waits ~5 s at start-up for
    fetches that cannot succeed (measured); warn when such a connection hangs."""
    var = contract.NONESSENTIAL_TRAFFIC_VAR
    if environ.get(var):
        report.ok("startup fetches", f"{var} is set: Claude Code skips them")
        return
    host = contract.STARTUP_FETCH_HOST
    proxy = proxy_for(host, environ)
    via = f" through the proxy {proxy}" if proxy else ""
    outcome: List[str] = []
    probe = threading.Thread(
        target=lambda: outcome.append(connect_probe(host, 443, proxy, timeout)), daemon=True
    )
    probe.start()
    probe.join(timeout + 0.5)  # name lookups have no timeout of their own
    if outcome and outcome[0] != "hangs":
        report.ok("startup fetches", f"{host}{via}: {outcome[0]}, no start-up wait")
        return
    report.warn(
        "startup fetches",
        f"a connection to {host}{via} did not answer within {timeout:g}s: Claude Code waits "
        f"about 5 s for such start-up fetches before it takes the prompt; `export {var}=1` "
        "skips them (see the README, air-gapped machines)",
    )


def proxy_for(host: str, environ: Mapping[str, str]) -> Optional[str]:
    """The HTTPS proxy Claude Code would use for `host` (HTTPS_PROXY, minus NO_PROXY)."""
    proxy = environ.get("HTTPS_PROXY") or environ.get("https_proxy")
    no_proxy = environ.get("NO_PROXY") or environ.get("no_proxy") or ""
    skipped = [h.strip().lstrip(".") for h in no_proxy.split(",") if h.strip()]
    if any(h == "*" or host == h or host.endswith("." + h) for h in skipped):
        return None
    return proxy or None


def connect_probe(host: str, port: int, proxy: Optional[str], timeout: float) -> str:
    """ "answers", "fails at once (...)" or "hangs": what a start-up fetch would meet."""
    import socket
    from urllib.parse import urlsplit

    target = (host, port)
    if proxy:
        parts = urlsplit(proxy if "://" in proxy else "http://" + proxy)
        target = (parts.hostname or "", parts.port or 80)
    try:
        with socket.create_connection(target, timeout=timeout) as sock:
            if proxy:
                sock.sendall(
                    f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()
                )
                if not sock.recv(64):
                    return "fails at once (the proxy closed the connection)"
    except socket.timeout:
        return "hangs"
    except OSError as exc:
        return f"fails at once ({exc.strerror or exc})"
    return "answers"


def check_round_trip(report: Report) -> None:
    mock = find_mock_claude()
    if mock is None:
        report.warn(
            "round trip",
            "skipped: no mock-claude next to claude-print and no mock_claude/claude checkout "
            "(install.sh installs it unless SKIP_MOCK_CLAUDE=1)",
        )
        return
    ok, detail = round_trip(mock)
    if ok:
        report.ok("round trip", detail)
    else:
        report.fail("round trip", detail)


def check_orphans(report: Report, clean: bool) -> None:
    root = tempfile.gettempdir()
    orphans = find_orphans(root, time.time())
    if not orphans:
        report.ok("temp dirs", f"no {TEMP_PREFIX}<pid>-* dirs older than 1h in {root}")
        return
    if not clean:
        names = ", ".join(os.path.basename(path) for path, _ in orphans)
        report.warn(
            "temp dirs",
            f"{len(orphans)} {TEMP_PREFIX}<pid>-* dir(s) older than 1h in {root}: {names} "
            "(`claude-print --check --clean` removes those whose run is gone)",
        )
        return
    removed: List[str] = []
    kept: List[str] = []
    failed: List[str] = []
    for path, pid in orphans:
        name = os.path.basename(path)
        # Not "is the pid alive": a pid is reused, and may belong to a process that started
        # after the dir's run died (leftovers.is_orphan compares start times).
        if not leftovers.is_orphan(path, pid):
            kept.append(f"{name} (pid {pid} is running)")
            continue
        try:
            shutil.rmtree(path)
        except OSError as exc:
            failed.append(f"{name} ({exc.strerror or exc})")
        else:
            removed.append(name)
    summary = f"removed {len(removed)} orphaned dir(s) from {root}"
    if failed:
        report.fail("temp dirs", f"{summary}; could not remove: {', '.join(failed)}")
    elif kept:
        report.warn("temp dirs", f"{summary}; kept: {', '.join(kept)}")
    else:
        report.ok("temp dirs", summary + (f": {', '.join(removed)}" if removed else ""))


def check_needle(report: Report) -> None:
    """Only where NEEDLE is installed or configured: does it run claude-print?"""
    from claude_print.needle import view as needle

    if not needle.is_set_up(os.environ):
        return
    for status, detail in needle.check(os.environ):
        report.line(status, "needle", detail)


# --- helpers ---------------------------------------------------------------------------


def find_orphans(root: str, now: float) -> List[Tuple[str, int]]:
    """(path, owning pid) of this user's relay dirs in `root` untouched for over an hour."""
    found = []
    for path, pid in leftovers.relay_dirs(root):
        try:
            if now - os.lstat(path).st_mtime > ORPHAN_AGE_SECS:
                found.append((path, pid))
        except OSError:
            continue  # removed meanwhile
    return found


def pid_alive(pid: int) -> bool:
    return leftovers.pid_alive(pid)


def _program_path() -> Optional[str]:
    """The running claude-print's file (the .pyz, or the installed script), if any."""
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else ""
    if not argv0 or argv0 == "-c":
        return None
    if os.sep not in argv0:
        found = shutil.which(argv0)
        if found is None:
            return None
        argv0 = found
    return os.path.abspath(argv0)


def _is_zipapp(path: Optional[str]) -> bool:
    return path is not None and os.path.isfile(path) and zipfile.is_zipfile(path)


def _checkout_root() -> str:
    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # claude_print/
    return os.path.dirname(package_dir)


def find_mock_claude() -> Optional[str]:
    """`mock-claude` beside the running program (install.sh), else a checkout's mock."""
    candidates: List[str] = []
    program = _program_path()
    if program is not None:
        for directory in (os.path.dirname(program), os.path.dirname(os.path.realpath(program))):
            candidates.append(os.path.join(directory, "mock-claude"))
            # dist/claude-print.pyz in a checkout
            candidates.append(os.path.join(directory, os.pardir, "mock_claude", "claude"))
    candidates.append(os.path.join(_checkout_root(), "mock_claude", "claude"))
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.normpath(os.path.abspath(candidate))
    return None


def self_command() -> Tuple[List[str], Dict[str, str]]:
    """How to start this claude-print again: argv, and environment additions."""
    program = _program_path()
    if _is_zipapp(program):
        assert program is not None
        return [sys.executable, program], {}
    return [sys.executable, "-m", "claude_print"], {"PYTHONPATH": _checkout_root()}


def round_trip_env(home: str, extra: Dict[str, str]) -> Dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(_ROUND_TRIP_DROPPED_PREFIXES)
        and name not in _ROUND_TRIP_DROPPED_NAMES
    }
    if "PYTHONPATH" in extra and env.get("PYTHONPATH"):
        extra = {"PYTHONPATH": extra["PYTHONPATH"] + os.pathsep + env["PYTHONPATH"]}
    env.update(extra)
    if not env.get("SHIV_ROOT"):
        # A .pyz keeps using its usual cache rather than extracting into the throw-away HOME.
        real_home = os.path.expanduser("~")
        if os.path.isabs(real_home):
            env["SHIV_ROOT"] = os.path.join(real_home, ".shiv")
    env.update(
        HOME=home, TMPDIR=os.path.join(home, "tmp"), XDG_CONFIG_HOME=os.path.join(home, ".config")
    )
    return env


def expected_answer(prompt: str) -> str:
    digest = hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:12]
    return f"ACK {len(prompt)} {digest}"


def round_trip(mock: str) -> Tuple[bool, str]:
    """Run claude-print on `mock` with a fixed prompt on stdin; (passed, detail)."""
    argv, extra = self_command()
    argv += [
        "--claude-binary",
        mock,
        "--output-format",
        "json",
        "--timeout",
        f"{ROUND_TRIP_TIMEOUT - 10:g}",
    ]
    home = tempfile.mkdtemp(prefix="claude-print-check-home-")
    try:
        project = os.path.join(home, "project")
        os.mkdir(project)
        os.mkdir(os.path.join(home, "tmp"))
        started = time.monotonic()
        try:
            proc = subprocess.run(
                argv,
                input=ROUND_TRIP_PROMPT.encode(),
                capture_output=True,
                cwd=project,
                env=round_trip_env(home, extra),
                timeout=ROUND_TRIP_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            return False, f"claude-print on {mock} did not finish in {ROUND_TRIP_TIMEOUT:g}s"
        except OSError as exc:
            return False, f"cannot run {argv[0]}: {exc}"
        elapsed = time.monotonic() - started
        return _judge(proc, mock, elapsed, home)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _judge(
    proc: subprocess.CompletedProcess[bytes], mock: str, elapsed: float, home: str
) -> Tuple[bool, str]:
    stderr = proc.stderr.decode("utf-8", "replace").strip()
    last_error = stderr.splitlines()[-1] if stderr else "no message on stderr"
    try:
        obj = json.loads(proc.stdout)
    except ValueError:
        obj = None
    if proc.returncode != 0:
        return False, f"claude-print on {mock} exited {proc.returncode}: {last_error}"
    if not isinstance(obj, dict):
        return False, f"claude-print on {mock} printed no JSON object: {proc.stdout[:200]!r}"
    want = expected_answer(ROUND_TRIP_PROMPT)
    if obj.get("result") != want or obj.get("is_error") is not False:
        return False, f"expected result {want!r}, got {obj.get('result')!r}"
    entry = _transcript_entrypoints(home, str(obj.get("session_id", "")))
    if entry != {"cli"}:
        return False, f"the transcript's entrypoint is {sorted(entry) or 'missing'}, not cli"
    leftovers = os.listdir(os.path.join(home, "tmp"))
    if leftovers:
        return False, f"claude-print left temp files behind: {leftovers}"
    return True, f"{mock} answered {want!r} in {elapsed:.1f}s (entrypoint cli)"


def _transcript_entrypoints(home: str, session_id: str) -> Set[str]:
    found: Set[str] = set()
    projects = os.path.join(home, ".claude", "projects")
    if not session_id or not os.path.isdir(projects):
        return found
    for slug in os.listdir(projects):
        path = os.path.join(projects, slug, session_id + ".jsonl")
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and isinstance(record.get("entrypoint"), str):
                    found.add(record["entrypoint"])
    return found
