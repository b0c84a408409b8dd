"""claude_print/tui/oauth_refresh.py: the TUI is never ended while Claude Code holds its login
refresh lock (the e2e side is tests/e2e/test_e2e_oauth_refresh.py)."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Dict, List

import pytest

from claude_print.tui import oauth_refresh
from claude_print.tui.pty_session import PtyChild


def env_for(home: Path, **extra: str) -> Dict[str, str]:
    return {"HOME": str(home), **extra}


def test_config_dir_follows_claude_config_dir(tmp_path: Path) -> None:
    assert oauth_refresh.config_dir(env_for(tmp_path)) == str(tmp_path / ".claude")
    other = str(tmp_path / "cfg")
    assert oauth_refresh.config_dir(env_for(tmp_path, CLAUDE_CONFIG_DIR=other)) == other
    assert oauth_refresh.lock_paths(env_for(tmp_path, CLAUDE_CONFIG_DIR=other)) == [
        os.path.join(other, ".oauth_refresh.lock"),
        os.path.realpath(other) + ".lock",
    ]


@pytest.mark.parametrize("which", [0, 1])  # the lock, and its legacy twin
def test_a_held_lock_is_a_refresh_in_flight(tmp_path: Path, which: int) -> None:
    env = env_for(tmp_path)
    (tmp_path / ".claude").mkdir()
    assert not oauth_refresh.refresh_in_flight(env)
    lock = oauth_refresh.lock_paths(env)[which]
    os.mkdir(lock)
    assert oauth_refresh.refresh_in_flight(env)
    os.rmdir(lock)
    assert not oauth_refresh.refresh_in_flight(env)


@pytest.mark.parametrize(
    "age, held",
    [(0.0, True), (oauth_refresh.STALE_AFTER - 1, True), (oauth_refresh.STALE_AFTER + 1, False)],
)
def test_a_dead_holders_lock_is_not_waited_on(tmp_path: Path, age: float, held: bool) -> None:
    env = env_for(tmp_path)
    (tmp_path / ".claude").mkdir()
    lock = oauth_refresh.lock_paths(env)[0]
    os.mkdir(lock)
    now = time.time()
    os.utime(lock, (now - age, now - age))
    assert oauth_refresh.refresh_in_flight(env, now=now) is held


def test_no_lock_no_wait(tmp_path: Path) -> None:
    calls: List[float] = []

    def wait(seconds: float) -> bool:
        calls.append(seconds)
        return False

    waited = oauth_refresh.wait_for_refresh(env_for(tmp_path), wait)
    assert calls == [] and waited < 1


def test_waits_until_the_lock_is_released(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    (tmp_path / ".claude").mkdir()
    lock = oauth_refresh.lock_paths(env)[0]
    os.mkdir(lock)
    calls: List[float] = []

    def wait(seconds: float) -> bool:
        calls.append(seconds)
        if len(calls) == 3:
            os.rmdir(lock)  # the refresh is over
        return False

    oauth_refresh.wait_for_refresh(env, wait, limit=60)
    assert len(calls) == 3


def test_the_wait_is_bounded_and_ends_when_the_tui_has_gone(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    (tmp_path / ".claude").mkdir()
    os.mkdir(oauth_refresh.lock_paths(env)[0])
    now = [0.0]

    def wait(seconds: float) -> bool:
        now[0] += seconds
        return False

    waited = oauth_refresh.wait_for_refresh(env, wait, limit=2.0, clock=lambda: now[0])
    assert waited == pytest.approx(2.0)
    assert oauth_refresh.wait_for_refresh(env, lambda s: True, limit=60) < 1


# A child that stands in for the TUI: it holds the refresh lock (made by the test) for a
# moment, then releases it; on SIGTERM/SIGINT it notes whether the lock was still held.
CHILD = """
import os, signal, sys, time
lock, note = sys.argv[1], sys.argv[2]
def ended(signum, frame):
    with open(note, "w") as f:
        f.write("held" if os.path.exists(lock) else "released")
    sys.exit(0)
signal.signal(signal.SIGTERM, ended)
signal.signal(signal.SIGINT, ended)
print("ready", flush=True)
time.sleep(0.5)  # the token request
os.rmdir(lock)
time.sleep(60)
"""


@pytest.mark.parametrize("how", ["request_exit", "pass_on"])
def test_the_tui_is_signalled_only_after_the_refresh(tmp_path: Path, how: str) -> None:
    env = env_for(tmp_path, PATH=os.environ.get("PATH", ""))
    (tmp_path / ".claude").mkdir()
    lock = oauth_refresh.lock_paths(env)[0]
    os.mkdir(lock)
    note = tmp_path / "note"
    child = PtyChild([sys.executable, "-c", CHILD, lock, str(note)], env)
    try:
        if how == "request_exit":
            child.request_exit()
        else:
            child.pass_on(signal.SIGINT)
        assert child.wait_exit(30) is not None
    finally:
        child.terminate(0.5)
    assert note.exists() and note.read_text() == "released", "signalled during the refresh"
