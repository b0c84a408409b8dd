"""Asking hooks: the hook script waits for claude-print's decision and prints it.

The hook runs as Claude Code runs it (`/bin/sh -c COMMAND`, payload on stdin);
the test plays claude-print: it waits for the event on the FIFO, then answers.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

from claude_print import contract
from claude_print.hooks import leftovers
from claude_print.hooks.hook_settings import FIFO_NAME
from claude_print.hooks.relay import HookEvent, Relay

WAIT = 20.0


# The `relay` fixture's (tests/conftest.py).
RELAY_OPTIONS = {"asking": (contract.HOOK_PRE_TOOL_USE,)}


def hook_entry(relay: Relay, event: str) -> Dict[str, Any]:
    with open(relay.settings_path, encoding="utf-8") as f:
        entry: Dict[str, Any] = json.load(f)["hooks"][event][0]
    return entry


def start_hook(relay: Relay, event: str, payload: Dict[str, Any]) -> subprocess.Popen[bytes]:
    command = hook_entry(relay, event)["hooks"][0]["command"]
    proc = subprocess.Popen(
        ["/bin/sh", "-c", command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: the script may be a child of sh
    )
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(payload).encode())
    proc.stdin.close()
    proc.stdin = None  # communicate() must not flush it again
    return proc


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def next_events(relay: Relay) -> List[HookEvent]:
    ready, _, _ = select.select([relay.read_fd], [], [], WAIT)
    assert ready, "no hook event within the wait"
    return relay.read_events()


def test_asking_hook_waits_for_the_answer_and_prints_it(relay: Relay) -> None:
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_1"}
    proc = start_hook(relay, "PreToolUse", payload)
    [event] = next_events(relay)
    assert event.name == "PreToolUse" and event.payload == payload
    assert event.reply is not None
    assert proc.poll() is None, "the hook must wait for claude-print's answer"
    decision = {"continue": False, "stopReason": 'budget "$1" \\ spent'}
    assert relay.answer(event, decision)
    out, err = proc.communicate(timeout=WAIT)
    assert proc.returncode == 0, err
    assert json.loads(out) == decision
    assert not os.path.exists(event.reply), "the reply FIFO is removed"
    assert relay.answer(event, {}) is False, "an event is answered once"


def test_no_decision_prints_an_empty_line(relay: Relay) -> None:
    proc = start_hook(relay, "PreToolUse", {"tool_name": "Read"})
    [event] = next_events(relay)
    assert relay.answer(event, None)
    out, err = proc.communicate(timeout=WAIT)
    assert (proc.returncode, out) == (0, b"\n"), err


def test_close_releases_a_waiting_hook(relay: Relay) -> None:
    proc = start_hook(relay, "PreToolUse", {"tool_name": "Read"})
    next_events(relay)
    relay.close()
    out, err = proc.communicate(timeout=WAIT)
    assert (proc.returncode, out) == (0, b"\n"), err


def opening_a_fifo(pgid: int) -> bool:
    """A process of the group is blocked opening a FIFO that has no reader."""
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and os.getpgid(int(pid)) == pgid:
                with open(f"/proc/{pid}/wchan") as f:
                    if f.read() == "wait_for_partner":
                        return True
        except OSError:
            continue
    return False


def announced(relay: Relay) -> None:
    """Wait until a hook's line is in the FIFO, without reading it."""
    ready, _, _ = select.select([relay.read_fd], [], [], WAIT)
    assert ready, "no hook announced itself within the wait"


def test_close_releases_a_hook_whose_line_was_never_read(relay: Relay) -> None:
    """A keeper stopped mid-turn, then given up, never read the hook's line: the hook
    must end with the run all the same (two of these outlived a CI run)."""
    proc = start_hook(relay, "PreToolUse", {"tool_name": "Read"})
    announced(relay)
    relay.close()
    out, err = proc.communicate(timeout=WAIT)
    assert (proc.returncode, out) == (0, b"\n"), err


def test_a_hook_that_asks_as_the_run_ends_does_not_wait(relay: Relay) -> None:
    """close() unlinks the FIFO first: a hook that asks after that has nobody to answer
    it and gives up at once, printing no decision."""
    os.unlink(os.path.join(relay.dir, FIFO_NAME))
    proc = start_hook(relay, "PreToolUse", {"tool_name": "Read"})
    out, err = proc.communicate(timeout=WAIT)
    assert (proc.returncode, out) == (0, b""), err
    assert not group_alive(proc.pid)


@pytest.mark.parametrize("by", ["the sweep", "the watchdog"])
def test_the_hooks_a_killed_run_left_waiting_are_ended(tmp_path: Path, by: str) -> None:
    """A run killed with SIGKILL cannot answer: its watchdog ends its hooks, the one that
    asked and the one blocked opening the FIFO nobody reads any more, and removes its dir;
    where the watchdog was killed too (`kill -9 -1`), the next run's sweep does it."""
    relay = Relay(tmp_root=str(tmp_path), asking=(contract.HOOK_PRE_TOOL_USE,))
    asking = start_hook(relay, "PreToolUse", {"tool_name": "Read"})
    announced(relay)
    watchdog = relay._watchdog
    assert watchdog is not None and watchdog.pid
    if by == "the sweep":
        os.kill(watchdog.pid, signal.SIGKILL)
    # SIGKILL, as the kernel does it: the run's fds close (the watchdog's pipe with them).
    for fd in (relay.read_fd, relay._keeper_fd, relay._lock_fd):
        os.close(fd)
    relay.read_fd = relay._keeper_fd = relay._lock_fd = -1
    blocked = start_hook(relay, "Stop", {"hook_event_name": "Stop"})
    deadline = time.monotonic() + WAIT
    while not opening_a_fifo(blocked.pid):  # a hook still on its way would add files
        assert time.monotonic() < deadline, "the Stop hook never reached the FIFO"
        time.sleep(0.01)
    if by == "the sweep":
        assert leftovers.sweep(str(tmp_path)) == [relay.dir]
    watchdog.close()  # EOF for the watchdog (or the reaping of the killed one)
    for proc, expected in ((asking, b"\n"), (blocked, b"")):
        out, err = proc.communicate(timeout=WAIT)
        assert out == expected, err
        deadline = time.monotonic() + WAIT
        while group_alive(proc.pid):
            assert time.monotonic() < deadline, f"a hook of the killed run outlived {by}"
            time.sleep(0.01)
    assert not os.path.exists(relay.dir)


def test_answer_to_a_hook_that_is_gone_is_false(relay: Relay) -> None:
    proc = start_hook(relay, "PreToolUse", {"tool_name": "Read"})
    [event] = next_events(relay)
    # Kill the whole hook, the script too: killing `sh -c` alone left the script
    # orphaned, blocked on its reply FIFO for good.
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=WAIT)
    deadline = time.monotonic() + WAIT
    while group_alive(proc.pid):
        assert time.monotonic() < deadline, "the hook's processes outlived SIGKILL"
        time.sleep(0.01)
    assert event.reply is not None
    os.unlink(event.reply)  # Claude Code killed the hook; nothing reads the FIFO any more
    assert relay.answer(event, {"continue": False}) is False


def test_asking_events_have_a_long_timeout_and_a_matcher(relay: Relay) -> None:
    entry = hook_entry(relay, "PreToolUse")
    assert entry["matcher"] == "*"
    assert entry["hooks"][0]["timeout"] == contract.ASK_TIMEOUT_SECS
    assert entry["hooks"][0]["command"].endswith(" PreToolUse ask")
    stop = hook_entry(relay, "Stop")["hooks"][0]
    assert stop["timeout"] == contract.HOOK_TIMEOUT_SECS
    assert not stop["command"].endswith(" ask")


def test_permission_request_can_ask_instead_of_denying(tmp_path: Path) -> None:
    relay = Relay(tmp_root=str(tmp_path), asking=(contract.HOOK_PERMISSION_REQUEST,))
    try:
        proc = start_hook(relay, "PermissionRequest", {"tool_name": "Bash"})
        [event] = next_events(relay)
        allow = {
            "hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": {"behavior": "allow"},
            }
        }
        relay.answer(event, allow)
        out, err = proc.communicate(timeout=WAIT)
        assert (proc.returncode, json.loads(out)) == (0, allow), err
    finally:
        relay.close()
