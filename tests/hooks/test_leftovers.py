"""The sweep of killed runs' relay dirs (claude_print/hooks/leftovers.py)."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
from fake_api import seed_home
from harness import MOCK_CLAUDE, ROOT

from claude_print.hooks import leftovers

DEAD_PID = 4194399  # above Linux's largest pid_max (2**22): never a live process
RUN_TIMEOUT = 120.0


def make_relay_dir(root: Path, pid: int, suffix: str = "abc123") -> Path:
    """A dir shaped like relay.Relay's: set-up files and a FIFO."""
    path = root / f"claude-print-{pid}-{suffix}"
    path.mkdir(mode=0o700)
    (path / "hook.sh").write_text("#!/bin/sh\n")
    (path / "settings.json").write_text("{}")
    os.mkfifo(path / "relay.fifo", 0o600)
    return path


def names(root: Path) -> List[str]:
    return sorted(p.name for p in root.iterdir())


def test_a_dead_runs_dir_goes_and_a_live_runs_stays(tmp_path: Path) -> None:
    dead = make_relay_dir(tmp_path, DEAD_PID)
    mine = make_relay_dir(tmp_path, os.getpid())  # this process started before making it
    assert leftovers.sweep(str(tmp_path)) == [str(dead)]
    assert names(tmp_path) == [mine.name]


SET_UP = ("hook.sh", "settings.json", "relay.fifo")  # in the order relay.Relay makes them


@pytest.mark.parametrize("files", range(len(SET_UP) + 1))
def test_a_run_still_setting_up_its_dir_is_kept(tmp_path: Path, files: int) -> None:
    # A run that started a moment ago and is making its dir, its FIFO not open yet.
    # (pytest's own pid would not do: how long ago pytest started depends on which
    # tests ran before, and a long-running process hides a wrong time comparison.)
    run = subprocess.Popen(["sleep", "60"])
    try:
        path = tmp_path / f"claude-print-{run.pid}-setup"
        path.mkdir(mode=0o700)
        for name in SET_UP[:files]:
            if name == "relay.fifo":
                os.mkfifo(path / name, 0o600)
            else:
                (path / name).write_text("")
        assert not leftovers.is_orphan(str(path), run.pid)
        assert leftovers.sweep(str(tmp_path)) == []
        assert path.is_dir()
    finally:
        run.kill()
        run.wait()


def test_only_this_users_relay_dirs_are_touched(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.mkdir()
    (tmp_path / f"claude-print-{DEAD_PID}-link").symlink_to(target)
    (tmp_path / f"claude-print-{DEAD_PID}-file").write_text("")
    (tmp_path / "claude-print-check-home-xyz").mkdir()  # --check's own, not a relay dir
    (tmp_path / "claude-print-demo-xyz").mkdir()
    (tmp_path / f"other-{DEAD_PID}-abc").mkdir()
    before = names(tmp_path)
    assert leftovers.sweep(str(tmp_path)) == []
    assert names(tmp_path) == before


def test_a_missing_root_is_nothing_to_do(tmp_path: Path) -> None:
    assert leftovers.sweep(str(tmp_path / "missing")) == []


def test_a_reused_pid_does_not_protect_a_dead_runs_dir(tmp_path: Path) -> None:
    # The dir is made, its run dies, and later an unrelated process gets the same pid.
    staged = make_relay_dir(tmp_path, 1, "staged")
    time.sleep(leftovers.SLACK_SECS + 0.3)
    newcomer = subprocess.Popen(["sleep", "60"])
    try:
        reused = staged.rename(tmp_path / f"claude-print-{newcomer.pid}-abc")
        assert leftovers.pid_alive(newcomer.pid)
        assert leftovers.is_orphan(str(reused), newcomer.pid)
        assert leftovers.sweep(str(tmp_path)) == [str(reused)]
    finally:
        newcomer.kill()
        newcomer.wait()


def test_a_live_run_holding_its_fifo_is_kept_whatever_the_clocks_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Even if the wall clock jumped so that this process seems to have started after
    # its dir was made, the open FIFO says whose dir it is.
    mine = make_relay_dir(tmp_path, os.getpid())
    monkeypatch.setattr(leftovers, "_start_time", lambda pid: time.time() + 3600)
    fd = os.open(mine / "relay.fifo", os.O_RDONLY | os.O_NONBLOCK)
    try:
        assert leftovers.sweep(str(tmp_path)) == []
    finally:
        os.close(fd)
    assert leftovers.sweep(str(tmp_path)) == [str(mine)]  # without it: a reused pid


def test_an_exited_but_unreaped_process_owns_nothing(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        stat_path = Path(f"/proc/{child.pid}/stat")
        deadline = time.monotonic() + 30
        while stat_path.read_text().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        zombie = make_relay_dir(tmp_path, child.pid)
        assert leftovers.sweep(str(tmp_path)) == [str(zombie)]
    finally:
        child.wait()


def test_without_proc_a_live_pid_keeps_its_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(leftovers, "_proc_available", lambda: False)
    dead = make_relay_dir(tmp_path, DEAD_PID)
    live = make_relay_dir(tmp_path, os.getpid())
    assert leftovers.sweep(str(tmp_path)) == [str(dead)]
    assert live.is_dir()


def test_sweep_at_start_uses_tmpdir_and_never_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead = make_relay_dir(tmp_path, DEAD_PID)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    leftovers.sweep_at_start()
    assert not dead.exists()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "missing"))
    leftovers.sweep_at_start()
    monkeypatch.setattr(leftovers, "sweep", lambda root: 1 / 0)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    leftovers.sweep_at_start()


# --- real runs: claude-print on mock_claude, killed and alive, one shared TMPDIR -----------

# claude-print with the start-up sweep, as the one-line wiring will run it.
SWEEPING_MAIN = (
    "import sys; from claude_print.hooks import leftovers; leftovers.sweep_at_start(); "
    "from claude_print.command.cli import main; main()"
)


def ack(prompt: str) -> str:
    return f"ACK {len(prompt)} {hashlib.sha256(prompt.encode()).hexdigest()[:12]}"


class Runs:
    """claude-print runs against mock_claude, each with its own HOME, sharing one TMPDIR."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.tmp = base / "tmp"
        self.tmp.mkdir()
        self.count = 0

    def start(
        self, prompt: str, scenario: str = "ok", sweeping: bool = False
    ) -> subprocess.Popen[bytes]:
        self.count += 1
        home = self.base / f"home{self.count}"
        project = self.base / f"project{self.count}"
        home.mkdir()
        project.mkdir()
        seed_home(home, trusted=[project])
        env: Dict[str, str] = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("CLAUDE_CODE_", "ANTHROPIC_", "MOCK_CLAUDE_", "CLAUDE_PRINT_"))
            and k != "CLAUDECODE"
        }
        env.update(
            HOME=str(home),
            TMPDIR=str(self.tmp),
            PYTHONPATH=str(ROOT),
            XDG_CONFIG_HOME=str(home / ".config"),
            MOCK_CLAUDE_SCENARIO=scenario,
        )
        head = ["-c", SWEEPING_MAIN] if sweeping else ["-m", "claude_print"]
        argv = [sys.executable, *head, "--claude-binary", str(MOCK_CLAUDE)]
        argv += ["--output-format", "json", "--timeout", "100", prompt]
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=project,
            env=env,
        )

    def relay_dir_of(self, pid: int) -> Optional[Path]:
        found = sorted(self.tmp.glob(f"claude-print-{pid}-*"))
        return found[0] if found else None

    def wait_for_relay_dir(self, proc: subprocess.Popen[bytes]) -> Path:
        deadline = time.monotonic() + RUN_TIMEOUT
        while True:
            path = self.relay_dir_of(proc.pid)
            if path is not None and (path / "relay.fifo").exists():
                return path
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no relay dir"
            time.sleep(0.02)

    def killed_run(self) -> Path:
        """A run SIGKILLed mid-turn (as NEEDLE kills on timeout): its watchdog removes
        its relay dir (a sweep may get there first)."""
        proc = self.start("never answered", scenario="hang")
        path = self.wait_for_relay_dir(proc)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=RUN_TIMEOUT)
        return path


def finish(proc: subprocess.Popen[bytes]) -> Tuple[int, bytes, bytes]:
    out, err = proc.communicate(timeout=RUN_TIMEOUT)
    return proc.returncode, out, err


def gone(paths: List[Path]) -> List[Path]:
    """`paths` once none is left, or those still there at the bound (a watchdog removes
    a killed run's dir as soon as it sees the run's end)."""
    deadline = time.monotonic() + RUN_TIMEOUT
    while any(path.exists() for path in paths) and time.monotonic() < deadline:
        time.sleep(0.02)  # a removal has no event to wait on
    return [path for path in paths if path.exists()]


def watchdogs_of(tmp: Path) -> List[str]:
    """Live watchdog shells of relay dirs in `tmp` (their command line names the dir)."""
    marker = str(tmp).encode()
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if cmdline.startswith(b"sh\0-c\0") and marker in cmdline:
                found.append(f"{pid}: {cmdline!r}")
    return found


def test_a_killed_runs_dir_goes_with_it_without_a_sweep(tmp_path: Path) -> None:
    """SIGKILL leaves a run no time to clean up: its watchdog removes the relay dir (the
    hooks' settings, the FIFO) and exits, with no later run needed to sweep."""
    runs = Runs(tmp_path)
    path = runs.killed_run()
    assert gone([path]) == []
    deadline = time.monotonic() + RUN_TIMEOUT
    while watchdogs_of(runs.tmp) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert watchdogs_of(runs.tmp) == []
    assert list(runs.tmp.iterdir()) == []


def test_a_run_that_ends_reaps_its_watchdog(tmp_path: Path) -> None:
    """A run that ends as usual removes its dir itself and leaves no watchdog running
    (nor a zombie: the test session's own check would list it)."""
    runs = Runs(tmp_path)
    proc = runs.start("answered")
    path = runs.wait_for_relay_dir(proc)
    assert len(watchdogs_of(runs.tmp)) == 1  # one per live run
    code, _, err = finish(proc)
    assert code == 0, err.decode()
    assert not path.exists()
    assert watchdogs_of(runs.tmp) == []


def test_ten_killed_runs_and_one_normal_run_leave_nothing(tmp_path: Path) -> None:
    runs = Runs(tmp_path)
    killed = [runs.killed_run() for _ in range(10)]
    assert gone(killed) == []
    code, out, err = finish(runs.start("after the kills", sweeping=True))
    assert code == 0, err
    assert ack("after the kills") in out.decode()
    assert list(runs.tmp.glob("claude-print-*")) == []


def test_twenty_live_runs_keep_their_dirs_while_others_are_killed_and_swept(
    tmp_path: Path,
) -> None:
    runs = Runs(tmp_path)
    prompts = [f"live run {i}" for i in range(20)]
    # Each live run sweeps at its start and answers after 3 s, so the kills and the
    # other runs' sweeps happen while it is in the middle of its turn.
    live = [runs.start(p, scenario="slow:3", sweeping=True) for p in prompts]
    stop = threading.Event()
    sweeps: List[int] = []

    def keep_sweeping() -> None:
        while not stop.is_set():
            sweeps.append(len(leftovers.sweep(str(runs.tmp))))
            time.sleep(0.01)

    sweeper = threading.Thread(target=keep_sweeping)
    sweeper.start()
    try:
        killed = [runs.killed_run() for _ in range(10)]
        results = [finish(proc) for proc in live]
    finally:
        stop.set()
        sweeper.join()
    for prompt, (code, out, err) in zip(prompts, results):
        assert code == 0, err.decode()
        assert ack(prompt) in out.decode()
    assert gone(killed) == []  # by their watchdogs or the sweeps, whichever came first
    assert list(runs.tmp.glob("claude-print-*")) == []


def test_a_run_whose_pid_this_namespace_cannot_see_keeps_its_dir(tmp_path: Path) -> None:
    """A run in another PID namespace sharing TMPDIR (`unshare -p`, a container): the pid
    in its dir's name is nobody here, yet its lock is held, so the sweep keeps the dir;
    once the lock goes (the run ended or was SIGKILLed), the dir is swept."""
    unseen = tmp_path / "claude-print-999999999-abcdefgh"  # no such pid in this namespace
    unseen.mkdir(mode=0o700)
    fd = leftovers.hold_lock(str(unseen))
    try:
        assert leftovers.sweep(str(tmp_path)) == []
        assert unseen.is_dir()
    finally:
        os.close(fd)  # what the kernel does when the holder dies
    assert leftovers.sweep(str(tmp_path)) == [str(unseen)]
