"""The warm start's test helpers (tests/warm_start/ against mock_claude, tests/e2e/ on the
real Claude Code): the sandbox's runtime dir, the keepers' sockets, waiting for them and
stopping them, and a git project."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Set, Tuple

import pytest
from checks import assert_exit
from harness import MOCK_CLAUDE, RUN_TIMEOUT, Sandbox, run_claude_print, run_dir

MOCK = str(MOCK_CLAUDE)
WAIT = 60.0  # generous bound for a keeper to appear or go


def warm_env(sandbox: Sandbox, **extra: str) -> Dict[str, str]:
    return {"XDG_RUNTIME_DIR": str(run_dir(sandbox)), **extra}


def run_warm(
    sandbox: Sandbox,
    args: List[str],
    stdin: Optional[bytes] = None,
    env: Optional[Dict[str, str]] = None,
) -> subprocess.CompletedProcess[bytes]:
    return run_claude_print(
        sandbox,
        ["--warm", "--trace", *args],
        stdin=stdin,
        binary=MOCK,
        env=warm_env(sandbox, **(env or {})),
    )


def start_warm(
    sandbox: Sandbox, args: List[str], env: Optional[Dict[str, str]] = None
) -> subprocess.Popen[bytes]:
    """A --warm --trace run in the background, its output piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "claude_print", "--claude-binary", MOCK, "--warm", "--trace", *args],
        cwd=sandbox.project,
        env=sandbox.env(**warm_env(sandbox, **(env or {}))),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def sockets(sandbox: Sandbox) -> List[Path]:
    return sorted((run_dir(sandbox) / f"claude-print-{os.getuid()}").glob("warm-*.sock"))


def wait_until(
    what: str,
    check: Callable[[], bool],
    limit: float = WAIT,
    detail: Callable[[], str] = lambda: "",
) -> None:
    deadline = time.monotonic() + limit
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {limit:g} s for: {what} {detail()}")
        time.sleep(0.02)


def keeper_pid(path: Path) -> int:
    """Whose socket it is, without using it up: the lock holder is the keeper."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") == str(path.with_suffix(".lock")):
                    return int(pid)
    raise AssertionError(f"no process holds {path.with_suffix('.lock')}")


def keepers(sandbox: Sandbox) -> List[str]:
    """Processes working in the sandbox's project: a keeper is a fork of its run, so its
    command line names nothing of the sandbox until its TUI starts (and it may not even
    have bound its socket yet when the run has ended)."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/cwd") == str(sandbox.project):
                    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
                    if state != "Z":
                        found.append(f"pid {pid} in the project")
    return found


def stop_keepers(sandbox: Sandbox) -> None:
    """A connection without a request ends a keeper; then nothing may be left."""
    seen: List[str] = []
    stopped: Set[Tuple[Path, int, int]] = set()

    def clean() -> bool:
        # A run's last keeper may bind its socket (at a dead one's path) after the run.
        for path in sockets(sandbox):
            with contextlib.suppress(OSError):
                st = path.stat()  # inode numbers are reused: the change time tells
                bound = (path, st.st_ino, st.st_ctime_ns)
                if bound not in stopped:
                    stopped.add(bound)
                    with socket.socket(socket.AF_UNIX) as sock:
                        sock.connect(str(path))
        seen[:] = [*sandbox.leftovers(), *map(str, sockets(sandbox)), *keepers(sandbox)]
        return not seen

    wait_until("no keeper and no TUI left", clean, detail=lambda: str(seen))


def was_warm(proc: subprocess.CompletedProcess[bytes]) -> bool:
    return b"runs the prompt" in proc.stderr


def skip_if_the_date_turned(stderr: bytes) -> None:
    """A keeper started before midnight rightly declines a run after it (the system
    prompt says the day): nothing to check then. Only the date may be named."""
    if b"has changed since: date)" in stderr:
        pytest.skip("the date turned between the keeper's start and the run: rightly cold")


def git(project: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True)


def keeper_ready(sandbox: Sandbox) -> bool:
    found = sockets(sandbox)
    return bool(found) and found[0].with_suffix(".lock").read_bytes() == b"ready\n"


def warm_up_until_ready(
    sandbox: Sandbox,
    real_claude: str,
    env: Dict[str, str],
    flags: List[str],
    cwd: Path,
    limit: float = WAIT,
) -> None:
    """`--warm-up` with `flags` in `cwd`, until its keeper waits at the input box."""
    up = subprocess.run(
        [sys.executable, "-m", "claude_print", "--claude-binary", real_claude, "--warm-up", *flags],
        cwd=cwd,
        env=sandbox.env(**env),
        capture_output=True,
        timeout=RUN_TIMEOUT,
    )
    assert_exit(up, 0)
    wait_until("the keeper's TUI at its input box", lambda: keeper_ready(sandbox), limit)
