#!/usr/bin/env python3
"""Benchmark claude-print against `claude -p` (issues 6, "As fast as `claude -p`", and 12,
"Fleet efficiency").

    python3 bench/bench.py [--release 2.1.197,2.1.330 | --claude BIN] [--runs N]
                           [--parallel 20] [--quick]

Starts the fake Messages API (tests/support/fake_api.py) in this process and drives the real
Claude Code of each release (scripts/install-claude-code) from a throw-away HOME. Everything
runs on the same machine in the same run, so the figures compare like with like:

- e2e: wall time of `claude-print "<prompt>"` and `claude -p "<prompt>"`, with the floor
  below, in rotating order, N runs each, in one project dir whose trust is pre-seeded
  in ~/.claude.json (the trust screen is not counted); plus one claude-print run in an
  untrusted dir.
- floor: the bare TUI on a PTY with the prompt as argv and a Stop hook that writes to a
  FIFO, no claude-print logic (no probe replies, no waits, output drained):
  spawn -> Stop, then SIGTERM -> exited.
- phases: claude-print --trace lines, timestamped again as they arrive here, and the
  moment the fake API saw each turn's request (same clock: the API runs in-process).
- cpu/rss: claude-print's own CPU and peak RSS, next to `python3 -c pass` and the shiv
  bootstrap (`python3 dist/claude-print.pyz --version`). How (see `run_measured`):
  * CPU: wait for the exit with waitid(WEXITED | WNOWAIT), which leaves the process a
    zombie, and read its own utime/stime from /proc/PID/stat (fields 14/15: all its
    threads, never its children, which are fields 16/17) and its on-CPU nanoseconds from
    /proc/PID/schedstat; only then reap it. wait4()/RUSAGE_CHILDREN would add the CPU of
    every descendant claude-print reaped (the whole Claude Code TUI).
  * RSS: a zombie has no memory map any more, and wait4()'s ru_maxrss is useless here:
    it is the max over the process's whole life, which includes the moments between
    fork and exec when it still had this benchmark's memory map (the kernel records the
    old map's high-water mark at exec), and over every descendant it reaped (Claude Code,
    ~300 MB). So VmHWM, the high-water mark of the process's own map (post-exec only; it
    never decreases), is read from /proc/PID/status every 1 ms for the first 300 ms and
    every 5 ms after that while the process lives; the last sample misses at most the
    final poll interval. (wait4's figure is kept in the JSON as wait4_maxrss_kb.)
- stop->output: `hook Stop` -> `result printed` in the --trace lines; the benchmark
  also polls the transcript itself, to split that into the TUI's share (until the
  turn's prompt and final answer are on disk) and claude-print's.
- parallel: P claude-print runs at once, then P `claude -p` runs, then P bare TUIs, distinct
  prompts; every answer must be `ACK <len> <sha12>` of its own prompt.
- fleet (issue 12): claude-print, the bare TUI and `claude -p`, whole process trees
  (`run_many`): CPU while the model works (an answer after 16 s, tree CPU from 4 s to 14 s:
  utime+stime+cutime+cstime summed over /proc), CPU and wall of a short run (wait4 of the
  top process: its own CPU and every descendant's it reaped), peak RSS (summed VmRSS of
  the tree every 100 ms), API requests per run (the fake API's hits during the run) in the
  bench's env (non-essential traffic off), with it on, and with a subscription (OAuth).

claude-print's Python caches bytecode as on a user's machine (PYTHONDONTWRITEBYTECODE is
dropped, PYTHONPYCACHEPREFIX points into the temp dir); one baseline row shows the cost
without a bytecode cache. The 1-minute load average at each phase is recorded: figures
taken on a busy machine are noise. Prints a table per release and writes the same as JSON
to bench/results-RELEASE.json, and all releases to bench/results-latest.json. Tests never
run this, and nothing asserts on wall-clock time.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import errno
import fcntl
import hashlib
import importlib.util
import json
import os
import pty
import re
import select
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
PYZ = ROOT / "dist" / "claude-print.pyz"
POLL = 0.005  # /proc sampling interval while a measured process runs...
FAST_POLL, FAST_FOR = 0.001, 0.3  # ...and at first, when short-lived baselines run
RUN_TIMEOUT = 180.0
WINDOW_ROWS, WINDOW_COLS = 50, 200  # what claude-print gives the TUI
TRACE_RE = re.compile(r"^\[claude-print \+\s*([0-9.]+)s\] (.*)$")
CLK_TCK = os.sysconf("SC_CLK_TCK")

Stats = Dict[str, Any]


# --- the fake API, with a clock -------------------------------------------


def _load_fake_api() -> Any:
    """tests/support/fake_api.py (the fake API, the pinned Claude Code, the seeded HOME)."""
    spec = importlib.util.spec_from_file_location(
        "fake_api", ROOT / "tests" / "support" / "fake_api.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fake_api"] = module
    spec.loader.exec_module(module)
    return module


FAKE_API: Any = _load_fake_api()


class Api:
    """tests/support/fake_api.py's server in a thread; remembers when each turn's request
    came in."""

    def __init__(self) -> None:
        module = FAKE_API
        self.module: Any = module
        self.server: Any = module.FakeApiServer().start()
        self.url: str = self.server.url
        self._lock = threading.Lock()
        self._first_seen: Dict[str, float] = {}
        original: Callable[[Dict[str, Any]], None] = self.server.record

        def record(entry: Dict[str, Any]) -> None:
            now = time.monotonic()
            if not entry.get("side"):
                with self._lock:
                    self._first_seen.setdefault(str(entry.get("prompt")), now)
            original(entry)

        self.server.record = record  # the handler calls self.server.record(...)

    def request_time(self, prompt: str) -> Optional[float]:
        with self._lock:
            return self._first_seen.get(prompt)

    def expected(self, prompt: str) -> str:
        kind, text = self.module.plan_reply({"messages": [{"role": "user", "content": prompt}]})
        assert kind == "text"
        return str(text)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# --- measuring one process ------------------------------------------------


@dataclass
class Measured:
    argv: List[str]
    started: float  # monotonic, just before spawning
    wall: float = 0.0  # spawn -> exit (seconds)
    returncode: Optional[int] = None
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_at: Optional[float] = None  # first stdout byte, seconds after spawn
    lines: List[Tuple[float, str]] = field(default_factory=list)  # stderr lines, arrival
    user_s: float = 0.0  # own CPU (all threads, no children), 1/CLK_TCK resolution
    sys_s: float = 0.0
    sched_s: Optional[float] = None  # main thread's on-CPU time, ns resolution
    children_cpu_s: float = 0.0  # cutime + cstime: descendants it reaped
    hwm_kb: Optional[int] = None  # last VmHWM sample before the exit
    samples: int = 0
    wait4_maxrss_kb: int = 0  # max over the process and every descendant it reaped
    tree_cpu_s: float = 0.0  # wait4: its own CPU plus that of every descendant it reaped
    timed_out: bool = False

    @property
    def cpu_s(self) -> float:
        """Own CPU: ticks cover every thread but are 10 ms coarse; schedstat is exact but
        covers the main thread only. Python is single-threaded here, Claude Code is not."""
        return max(self.user_s + self.sys_s, self.sched_s or 0.0)


def _read_hwm_kb(pid: int) -> Optional[int]:
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            data = f.read()
    except OSError:
        return None
    for line in data.splitlines():
        if line.startswith(b"VmHWM:"):
            return int(line.split()[1])
    return None  # a zombie: its memory map is gone


def _zombie_cpu(pid: int, m: Measured) -> None:
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    # fields[0] is field 3 (state): utime=14, stime=15, cutime=16, cstime=17.
    m.user_s = int(fields[11]) / CLK_TCK
    m.sys_s = int(fields[12]) / CLK_TCK
    m.children_cpu_s = (int(fields[13]) + int(fields[14])) / CLK_TCK
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as f:
            m.sched_s = int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        m.sched_s = None


def _exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def run_measured(
    argv: Sequence[str],
    cwd: str,
    env: Dict[str, str],
    timeout: float = RUN_TIMEOUT,
    tick: Optional[Callable[[float], None]] = None,
    stdin: Optional[bytes] = None,
) -> Measured:
    """Run to completion; stderr lines are timestamped as they arrive (see module doc)."""
    m = Measured(list(argv), time.monotonic())
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    if proc.stdin is not None:  # a short prompt: fits the pipe buffer, written at once
        proc.stdin.write(stdin or b"")
        proc.stdin.close()
    pid = proc.pid
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    open_fds = [out_fd, err_fd]
    for fd in open_fds:
        os.set_blocking(fd, False)
    out, err, partial = bytearray(), bytearray(), b""
    deadline = m.started + timeout

    def take(fd: int, now: float) -> Optional[bool]:
        """True: read something; None: nothing ready; False: end of file."""
        nonlocal partial
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return None
        if not chunk:
            return False
        if fd == out_fd:
            if m.stdout_at is None:
                m.stdout_at = now - m.started
            out.extend(chunk)
        else:
            err.extend(chunk)
            *done, partial = (partial + chunk).split(b"\n")
            m.lines += [(now - m.started, d.decode("utf-8", "replace")) for d in done]
        return True

    exited: Optional[float] = None
    while exited is None:
        poll = FAST_POLL if time.monotonic() - m.started < FAST_FOR else POLL
        if open_fds:
            ready, _, _ = select.select(open_fds, [], [], poll)
        else:
            time.sleep(0.001)  # both pipes at EOF: the process is exiting
            ready = []
        now = time.monotonic()
        for fd in ready:
            if take(fd, now) is False:
                open_fds.remove(fd)
        if tick is not None:
            tick(now - m.started)
        hwm = _read_hwm_kb(pid)
        if hwm is not None:
            m.hwm_kb = hwm
            m.samples += 1
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            exited = time.monotonic()
        elif now > deadline and not m.timed_out:
            m.timed_out = True
            proc.terminate()
            deadline = now + 5.0
        elif now > deadline:
            proc.kill()
    m.wall = exited - m.started
    _zombie_cpu(pid, m)
    _, status, usage = os.wait4(pid, 0)  # reap
    proc.returncode = m.returncode = _exit_code(status)
    m.wait4_maxrss_kb = usage.ru_maxrss
    m.tree_cpu_s = usage.ru_utime + usage.ru_stime
    for fd in open_fds:  # what was written just before the exit
        while take(fd, time.monotonic()):
            pass
    if partial:
        m.lines.append((m.wall, partial.decode("utf-8", "replace")))
    proc.stdout.close()
    proc.stderr.close()
    m.stdout, m.stderr = bytes(out), bytes(err)
    return m


# --- the bare TUI on a PTY ------------------------------------------------


@dataclass
class FloorRun:
    request: Optional[float] = None  # spawn -> the turn's request at the fake API
    stop: Optional[float] = None  # spawn -> the Stop hook's line in the FIFO
    exit_after_term: Optional[float] = None  # SIGTERM -> child reaped
    total: Optional[float] = None  # spawn -> child reaped
    error: str = ""


def _set_ctty() -> None:
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def spawn_on_pty(
    argv: Sequence[str], cwd: str, env: Dict[str, str]
) -> Tuple[subprocess.Popen[bytes], int]:
    """`argv` on a new PTY of the bench's window size, as its session leader; the PTY's
    master end, non-blocking."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", WINDOW_ROWS, WINDOW_COLS, 0, 0))
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=env,
            start_new_session=True,
            preexec_fn=_set_ctty,
        )
    finally:
        os.close(slave)
    os.set_blocking(master, False)
    return proc, master


def run_floor(
    claude: str, prompt: str, cwd: str, env: Dict[str, str], settings: str, fifo_fd: int, api: Api
) -> FloorRun:
    """`claude --settings S -- PROMPT` on a PTY; drain its output, answer nothing."""
    result = FloorRun()
    started = time.monotonic()
    proc, master = spawn_on_pty([claude, "--settings", settings, "--", prompt], cwd, env)
    pty_open = True

    def drain() -> None:
        nonlocal pty_open
        try:
            while os.read(master, 65536):
                pass
        except BlockingIOError:
            pass
        except OSError as exc:  # EIO: every slave fd closed
            if exc.errno != errno.EIO:
                raise
            pty_open = False

    deadline = started + RUN_TIMEOUT
    buffer = b""
    while result.stop is None:
        ready, _, _ = select.select([master, fifo_fd] if pty_open else [fifo_fd], [], [], 0.25)
        now = time.monotonic()
        if master in ready:
            drain()
        if fifo_fd in ready:
            with contextlib.suppress(BlockingIOError):
                buffer += os.read(fifo_fd, 4096)
            if b"Stop\n" in buffer:
                result.stop = now - started
        if result.stop is None and (now > deadline or proc.poll() is not None):
            result.error = "timed out" if now > deadline else f"exited {proc.returncode}"
            break
    term_at = time.monotonic()
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGTERM)  # the leader, as claude-print does
    while True:
        if pty_open:
            ready, _, _ = select.select([master], [], [], POLL)
            if ready:
                drain()
        else:
            time.sleep(0.001)
        if proc.poll() is not None:
            break
        if time.monotonic() - term_at > 10:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
    done = time.monotonic()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # nothing of its group outlives it
    os.close(master)
    if result.stop is not None:
        result.exit_after_term = done - term_at
        result.total = done - started
    seen = api.request_time(prompt)
    result.request = None if seen is None else seen - started
    return result


def run_idle_floor(
    claude: str, prompt: str, cwd: str, env: Dict[str, str], settings: str, fifo_fd: int, api: Api
) -> Dict[str, Optional[float]]:
    """The floor of a warm run: the bare TUI's own first turn at an idle input box.
    `claude --settings S` on a PTY, left alone until it has drawn nothing for 1 s (and at
    least 3 s: its background start-up is over, as at a keeper's box), then the prompt
    typed (our own plain text) and Enter. Enter -> its request at the fake API, Enter ->
    the Stop hook's line. No claude-print logic: what a warm run cannot go below."""
    started = time.monotonic()
    proc, master = spawn_on_pty([claude, "--settings", settings], cwd, env)

    def drain(until: float, quiet: float = 0.0) -> bytes:
        """Read the PTY until `until`, or (with `quiet`) until it has been quiet so long."""
        fifo, last = b"", time.monotonic()
        while time.monotonic() < until:
            ready, _, _ = select.select([master, fifo_fd], [], [], 0.01)
            now = time.monotonic()
            if master in ready:
                with contextlib.suppress(BlockingIOError, OSError):
                    if os.read(master, 65536):
                        last = now
            if fifo_fd in ready:
                with contextlib.suppress(BlockingIOError):
                    fifo += os.read(fifo_fd, 4096)
                if b"Stop\n" in fifo:
                    return fifo
            if quiet and now - last >= quiet and now - started >= 3.0:
                break
        return fifo

    out: Dict[str, Optional[float]] = {"request": None, "stop": None}
    try:
        drain(started + 60.0, quiet=1.0)
        os.write(master, prompt.encode())
        drain(time.monotonic() + 0.2)
        enter = time.monotonic()
        os.write(master, b"\r")
        if b"Stop\n" in drain(enter + RUN_TIMEOUT):
            out["stop"] = time.monotonic() - enter
        seen = api.request_time(prompt)
        out["request"] = None if seen is None else seen - enter
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        os.close(master)
    return out


# --- whole process trees, many at once (issue 12, "Fleet efficiency") -------


def _children() -> Dict[int, List[int]]:
    kids: Dict[int, List[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(name))
    return kids


def tree_usage(root: int, kids: Dict[int, List[int]]) -> Tuple[float, int]:
    """(CPU seconds, RSS kB) of a live process tree: utime+stime+cutime+cstime of every
    member (what a member reaped stays counted), and the sum of the members' VmRSS."""
    cpu, rss, todo = 0, 0, [root]
    while todo:
        pid = todo.pop()
        todo += kids.get(pid, [])
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        cpu += sum(int(x) for x in fields[11:15])
        rss += int(fields[21]) * os.sysconf("SC_PAGE_SIZE") // 1024
    return cpu / CLK_TCK, rss


@dataclass
class Job:
    """One run: `argv` on pipes, or (tui) `claude --settings S -- prompt` on a PTY that
    gets SIGTERM once its Stop hook has fired, as claude-print does."""

    argv: List[str]
    prompt: str
    env: Dict[str, str]
    tui: bool = False
    pid: int = 0
    started: float = 0.0
    wall: Optional[float] = None  # spawn -> reaped
    stop: Optional[float] = None  # spawn -> Stop hook (tui)
    rc: Optional[int] = None
    tree_cpu_s: float = 0.0  # wait4: its own CPU and that of every descendant it reaped
    window_cpu: Dict[float, float] = field(default_factory=dict)  # spawn+t -> tree CPU
    peak_rss_kb: int = 0  # max over 100 ms samples of the tree's summed RSS
    hits: List[Dict[str, Any]] = field(default_factory=list)  # fake API, spawn -> reaped
    out: bytearray = field(default_factory=bytearray)

    def window_pct(self) -> Optional[float]:
        if len(self.window_cpu) != 2:
            return None
        (a, ca), (b, cb) = sorted(self.window_cpu.items())
        return 100.0 * (cb - ca) / (b - a)


def run_many(jobs: Sequence[Job], cwd: str, window: Sequence[float] = ()) -> None:
    """Start every job at once; sample each tree every 100 ms (peak RSS, and its CPU at
    the `window` times after spawn); reap each with wait4 for its whole-tree CPU."""
    scratch = tempfile.mkdtemp(prefix="fleet-")
    fifo = os.path.join(scratch, "stop.fifo")
    os.mkfifo(fifo, 0o600)
    fifo_fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    keeper = os.open(fifo, os.O_WRONLY)
    fds: Dict[int, Job] = {}
    for i, job in enumerate(jobs):
        job.started = time.monotonic()
        if job.tui:
            hook = {"type": "command", "command": f"echo Stop {i} >> {shlex.quote(fifo)}"}
            settings = os.path.join(scratch, f"settings-{i}.json")
            Path(settings).write_text(json.dumps({"hooks": {"Stop": [{"hooks": [hook]}]}}))
            master, slave = pty.openpty()
            size = struct.pack("HHHH", WINDOW_ROWS, WINDOW_COLS, 0, 0)
            fcntl.ioctl(slave, termios.TIOCSWINSZ, size)
            argv = [*job.argv, "--settings", settings, "--", job.prompt]
            kw: Dict[str, Any] = dict(stdin=slave, stdout=slave, stderr=slave)
            proc = subprocess.Popen(
                argv, cwd=cwd, env=job.env, start_new_session=True, preexec_fn=_set_ctty, **kw
            )
            os.close(slave)
            fds[master] = job
        else:
            proc = subprocess.Popen(
                job.argv,
                cwd=cwd,
                env=job.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            assert proc.stdout is not None
            fds[os.dup(proc.stdout.fileno())] = job
            proc.stdout.close()
        proc.returncode = 0  # reaped below with wait4, not by Popen
        job.pid = proc.pid
    for fd in fds:
        os.set_blocking(fd, False)
    live = {job.pid: job for job in jobs}
    sampled, deadline, fifo_buf = 0.0, time.monotonic() + RUN_TIMEOUT, b""
    while live:
        ready, _, _ = select.select([fifo_fd, *fds], [], [], 0.02)
        now = time.monotonic()
        for fd in ready:
            if fd == fifo_fd:
                with contextlib.suppress(BlockingIOError):
                    fifo_buf += os.read(fd, 4096)
                *lines, fifo_buf = fifo_buf.split(b"\n")
                for line in lines:
                    job = jobs[int(line.split()[1])]
                    if job.stop is None:
                        job.stop = now - job.started
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(job.pid, signal.SIGTERM)
                continue
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                continue
            except OSError:  # EIO: the PTY's last slave fd closed
                chunk = b""
            if chunk and not fds[fd].tui:
                fds[fd].out += chunk
            if not chunk:
                os.close(fd)
                del fds[fd]
        if now - sampled >= 0.1:
            sampled, kids = now, _children()
            for job in live.values():
                cpu, rss = tree_usage(job.pid, kids)
                job.peak_rss_kb = max(job.peak_rss_kb, rss)
                for t in window:
                    if t not in job.window_cpu and now - job.started >= t:
                        job.window_cpu[t] = cpu
        for pid, job in list(live.items()):
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                job.wall, job.rc = time.monotonic() - job.started, _exit_code(status)
                job.tree_cpu_s = usage.ru_utime + usage.ru_stime
                del live[pid]
                if job.tui:  # nothing of its group outlives it
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(pid, signal.SIGKILL)
            elif now > deadline:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL) if job.tui else os.kill(pid, signal.SIGKILL)
    for fd in fds:
        os.close(fd)
    os.close(fifo_fd)
    os.close(keeper)
    shutil.rmtree(scratch, ignore_errors=True)


CONTENDERS = {"claude_print": "claude-print", "bare_tui": "bare TUI", "claude_p": "claude -p"}


def _requests(job: Job) -> Dict[str, Any]:
    """The fake API's hits during one run: POSTs (billed requests), and every hit's kind."""
    kinds = [f"{h['method']} {h['kind']}" for h in job.hits]
    return {"posts": sum(1 for h in job.hits if h["method"] == "POST"), "kinds": kinds}


# --- statistics and trace parsing -----------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def summary(values: Sequence[Optional[float]], scale: float = 1000.0) -> Stats:
    """Median / p90 / min / max, in ms for seconds (scale 1000)."""
    got = [v * scale for v in values if v is not None]
    if not got:
        return {"n": 0}
    return {
        "n": len(got),
        "median": round(percentile(got, 0.5), 1),
        "p90": round(percentile(got, 0.9), 1),
        "min": round(min(got), 1),
        "max": round(max(got), 1),
    }


def trace_events(m: Measured) -> Dict[str, Tuple[float, float]]:
    """Trace event -> (time in the trace, arrival time here), both seconds."""
    names = (
        ("relay dir", "setup"),
        ("spawned ", "spawned"),
        ("trust screen", "trust_answered"),
        ("input box ready", "input_ready"),
        ("hook Stop", "hook_stop"),
        ("result printed", "result_printed"),
        ("child ", "child_ended"),
    )
    events: Dict[str, Tuple[float, float]] = {}
    for arrived, line in m.lines:
        match = TRACE_RE.match(line)
        if not match:
            continue
        at, message = float(match.group(1)), match.group(2)
        if message.startswith("hook StopFailure"):
            continue
        for prefix, name in names:
            ok = message.startswith(prefix) and (name != "child_ended" or "ended" in message)
            if ok and name not in events:
                events[name] = (at, arrived)
    return events


def _gap(events: Dict[str, Tuple[float, float]], a: str, b: str, i: int) -> Optional[float]:
    if a in events and b in events:
        return events[b][i] - events[a][i]
    return None


class TurnWatcher:
    """Polls the transcript dir during a run: when are the turn's prompt and final answer
    on disk? (What claude-print waits for after Stop; the TUI flushes every ~100 ms.)"""

    def __init__(self, home: Path, cwd: Path, prompt: str, out: Dict[str, float]) -> None:
        real = os.path.realpath(cwd)
        slug = "".join(c if c.isascii() and c.isalnum() else "-" for c in real)
        self.dir = home / ".claude" / "projects" / slug
        self.before = set(self.dir.glob("*.jsonl")) if self.dir.is_dir() else set()
        self.prompt = prompt
        self.out = out
        self.path: Optional[Path] = None
        self.size = -1

    def __call__(self, elapsed: float) -> None:
        if "on_disk" in self.out:
            return
        if self.path is None:
            if not self.dir.is_dir():
                return
            new = [p for p in self.dir.glob("*.jsonl") if p not in self.before]
            if not new:
                return
            self.path = new[0]
        try:
            data = self.path.read_bytes()
        except OSError:
            return
        if len(data) == self.size:
            return
        self.size = len(data)
        user = answer = False
        for line in data.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            message = record.get("message") if isinstance(record, dict) else None
            if not isinstance(message, dict):
                continue
            if record.get("type") == "user" and self.prompt in json.dumps(message["content"]):
                user = True
            if record.get("type") == "assistant" and message.get("stop_reason") == "end_turn":
                answer = True
        if user and answer:
            self.out["on_disk"] = elapsed


# --- the benchmark --------------------------------------------------------


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.claude = str(Path(args.claude).resolve())
        self.api = Api()
        self.root = Path(tempfile.mkdtemp(prefix="claude-print-bench-"))
        self.home = self.root / "home"
        self.project = self.root / "project"
        self.tmp = self.root / "tmp"
        self.bin = self.root / "bin"
        for d in (self.home, self.project, self.tmp, self.bin):
            d.mkdir()
        (self.bin / "claude").symlink_to(self.claude)
        FAKE_API.seed_home(self.home, trusted=[self.project])
        self.env = self._env()
        if args.claude_print == "installed":
            self.claude_print = [self._install()]
        elif args.claude_print == "pyz":
            self.claude_print = [sys.executable, str(PYZ)]
        else:
            self.claude_print = [sys.executable, "-m", "claude_print"]
        self.counter = 0
        self.cp_runs: List[Measured] = []  # the e2e claude-print runs, for cpu/rss
        self.floor_runs: List[FloorRun] = []  # the bare-TUI runs, interleaved with e2e
        # 1-minute load average at the start of each sequential phase (the bench itself
        # keeps one or two cores busy; more means someone else is using the machine)
        self.loads: List[float] = []

    def _install(self) -> str:
        """install.sh into the temp dir, as a user would run it; the installed command."""
        prefix = self.root / "prefix"
        env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_PRINT")}
        env.update(PREFIX=str(prefix), HOME=str(self.home), SKIP_CHECK="1", SKIP_MOCK_CLAUDE="1")
        subprocess.run(
            ["/bin/sh", str(ROOT / "install.sh")], env=env, check=True, stdout=subprocess.DEVNULL
        )
        return str(prefix / "bin" / "claude-print")

    def _env(self) -> Dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("CLAUDE_CODE_", "ANTHROPIC_", "SHIV_"))
            and k not in ("CLAUDECODE", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
        }
        env.update(
            HOME=str(self.home),
            TMPDIR=str(self.tmp),
            ANTHROPIC_BASE_URL=self.api.url,
            ANTHROPIC_API_KEY=FAKE_API.FAKE_KEY,
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            XDG_CONFIG_HOME=str(self.home / ".config"),
            PATH=f"{self.bin}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            # Bytecode is cached as on a user's machine (this sandbox sets
            # PYTHONDONTWRITEBYTECODE=1), but outside the source tree.
            PYTHONPYCACHEPREFIX=str(self.root / "pycache"),
        )
        if self.args.claude_print == "module":
            env["PYTHONPATH"] = str(ROOT)
        env.setdefault("TERM", "xterm-256color")
        return env

    def prompt(self, kind: str) -> str:
        self.counter += 1
        return f"Benchmark prompt {kind} #{self.counter}: reply with an acknowledgement."

    def close(self) -> None:
        self.api.close()
        if not self.args.keep:
            shutil.rmtree(self.root, ignore_errors=True)

    def log(self, text: str, own_batch_running: bool = False) -> None:
        load = os.getloadavg()[0]
        if not own_batch_running:
            self.loads.append(load)
        sys.stderr.write(f"[bench +{time.monotonic() - T0:6.1f}s] (load {load:.1f}) {text}\n")
        sys.stderr.flush()

    def correct(self, m: Measured, prompt: str) -> bool:
        return m.returncode == 0 and m.stdout == (self.api.expected(prompt) + "\n").encode()

    # one run of each kind

    def claude_print_run(
        self,
        cwd: Path,
        verbose: bool = False,
        watch: Optional[Dict[str, float]] = None,
        via_stdin: bool = False,
    ) -> Tuple[Measured, str]:
        """One run; the prompt as an argument, or (as NEEDLE does) on stdin: the paste path."""
        prompt = self.prompt("cp")
        argv = [*self.claude_print, *(["--trace"] if verbose else [])]
        tick = None if watch is None else TurnWatcher(self.home, cwd, prompt, watch)
        if via_stdin:
            return run_measured(argv, str(cwd), self.env, tick=tick, stdin=prompt.encode()), prompt
        return run_measured([*argv, prompt], str(cwd), self.env, tick=tick), prompt

    def claude_p_run(self, extra: Sequence[str] = ()) -> Tuple[Measured, str]:
        prompt = self.prompt("p")
        argv = ["claude", "-p", prompt, *extra]  # a variadic flag must not take the prompt
        return run_measured(argv, str(self.project), self.env), prompt

    # phases

    def e2e(self, runs: int) -> Dict[str, Any]:
        """claude-print, claude -p and the bare TUI floor, in rotating order.

        Interleaving the three keeps a slow spell of a shared machine from landing on
        one of them only (the floor once ran as its own block and came out 100 ms
        faster than the TUI under claude-print for no reason but timing)."""
        self.log(
            f"e2e: {runs} x claude-print (argument, stdin), claude -p and the bare TUI, rotating"
        )
        cp: List[Measured] = []
        cp_prompts: List[str] = []
        p: List[Measured] = []
        p_prompts: List[str] = []
        stdin_runs: List[Measured] = []
        bad: List[str] = []
        contenders = ["cp", "p", "floor", "cps"]
        with self._floor_hook() as (settings, fifo_fd):
            for i in range(runs):
                shift = i % len(contenders)
                for which in contenders[shift:] + contenders[:shift]:
                    if which == "cps":
                        m, prompt = self.claude_print_run(self.project, via_stdin=True)
                        stdin_runs.append(m)
                        if not self.correct(m, prompt):
                            bad.append(f"cps: rc={m.returncode} err={m.stderr[-300:]!r}")
                        continue
                    if which == "floor":
                        self.floor_runs.append(
                            run_floor(
                                self.claude,
                                self.prompt("floor"),
                                str(self.project),
                                self.env,
                                settings,
                                fifo_fd,
                                self.api,
                            )
                        )
                        continue
                    self._e2e_one(which, cp, cp_prompts, p, p_prompts, bad)
        self.cp_runs = cp
        cp_wall, p_wall = summary([m.wall for m in cp]), summary([m.wall for m in p])
        request = summary([self._since(m, pr) for m, pr in zip(cp, cp_prompts)])
        p_request = summary([self._since(m, pr) for m, pr in zip(p, p_prompts)])
        return {
            "claude_print": {
                "wall_ms": cp_wall,
                "request_ms": request,
                "argv0": self.claude_print,
                "samples_ms": [round(m.wall * 1000, 1) for m in cp],
                "tree_cpu_ms": summary([m.tree_cpu_s for m in cp]),
                "stalls_over_2500ms": sum(1 for m in cp if m.wall > 2.5),
            },
            "claude_print_stdin": {
                "wall_ms": summary([m.wall for m in stdin_runs]),
                "samples_ms": [round(m.wall * 1000, 1) for m in stdin_runs],
            },
            "claude_p": {
                "wall_ms": p_wall,
                "request_ms": p_request,
                "stdout_ms": summary([m.stdout_at for m in p]),
                "cpu_ms": summary([m.cpu_s for m in p]),
                "tree_cpu_ms": summary([m.tree_cpu_s for m in p]),
                "rss_kb": summary([m.hwm_kb for m in p], 1),
                "samples_ms": [round(m.wall * 1000, 1) for m in p],
            },
            "ratio_median": round(cp_wall["median"] / p_wall["median"], 2),
            "ratio_p90": round(cp_wall["p90"] / p_wall["p90"], 2),
            "failures": bad,
        }

    def _e2e_one(
        self,
        which: str,
        cp: List[Measured],
        cp_prompts: List[str],
        p: List[Measured],
        p_prompts: List[str],
        bad: List[str],
    ) -> None:
        if which == "cp":
            m, prompt = self.claude_print_run(self.project)
            cp.append(m)
            cp_prompts.append(prompt)
        else:
            m, prompt = self.claude_p_run()
            p.append(m)
            p_prompts.append(prompt)
        if not self.correct(m, prompt):
            bad.append(f"{which}: rc={m.returncode} out={m.stdout[:80]!r} err={m.stderr[-300:]!r}")

    def _since(self, m: Measured, prompt: str) -> Optional[float]:
        seen = self.api.request_time(prompt)
        return None if seen is None else seen - m.started

    def warm_all(self, runs: int, sequential: int) -> Dict[str, Any]:
        """Issue 30: the warm start where users wait. Paired runs, bare and with an MCP
        server that takes 2 s to start (as npx-launched servers do); `sequential` runs
        back to back (NEEDLE's beads: the next starts as the last ends); and the floor, the
        bare TUI's own first turn at an idle box."""
        slow = self.root / "mcp-slow.json"
        server = [
            sys.executable,
            str(ROOT / "tests" / "support" / "mcp_echo.py"),
            str(self.root / "mcp.log"),
        ]
        config = {"mcpServers": {"slow": {"command": server[0], "args": [*server[1:], "2"]}}}
        slow.write_text(json.dumps(config))
        mcp = ["--mcp-config", str(slow)]
        return {
            "bare": self.warm(runs, "bare"),
            "mcp_2s": self.warm(max(3, runs // 2), "mcp_2s", mcp),
            f"sequential_{sequential}": self.sequential(sequential),
            "idle_floor": self.idle_floor(max(3, runs // 2)),
        }

    def warm(self, runs: int, name: str, extra: Sequence[str] = ()) -> Dict[str, Any]:
        """`claude -p`, claude-print --warm (a keeper at its input box) and claude-print
        cold, paired, in rotating order, each with the flags `extra`. Every contender
        starts once the keeper left by the last warm run is at its box, so none of them
        shares the CPU with a booting TUI (the sequential runs show what a fleet that
        starts the next run at once gets)."""
        self.log(f"warm {name}: {runs} x claude -p, claude-print --warm and claude-print cold")
        runtime = self.root / f"rw-{name}"  # short: a socket path has 107 bytes
        runtime.mkdir(mode=0o700)
        env = {**self.env, "XDG_RUNTIME_DIR": str(runtime)}
        keepers = runtime / f"claude-print-{os.getuid()}"
        warm_up = [*self.claude_print, *extra, "--warm-up"]
        subprocess.run(warm_up, cwd=self.project, env=env, check=True)
        walls: Dict[str, List[float]] = {"p": [], "warm": [], "settled": [], "cold": []}
        warm_kinds = ("warm", "settled")  # the contenders that run with --warm
        adopted: Dict[str, int] = {which: 0 for which in warm_kinds}
        bad: List[str] = []
        # warm runs: start -> the fake API has the turn
        requests: Dict[str, List[Optional[float]]] = {"warm": [], "settled": []}
        order = ["p", "warm", "settled", "cold"]
        try:
            for i in range(runs):
                shift = i % len(order)
                for which in order[shift:] + order[:shift]:
                    _await_keeper(keepers)
                    if which == "settled":
                        _await_settled(str(self.bin / "claude"))
                    if which == "p":
                        m, prompt = self.claude_p_run(extra)
                    else:
                        prompt = self.prompt(which)
                        flags = ["--warm", "--trace"] if which in warm_kinds else []
                        argv = [*self.claude_print, *flags, prompt, *extra]
                        m = run_measured(argv, str(self.project), env)
                        if which in warm_kinds:
                            adopted[which] += b"runs the prompt" in m.stderr
                            requests[which].append(self._since(m, prompt))
                    walls[which].append(m.wall)
                    if not self.correct(m, prompt):
                        bad.append(f"{which}: rc={m.returncode} err={m.stderr[-300:]!r}")
        finally:
            _stop_keepers(keepers)
        p_med = percentile(walls["p"], 0.5)
        return {
            "flags": list(extra),
            "claude_p": {"wall_ms": summary(walls["p"])},
            **{
                which: {
                    "wall_ms": summary(walls[which]),
                    "request_ms": summary(requests[which]),
                    "adopted": adopted[which],
                }
                for which in warm_kinds
            },
            "cold": {"wall_ms": summary(walls["cold"])},
            "warm_ratio_median": round(percentile(walls["warm"], 0.5) / p_med, 2),
            "settled_ratio_median": round(percentile(walls["settled"], 0.5) / p_med, 2),
            "cold_ratio_median": round(percentile(walls["cold"], 0.5) / p_med, 2),
            "runs": runs,
            "bad": bad,
        }

    def sequential(self, count: int, pool: int = 3) -> Dict[str, Any]:
        """`count` runs back to back, each started the moment the last one ended, for
        `claude -p`, claude-print --warm (one keeper, then a pool of `pool`) and cold:
        the whole batch's wall time."""
        self.log(f"sequential: {count} x claude -p, --warm, --warm-pool {pool}, cold")
        out: Dict[str, Any] = {"runs": count, "pool": pool, "bad": []}
        contenders = {
            "claude_p": None,
            "warm": ["--warm"],
            f"warm_pool_{pool}": ["--warm", "--warm-pool", str(pool)],
            "cold": [],
        }
        for name, flags in contenders.items():
            runtime = self.root / f"rs{len(out)}"  # short: a socket path has 107 bytes
            runtime.mkdir(mode=0o700)
            env = {**self.env, "XDG_RUNTIME_DIR": str(runtime)}
            keepers = runtime / f"claude-print-{os.getuid()}"
            if flags:
                up = [*self.claude_print, *flags[1:], "--warm-up"]
                subprocess.run(up, cwd=self.project, env=env, check=True)
                _await_keeper(keepers)
            walls, adopted, began = [], 0, time.monotonic()
            try:
                for _ in range(count):
                    if flags is None:
                        m, prompt = self.claude_p_run()
                    else:
                        prompt = self.prompt(name)
                        argv = [*self.claude_print, *flags, "--trace", prompt]
                        m = run_measured(argv, str(self.project), env)
                        adopted += b"runs the prompt" in m.stderr
                    walls.append(m.wall)
                    if not self.correct(m, prompt):
                        out["bad"].append(f"{name}: rc={m.returncode} err={m.stderr[-300:]!r}")
                total = time.monotonic() - began
            finally:
                if flags:
                    _stop_keepers(keepers)
            out[name] = {"total_s": round(total, 2), "wall_ms": summary(walls)}
            if flags:
                out[name]["adopted"] = adopted
        p_total = out["claude_p"]["total_s"]
        for name in contenders:
            out[name]["ratio"] = round(out[name]["total_s"] / p_total, 2)
        return out

    def idle_floor(self, runs: int) -> Dict[str, Any]:
        """The bare TUI's first turn at an idle box (run_idle_floor), `runs` fresh TUIs."""
        self.log(f"idle floor: {runs} x the bare TUI's first turn at an idle box")
        rows = []
        with self._floor_hook("idle-floor") as (settings, fifo_fd):
            for _ in range(runs):
                prompt = self.prompt("idle")
                env = dict(self.env)
                rows.append(
                    run_idle_floor(
                        self.claude, prompt, str(self.project), env, settings, fifo_fd, self.api
                    )
                )
        return {
            "enter_to_request_ms": summary([r["request"] for r in rows]),
            "enter_to_stop_ms": summary([r["stop"] for r in rows]),
        }

    def phases(self, runs: int) -> Dict[str, Any]:
        self.log(f"phases: {runs} x claude-print --trace")
        rows: Dict[str, List[Optional[float]]] = {}
        bad = []
        fallbacks = 0  # runs that waited TRANSCRIPT_SETTLE and used last_assistant_message
        for _ in range(runs):
            watch: Dict[str, float] = {}
            m, prompt = self.claude_print_run(self.project, verbose=True, watch=watch)
            fallbacks += any("transcript incomplete" in line for _, line in m.lines)
            if not self.correct(m, prompt):
                bad.append(m.stderr[-300:].decode("utf-8", "replace"))
            for name, value in self._phase_row(m, prompt, watch.get("on_disk")).items():
                rows.setdefault(name, []).append(value)
        return {
            "phases_ms": {name: summary(values) for name, values in rows.items()},
            "transcript_fallbacks": fallbacks,
            "failures": bad,
        }

    def _phase_row(
        self, m: Measured, prompt: str, on_disk: Optional[float] = None
    ) -> Dict[str, Optional[float]]:
        ev = trace_events(m)
        request = self._since(m, prompt)
        arrive = {name: pair[1] for name, pair in ev.items()}
        return {
            # bench clock (arrival of the trace line here, fake API request time)
            "startup (spawn -> relay dir line)": arrive.get("setup"),
            "relay dir -> TUI spawned": _gap(ev, "setup", "spawned", 1),
            "TUI spawned -> input ready": _gap(ev, "spawned", "input_ready", 1),
            "TUI spawned -> API request": None
            if request is None or "spawned" not in arrive
            else request - arrive["spawned"],
            "API request -> hook Stop": None
            if request is None or "hook_stop" not in arrive
            else arrive["hook_stop"] - request,
            "TUI spawned -> hook Stop": _gap(ev, "spawned", "hook_stop", 1),
            # claude-print's own trace clock
            "hook Stop -> result printed (trace)": _gap(ev, "hook_stop", "result_printed", 0),
            "hook Stop -> stdout here": None
            if m.stdout_at is None or "hook_stop" not in arrive
            else m.stdout_at - arrive["hook_stop"],
            # the bench's own 5 ms poll of the transcript: the TUI's share, then ours
            "  of which: hook Stop -> turn on disk": None
            if on_disk is None or "hook_stop" not in arrive
            else on_disk - arrive["hook_stop"],
            "  of which: turn on disk -> stdout here": None
            if on_disk is None or m.stdout_at is None
            else m.stdout_at - on_disk,
            "result printed -> child ended (teardown)": _gap(
                ev, "result_printed", "child_ended", 0
            ),
            "child ended -> process exit": None
            if "child_ended" not in arrive
            else m.wall - arrive["child_ended"],
            "total wall": m.wall,
        }

    def untrusted(self) -> Dict[str, Any]:
        self.log("untrusted dir: 1 x claude-print --trace")
        where = self.root / "untrusted"
        where.mkdir()
        m, prompt = self.claude_print_run(where, verbose=True)
        ev = trace_events(m)
        return {
            "wall_ms": round(m.wall * 1000, 1),
            "correct": self.correct(m, prompt),
            "trace_s": {name: pair[0] for name, pair in ev.items()},
            "phases_ms": {
                name: None if value is None else round(value * 1000, 1)
                for name, value in self._phase_row(m, prompt).items()
            },
        }

    @contextlib.contextmanager
    def _floor_hook(self, name: str = "floor") -> Iterator[Tuple[str, int]]:
        """The floor's settings file (a Stop hook that writes to a FIFO) and the FIFO."""
        d = self.root / name
        d.mkdir()
        fifo = d / "stop.fifo"
        os.mkfifo(fifo, 0o600)
        fifo_fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        keeper = os.open(fifo, os.O_WRONLY)
        script = d / "hook.sh"
        script.write_text(f"#!/bin/sh\ncat >/dev/null\necho Stop >> {shlex.quote(str(fifo))}\n")
        settings = d / "settings.json"
        hook = {"type": "command", "command": f"/bin/sh {shlex.quote(str(script))}"}
        settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [hook]}]}}))
        try:
            yield str(settings), fifo_fd
        finally:
            os.close(fifo_fd)
            os.close(keeper)

    def floor(self) -> Dict[str, Any]:
        """The bare-TUI runs made during e2e()."""
        results = self.floor_runs
        return {
            "spawn_to_request_ms": summary([r.request for r in results]),
            "spawn_to_stop_ms": summary([r.stop for r in results]),
            "request_to_stop_ms": summary(
                [
                    None if r.stop is None or r.request is None else r.stop - r.request
                    for r in results
                ]
            ),
            "sigterm_to_exit_ms": summary([r.exit_after_term for r in results]),
            "spawn_to_exit_ms": summary([r.total for r in results]),
            "errors": [r.error for r in results if r.error],
        }

    def cpu_rss(self, runs: int) -> Dict[str, Any]:
        self.log(f"cpu/rss baselines: {runs} x python3 -c pass, pyz --version, -m --version")
        # As in a container that sets PYTHONDONTWRITEBYTECODE=1 before the first start:
        # the stdlib keeps its own bytecode, claude_print is compiled on every start.
        no_pyc = {k: v for k, v in self.env.items() if k != "PYTHONPYCACHEPREFIX"}
        no_pyc["PYTHONDONTWRITEBYTECODE"] = "1"
        baselines = {
            "python3 -c pass": [sys.executable, "-c", "pass"],
            "python3 -S -c pass": [sys.executable, "-S", "-c", "pass"],
            "claude-print.pyz --version": [
                sys.executable,
                str(PYZ),
                "--version",
                "--claude-binary",
                "/bin/true",
            ],
            "python3 -m claude_print --version": [
                sys.executable,
                "-m",
                "claude_print",
                "--version",
                "--claude-binary",
                "/bin/true",
            ],
        }
        baselines["claude-print.pyz --version, no bytecode cache"] = baselines[
            "claude-print.pyz --version"
        ]
        out: Dict[str, Any] = {}
        for name, argv in baselines.items():
            env = dict(self.env, PYTHONPATH=str(ROOT)) if "-m" in argv else self.env
            env = no_pyc if "no bytecode" in name else env
            ms = [run_measured(argv, str(self.project), env) for _ in range(runs)]
            out[name] = self._cpu_rss_row(ms)
        out["claude-print run (own)"] = self._cpu_rss_row(self.cp_runs)
        base = out["python3 -c pass"]["cpu_ms"]["median"]
        out["claude-print run (own)"]["cpu_over_python_ms"] = round(
            out["claude-print run (own)"]["cpu_ms"]["median"] - base, 1
        )
        return out

    @staticmethod
    def _cpu_rss_row(ms: List[Measured]) -> Dict[str, Any]:
        return {
            "wall_ms": summary([m.wall for m in ms]),
            "cpu_ms": summary([m.cpu_s for m in ms]),
            "user_ms": summary([m.user_s for m in ms]),
            "sys_ms": summary([m.sys_s for m in ms]),
            "sched_cpu_ms": summary([m.sched_s for m in ms]),
            "children_cpu_ms": summary([m.children_cpu_s for m in ms]),
            "tree_cpu_ms": summary([m.tree_cpu_s for m in ms]),
            "rss_kb": summary([m.hwm_kb for m in ms], 1),
            "rss_samples": summary([float(m.samples) for m in ms], 1),
            "wait4_maxrss_kb": summary([float(m.wait4_maxrss_kb) for m in ms], 1),
        }

    def parallel(self, count: int) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for name in ("claude_print", "claude_p"):
            self.log(
                f"parallel: {count} x {name} at once", own_batch_running=name != "claude_print"
            )
            prompts = [self.prompt(f"par-{name}") for _ in range(count)]
            argvs = [
                [*self.claude_print, pr] if name == "claude_print" else ["claude", "-p", pr]
                for pr in prompts
            ]
            out[name] = self._batch(argvs, prompts)
        self.log(f"parallel: {count} x bare_tui at once", own_batch_running=True)
        jobs = [self.job("bare_tui", self.prompt("par-bare_tui")) for _ in range(count)]
        started = time.monotonic()
        run_many(jobs, str(self.project))
        ends = [j.started - started + j.wall for j in jobs if j.wall is not None]
        out["bare_tui"] = {
            "batch_wall_ms": round(max(ends) * 1000, 1) if ends else None,
            "per_run_wall_ms": summary(ends),
            "tree_cpu_total_s": round(sum(j.tree_cpu_s for j in jobs), 2),
            "all_correct": all(self.job_ok(j) for j in jobs),
            "correct": sum(1 for j in jobs if self.job_ok(j)),
        }
        return out

    def _batch(self, argvs: List[List[str]], prompts: List[str]) -> Dict[str, Any]:
        started = time.monotonic()
        procs = [
            subprocess.Popen(
                argv,
                cwd=str(self.project),
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for argv in argvs
        ]
        ends: List[Optional[float]] = [None] * len(procs)
        cpu: List[float] = [0.0] * len(procs)  # each run's whole process tree (wait4)
        own: List[float] = [0.0] * len(procs)  # each run's top process alone
        deadline = started + RUN_TIMEOUT
        while any(e is None for e in ends) and time.monotonic() < deadline:
            for i, proc in enumerate(procs):
                if ends[i] is None and os.waitid(
                    os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT
                ):
                    ends[i] = time.monotonic() - started
                    zombie = Measured([], 0.0)
                    _zombie_cpu(proc.pid, zombie)
                    own[i] = zombie.cpu_s
                    _, status, usage = os.wait4(proc.pid, 0)
                    proc.returncode = _exit_code(status)
                    cpu[i] = usage.ru_utime + usage.ru_stime
            time.sleep(POLL)
        results = []
        for proc, prompt in zip(procs, prompts):
            if proc.poll() is None:
                proc.kill()
            stdout, stderr = proc.communicate()
            expected = (self.api.expected(prompt) + "\n").encode()
            results.append(
                {
                    "ok": proc.returncode == 0 and stdout == expected,
                    "rc": proc.returncode,
                    "stdout": stdout[:100].decode("utf-8", "replace"),
                    "stderr": stderr[-300:].decode("utf-8", "replace"),
                }
            )
        finished = [e for e in ends if e is not None]
        return {
            "batch_wall_ms": round(max(finished) * 1000, 1) if finished else None,
            "per_run_wall_ms": summary(finished),
            "tree_cpu_total_s": round(sum(cpu), 2),
            "own_cpu_total_s": round(sum(own), 2),
            "all_correct": all(r["ok"] for r in results) and len(finished) == len(procs),
            "correct": sum(1 for r in results if r["ok"]),
            "failures": [r for r in results if not r["ok"]][:5],
        }

    # fleet efficiency (issue 12): the three contenders, whole process trees

    def job(self, who: str, prompt: str, env: Optional[Dict[str, str]] = None) -> Job:
        env = self.env if env is None else env
        if who == "claude_print":
            return Job([*self.claude_print, prompt], prompt, env)
        if who == "bare_tui":
            return Job([self.claude], prompt, env, tui=True)
        return Job(["claude", "-p", prompt], prompt, env)

    def job_ok(self, job: Job) -> bool:
        if job.tui:
            return job.stop is not None and self.api.request_time(job.prompt) is not None
        return job.rc == 0 and bytes(job.out) == (self.api.expected(job.prompt) + "\n").encode()

    def run_one(self, job: Job, window: Sequence[float] = ()) -> Job:
        before = len(self.api.server.hits)
        run_many([job], str(self.project), window)
        job.hits = self.api.server.hits_since(before)
        return job

    def fleet(self, reps: int, wait: float, window: Tuple[float, float]) -> Dict[str, Any]:
        """Per contender, in rotating order: a run whose answer takes `wait` s (tree CPU
        sampled over `window`), a short run (tree CPU, wall, API requests), and one short
        run each with non-essential traffic on and with a subscription (OAuth) login."""
        self.log(f"fleet: {reps} x (waiting run, short run) per contender")
        names = list(CONTENDERS)
        runs: Dict[str, Dict[str, List[Job]]] = {n: {"wait": [], "short": []} for n in names}
        for rep in range(reps):
            for who in names[rep % 3 :] + names[: rep % 3]:
                prompt = f"{self.prompt('wait-' + who)} [[sleep:{wait:g}]]"
                runs[who]["wait"].append(self.run_one(self.job(who, prompt), window))
                runs[who]["short"].append(self.run_one(self.job(who, self.prompt(who))))
        dead = "http://127.0.0.1:9"  # nothing leaves the machine with traffic on
        traffic_on = {
            k: v for k, v in self.env.items() if k != "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"
        }
        traffic_on.update(HTTPS_PROXY=dead, HTTP_PROXY=dead, NO_PROXY="127.0.0.1,localhost")
        envs = {"traffic_on": traffic_on, "oauth": FAKE_API.subscription_env(self.env)}
        out: Dict[str, Any] = {}
        for who in names:
            wait_runs, short = runs[who]["wait"], runs[who]["short"]
            requests = {"bench_env": [_requests(j) for j in short]}
            for env_name, env in envs.items():
                requests[env_name] = [_requests(self.run_one(self.job(who, self.prompt(who), env)))]
            everything = wait_runs + short
            out[who] = {
                "wait_cpu_pct": summary([j.window_pct() for j in wait_runs], 1),
                "short_cpu_ms": summary([j.tree_cpu_s for j in short]),
                "short_wall_ms": summary([j.wall for j in short]),
                "peak_tree_rss_kb": summary([float(j.peak_rss_kb) for j in everything], 1),
                "requests": requests,
                "all_correct": all(self.job_ok(j) for j in everything),
            }
        return out

    def leftovers(self) -> List[str]:
        marker = str(self.root).encode()
        found = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmdline = f.read()
            except OSError:
                continue
            if marker in cmdline:
                shown = cmdline.replace(b"\0", b" ")[:160]
                found.append(f"{pid}: {shown!r}")
        found += [str(p) for p in self.tmp.glob("claude-print-*")]
        return found


# --- machine, table, main -------------------------------------------------


def _stop_keepers(keepers: Path) -> None:
    """Let a keeper still on its way come, then stop every keeper there: a connection
    that sends no request ends one."""
    deadline = time.monotonic() + 5.0
    while not list(keepers.glob("warm-*.sock")) and time.monotonic() < deadline:
        time.sleep(0.01)
    _await_keeper(keepers)
    for sock in keepers.glob("warm-*.sock"):
        with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX) as conn:
            conn.connect(str(sock))
    deadline = time.monotonic() + 10.0
    while list(keepers.glob("warm-*.sock")) and time.monotonic() < deadline:
        time.sleep(0.01)


def _await_keeper(keepers: Path, limit: float = 60.0) -> None:
    """Until every keeper there waits at its input box (its lock file says "ready")."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        locks = list(keepers.glob("warm-*.lock"))
        with contextlib.suppress(OSError):
            if all(lock.read_bytes() == b"ready\n" for lock in locks):
                return
        time.sleep(0.01)


def _tui_cpu_ms(binary: str) -> Dict[int, float]:
    """CPU-ms of each live process whose command line starts with `binary` (a keeper's TUI)."""
    tick = os.sysconf("SC_CLK_TCK")
    found: Dict[int, float] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if not Path(f"/proc/{name}/cmdline").read_bytes().startswith(binary.encode() + b"\0"):
                continue
            fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found[int(name)] = (int(fields[11]) + int(fields[12])) * 1000 / tick
    return found


def _await_settled(binary: str, quiet: float = 0.5, limit: float = 10.0) -> None:
    """Until the TUIs started as `binary` used no more than 10 ms of CPU in `quiet` s.

    A keeper's TUI goes on with its start-up after its box is up (2.1.332: about 360 ms
    of CPU in the next 1.1 s, computation with no system calls to speak of); the idle
    floor's TUI is typed to only after that, so a warm run is measured after it too
    ("settled"), beside the run that comes the moment the box is up."""
    deadline = time.monotonic() + limit
    before = _tui_cpu_ms(binary)
    while time.monotonic() < deadline:
        time.sleep(quiet)
        now = _tui_cpu_ms(binary)
        if sum(now.values()) - sum(before.get(pid, 0.0) for pid in now) <= 10.0:
            return
        before = now


def machine() -> Dict[str, Any]:
    try:
        uname = subprocess.run(["uname", "-a"], capture_output=True, text=True).stdout.strip()
    except OSError:
        uname = " ".join(os.uname())
    cpu = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "uname": uname,
        "cpu_model": cpu,
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)),
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
    }


def claude_version(claude: str) -> str:
    out = subprocess.run([claude, "--version"], capture_output=True, text=True, timeout=60)
    return out.stdout.strip()


def ensure_pyz() -> str:
    """Build dist/claude-print.pyz when it is missing or older than claude_print/**/*.py."""
    sources = max(p.stat().st_mtime for p in (ROOT / "claude_print").rglob("*.py"))
    if not PYZ.exists() or PYZ.stat().st_mtime < sources:
        subprocess.run(
            [str(ROOT / "build_zipapp.sh")], check=True, stdout=subprocess.DEVNULL, cwd=ROOT
        )
    return hashlib.sha256(PYZ.read_bytes()).hexdigest()


def fmt(stats: Stats, unit: str = "ms") -> str:
    if not stats or not stats.get("n"):
        return "-"
    if unit == "MB":
        return f"{stats['median'] / 1024:6.1f} MB (p90 {stats['p90'] / 1024:.1f})"
    return f"{stats['median']:7.1f} ms (p90 {stats['p90']:.1f}, n={stats['n']})"


def print_warm(r: Dict[str, Any]) -> None:
    warm = r.get("warm")
    if not warm:
        return
    w = sys.stdout.write
    version = r["claude_code_version"]
    for name, row in warm.items():
        if "warm_ratio_median" not in row:
            continue
        w(f"\nwarm start, {name} ({version}, {row['runs']} paired runs, rotating)\n")
        w(f"  claude -p            {fmt(row['claude_p']['wall_ms'])}\n")
        adopted = row["warm"]["adopted"]
        w(f"  claude-print --warm  {fmt(row['warm']['wall_ms'])}  ({adopted} adopted)")
        w(f"  {row['warm_ratio_median']}x claude -p  (the keeper's box just up)\n")
        if "settled" in row:
            adopted = row["settled"]["adopted"]
            w(f"  --warm, settled      {fmt(row['settled']['wall_ms'])}  ({adopted} adopted)")
            w(f"  {row['settled_ratio_median']}x claude -p  (its TUI's start-up over)\n")
        w(f"  claude-print cold    {fmt(row['cold']['wall_ms'])}  {row['cold_ratio_median']}x\n")
        w(f"  warm: start -> request at the API  {fmt(row['warm']['request_ms'])}\n")
        if "settled" in row:
            w(f"  settled: start -> request          {fmt(row['settled']['request_ms'])}\n")
        if row["bad"]:
            w(f"  WRONG: {row['bad']}\n")
    for name, row in warm.items():
        if not name.startswith("sequential_"):
            continue
        w(f"\n{row['runs']} runs back to back ({version}): whole batch\n")
        for contender in ("claude_p", "warm", f"warm_pool_{row['pool']}", "cold"):
            entry = row[contender]
            adopted = f" ({entry['adopted']} adopted)" if "adopted" in entry else ""
            w(f"  {contender:<20} {entry['total_s']} s  {entry['ratio']}x{adopted}\n")
        if row["bad"]:
            w(f"  WRONG: {row['bad']}\n")
    floor = warm.get("idle_floor")
    if floor:
        w(f"\nfloor: the bare TUI's first turn at an idle box ({version})\n")
        w(f"  Enter -> request     {fmt(floor['enter_to_request_ms'])}\n")
        w(f"  Enter -> Stop hook   {fmt(floor['enter_to_stop_ms'])}\n")


def print_table(r: Dict[str, Any]) -> None:
    w = sys.stdout.write
    if "e2e" not in r:
        print_warm(r)
        return
    e2e = r["e2e"]
    w(f"\nclaude-print benchmark  {r['date']}  {r['claude_code_version']}\n")
    w(
        f"{r['machine']['cpu_model']}, {r['machine']['cores']} cores; python "
        f"{r['machine']['python']}; claude-print = {' '.join(e2e['claude_print']['argv0'])}"
        f" ({r['claude_print'].get('first_line', '')})\n\n"
    )
    w("end-to-end (trusted dir, rotating order)\n")
    w(f"  claude-print         {fmt(e2e['claude_print']['wall_ms'])}\n")
    if "claude_print_stdin" in e2e:
        w(f"  claude-print, stdin  {fmt(e2e['claude_print_stdin']['wall_ms'])} (paste path)\n")
    w(f"  claude -p            {fmt(e2e['claude_p']['wall_ms'])}\n")
    w(f"  ratio                median {e2e['ratio_median']}x, p90 {e2e['ratio_p90']}x\n")
    stalls = e2e["claude_print"]["stalls_over_2500ms"]
    w(f"  claude-print runs over 2.5 s: {stalls}\n")
    w(f"  whole-tree CPU       claude-print {fmt(e2e['claude_print']['tree_cpu_ms'])}\n")
    w(f"                       claude -p    {fmt(e2e['claude_p']['tree_cpu_ms'])}\n")
    w(f"  spawn -> API request claude-print {fmt(e2e['claude_print']['request_ms'])}\n")
    w(f"                       claude -p    {fmt(e2e['claude_p']['request_ms'])}\n")
    if e2e["failures"]:
        w(f"  FAILURES: {e2e['failures']}\n")
    u = r["untrusted"]
    w(f"  claude-print, untrusted dir (1 run): {u['wall_ms']} ms, correct={u['correct']}\n\n")
    f = r["floor"]
    w("bare TUI floor (PTY, argv prompt, Stop hook -> FIFO, no replies, no waits)\n")
    w(f"  spawn -> API request {fmt(f['spawn_to_request_ms'])}\n")
    w(f"  spawn -> Stop        {fmt(f['spawn_to_stop_ms'])}\n")
    w(f"  SIGTERM -> exited    {fmt(f['sigterm_to_exit_ms'])}\n")
    w(f"  spawn -> exited      {fmt(f['spawn_to_exit_ms'])}\n\n")
    w("claude-print phases (--trace; trace lines timestamped on arrival)\n")
    for name, stats in r["phases"]["phases_ms"].items():
        w(f"  {name:42s} {fmt(stats)}\n")
    fallbacks = r["phases"]["transcript_fallbacks"]
    w(f"  runs that waited the 3 s TRANSCRIPT_SETTLE and fell back: {fallbacks}\n")
    w("\nown CPU (user+sys, no children) and peak RSS\n")
    for name, row in r["cpu_rss"].items():
        w(f"  {name:36s} cpu {fmt(row['cpu_ms'])}  rss {fmt(row['rss_kb'], 'MB')}\n")
    cp = e2e["claude_p"]
    w(f"  {'claude -p (context)':36s} cpu {fmt(cp['cpu_ms'])}  rss {fmt(cp['rss_kb'], 'MB')}\n")
    w("\nparallel\n")
    for name, row in r["parallel"].items():
        w(
            f"  {name:14s} batch {row['batch_wall_ms']} ms, per run {fmt(row['per_run_wall_ms'])}, "
            f"CPU {row['tree_cpu_total_s']} s (top process {row.get('own_cpu_total_s', '-')} s), "
            f"all correct: {row['all_correct']} "
            f"({row['correct']})\n"
        )
    if "fleet" in r:
        print_fleet(r)
    w("\ntargets\n")
    for name, t in r["targets"].items():
        mark = "    " if t["met"] is None else "MET " if t["met"] else "MISS"
        w(f"  {mark} {name}: {t['value']} (target {t['target']})\n")
    w(f"\nleftover processes/dirs: {len(r['leftovers'])}\n")
    loads = r["load_average_1min"]
    if max(loads) > 1.5 * (r["machine"]["cores_usable"] or 1):
        w(f"WARNING: the machine was busy (1-min load average up to {max(loads)}): noisy\n")


def _posts(runs: List[Dict[str, Any]]) -> str:
    return "/".join(sorted({str(run["posts"]) for run in runs}))


def print_fleet(r: Dict[str, Any]) -> None:
    """The issue-12 table: whole process trees, claude-print / bare TUI / claude -p."""
    f, par, w = r["fleet"], r["parallel"], sys.stdout.write
    w(f"\nfleet efficiency, whole process tree ({r['claude_code_version']})\n")
    w(f"  {'':38s}" + "".join(f"{label:>16s}" for label in CONTENDERS.values()) + "\n")

    def row(label: str, cell: Callable[[str], Any]) -> None:
        cells = []
        for who in CONTENDERS:
            with contextlib.suppress(KeyError, TypeError, ZeroDivisionError):
                cells.append(str(cell(who)))
                continue
            cells.append("-")
        w(f"  {label:38s}" + "".join(f"{c:>16s}" for c in cells) + "\n")

    row("CPU while waiting (% of a core)", lambda x: f[x]["wait_cpu_pct"]["median"])
    row("CPU per short run (ms)", lambda x: f[x]["short_cpu_ms"]["median"])
    for env in ("bench_env", "traffic_on", "oauth"):

        def posts(who: str, env: str = env) -> str:
            return _posts(f[who]["requests"][env])

        row(f"API requests per run ({env})", posts)
    row("peak RSS of the tree (MB)", lambda x: round(f[x]["peak_tree_rss_kb"]["max"] / 1024))
    row("end-to-end latency, short run (ms)", lambda x: f[x]["short_wall_ms"]["median"])
    row("parallel batch: wall (ms)", lambda x: par[x]["batch_wall_ms"])
    row("parallel batch: tree CPU (s)", lambda x: par[x]["tree_cpu_total_s"])
    row("all answers correct", lambda x: f[x]["all_correct"] and par[x]["all_correct"])


def first_line(path: str) -> str:
    if not os.path.isfile(path):  # --claude-print module: "-m claude_print"
        return ""
    with open(path, "rb") as f:
        return f.readline().decode("utf-8", "replace").rstrip("\n")


def targets(r: Dict[str, Any]) -> Dict[str, Any]:
    own = r["cpu_rss"]["claude-print run (own)"]
    stop = r["phases"]["phases_ms"].get("hook Stop -> result printed (trace)", {})
    par = r["parallel"].get("claude_print", {})
    floor = r["floor"]["spawn_to_exit_ms"].get("median")
    over_floor = round(r["e2e"]["claude_print"]["wall_ms"]["median"] / floor, 2) if floor else None
    p_median = r["e2e"]["claude_p"]["wall_ms"]["median"]
    return {
        "e2e median ratio": {
            "value": r["e2e"]["ratio_median"],
            "target": "<= 1.25",
            "met": r["e2e"]["ratio_median"] <= 1.25,
        },
        # Context for the row above: the TUI alone, without claude-print, against claude -p
        # and against claude-print (the part of the ratio that is claude-print's own).
        "bare TUI / claude -p (not ours)": {
            "value": round(floor / p_median, 2) if floor else None,
            "target": "context",
            "met": None,
        },
        # Issue 43: a cold run within 5 % of the bare TUI's own boot-to-exit (the floor).
        "e2e median / bare TUI spawn->exit": {
            "value": over_floor,
            "target": "<= 1.05",
            "met": over_floor is not None and over_floor <= 1.05,
        },
        "Stop -> output median ms": {
            "value": stop.get("median"),
            "target": "< 50",
            "met": stop.get("median") is not None and stop["median"] < 50,
        },
        "own CPU over python3 -c pass ms": {
            "value": own["cpu_over_python_ms"],
            "target": "<= 100",
            "met": own["cpu_over_python_ms"] <= 100,
        },
        "own peak RSS MB": {
            "value": round(own["rss_kb"]["median"] / 1024, 1),
            "target": "< 30",
            "met": own["rss_kb"]["median"] < 30 * 1024,
        },
        "parallel all correct": {
            "value": par.get("all_correct"),
            "target": True,
            "met": bool(par.get("all_correct")),
        },
    }


T0 = time.monotonic()


def release_binary(release: str) -> str:
    """scripts/install-claude-code RELEASE: installs it when missing, prints its path."""
    out = subprocess.run(
        [str(ROOT / "scripts" / "install-claude-code"), release],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip().splitlines()[-1]


def bench_one(args: argparse.Namespace, runs: int, par: int, pyz_sha: str) -> Dict[str, Any]:
    """Every measurement on one Claude Code binary (args.claude)."""
    wait, window = (10.0, (3.0, 8.0)) if args.quick else (16.0, (4.0, 14.0))
    started = time.monotonic()
    bench = Bench(args)
    try:
        bench.log(f"warm-up (temp dir {bench.root}, {args.claude})")
        bench.claude_p_run()
        bench.claude_print_run(bench.project)  # also unpacks the pyz into ~/.shiv
        result: Dict[str, Any] = {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": machine(),
            "claude_code_version": claude_version(bench.claude),
            "claude_print": {
                "form": args.claude_print,
                "argv0": bench.claude_print,
                "first_line": first_line(bench.claude_print[-1]),
                "pyz_sha256": pyz_sha,
            },
            "settings": {"runs": runs, "parallel": par, "quick": args.quick, "wait_s": wait},
        }
        if args.warm_only:
            result["warm"] = bench.warm_all(max(runs, 7), args.sequential)
            result["bench_seconds"] = round(time.monotonic() - started, 1)
            return result
        result["e2e"] = bench.e2e(runs)
        result["floor"] = bench.floor()
        result["phases"] = bench.phases(runs)
        result["untrusted"] = bench.untrusted()
        result["cpu_rss"] = bench.cpu_rss(runs)
        result["fleet"] = bench.fleet(1 if args.quick else 3, wait, window)
        result["parallel"] = bench.parallel(par)
        result["warm"] = bench.warm_all(max(runs, 7), args.sequential)
        time.sleep(0.2)
        result["leftovers"] = bench.leftovers()
        bench.log("done", own_batch_running=True)
        result["load_average_1min"] = [round(x, 2) for x in bench.loads]
        result["targets"] = targets(result)
        result["bench_seconds"] = round(time.monotonic() - started, 1)
    finally:
        bench.close()
    return result


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=None, help="runs per measurement (default 15)")
    p.add_argument("--parallel", type=int, default=None, help="batch size (default 20)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="3 runs, batches of 4 (unless given), one 10 s waiting run per contender",
    )
    p.add_argument(
        "--release",
        default="2.1.197,2.1.330",
        help="Claude Code releases, comma-separated (installed by scripts/install-claude-code)",
    )
    p.add_argument("--claude", default=None, help="one Claude Code binary instead of --release")
    p.add_argument(
        "--claude-print",
        choices=("installed", "pyz", "module"),
        default="installed",
        help="installed by install.sh into the temp dir (default: what users run), "
        "dist/claude-print.pyz under this Python, or python3 -m claude_print",
    )
    p.add_argument(
        "--out",
        default=str(ROOT / "bench" / "results-latest.json"),
        help="all releases' results (each also goes to bench/results-RELEASE.json)",
    )
    p.add_argument("--keep", action="store_true", help="keep the temp dir")
    p.add_argument(
        "--warm-only",
        action="store_true",
        help="only the warm-start pairs (issue 23): claude -p, --warm and cold, >= 7 runs",
    )
    p.add_argument(
        "--sequential",
        type=int,
        default=20,
        help="runs back to back in the warm section (NEEDLE's beads; default 20)",
    )
    args = p.parse_args(argv)
    runs = args.runs or (3 if args.quick else 15)
    par = args.parallel or (4 if args.quick else 20)
    claudes = [args.claude] if args.claude else [release_binary(r) for r in args.release.split(",")]
    for claude in claudes:
        if not os.access(claude, os.X_OK):
            sys.exit(f"bench: no Claude Code at {claude} (run scripts/install-claude-code)")
    pyz_sha = ensure_pyz()
    results: Dict[str, Any] = {}
    for claude in claudes:
        result = bench_one(
            argparse.Namespace(**{**vars(args), "claude": claude}), runs, par, pyz_sha
        )
        version = result["claude_code_version"].split()[0]
        results[version] = result
        print_table(result)
        if "e2e" in result:
            print_warm(result)
        if not args.claude and not args.warm_only:  # a part must not replace the whole
            path = ROOT / "bench" / f"results-{version}.json"
            path.write_text(json.dumps(result, indent=2) + "\n")
    Path(args.out).write_text(json.dumps({"releases": results}, indent=2) + "\n")
    sys.stdout.write(f"\nwrote {args.out} ({round(time.monotonic() - T0, 1)} s)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
