"""hook_events: the watch script and the stream-json events of the user's hook runs."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

from claude_print.hooks import hook_events
from claude_print.hooks.hook_events import HookRun, HookWatch, WatchedCommand
from claude_print.hooks.relay import Relay

USER_HOOKS: Dict[str, Any] = {
    "model": "claude-sonnet-4-6",
    "hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": "echo ss"}]}],
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {"type": "command", "command": "echo 'it''s' \"$X\"", "timeout": 5},
                    {"type": "prompt", "prompt": "is this ok?"},
                ],
            }
        ],
    },
}


def test_watch_settings_wraps_each_command_hook_of_the_chosen_events() -> None:
    settings, watched = hook_events.watch_settings(USER_HOOKS, "/r d/watch.sh", None)
    assert watched == [
        WatchedCommand("echo ss", hook_events.DEFAULT_TIMEOUT_SECS),
        WatchedCommand("echo 'it''s' \"$X\"", 5.0),
    ]
    assert settings["model"] == "claude-sonnet-4-6"
    pre = settings["hooks"]["PreToolUse"][0]
    assert pre["matcher"] == "Bash"
    assert pre["hooks"][0] == {
        "type": "command",
        "command": "/bin/sh '/r d/watch.sh' 1",
        "timeout": 5,
    }
    assert pre["hooks"][1] == {"type": "prompt", "prompt": "is this ok?"}  # not a command
    assert USER_HOOKS["hooks"]["SessionStart"][0]["hooks"][0]["command"] == "echo ss"  # a copy

    only_start, watched = hook_events.watch_settings(USER_HOOKS, "/w.sh", hook_events.ALWAYS)
    assert watched == [WatchedCommand("echo ss", hook_events.DEFAULT_TIMEOUT_SECS)]
    assert only_start["hooks"]["PreToolUse"] == USER_HOOKS["hooks"]["PreToolUse"]


def run_watched(
    relay: Relay, index: int, payload: Dict[str, Any]
) -> subprocess.CompletedProcess[bytes]:
    settings = json.loads(Path(relay.settings_path).read_text())
    commands = [
        entry["command"]
        for matchers in settings["hooks"].values()
        for matcher in matchers
        for entry in matcher["hooks"]
        if "watch.sh" in entry.get("command", "")
    ]
    return subprocess.run(
        ["/bin/sh", "-c", commands[index]],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env={**os.environ, "X": "from the env"},
        timeout=30,
    )


WATCHED_HOOKS = {
    "PreToolUse": [
        {
            "hooks": [
                {
                    "type": "command",
                    "command": "cat; printf 'out\\0x'; echo \"err $X\" >&2; exit 2",
                }
            ]
        }
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "true"}]}],
}
# The `relay` fixture's (tests/conftest.py): the user's hooks above, watched.
RELAY_OPTIONS = {"user_settings": {"hooks": WATCHED_HOOKS}, "watch_hooks": True}


def test_the_watch_script_hands_back_output_and_exit_code_unchanged(relay: Relay) -> None:
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "session_id": "s1"}
    proc = run_watched(relay, 0, payload)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == json.dumps(payload).encode() + b"out\0x"  # stdin reached the command
    assert proc.stderr == b"err from the env\n"
    started, ended = (event.run for event in relay.read_events())
    assert started is not None and ended is not None
    assert (started.phase, started.command, started.payload) == ("hook_started", 0, payload)
    assert (ended.phase, ended.run_id, ended.exit_code) == ("hook_response", started.run_id, 2)
    assert (ended.stdout, ended.stderr) == (json.dumps(payload) + "out\0x", "err from the env\n")
    assert sorted(os.listdir(relay.dir)) == sorted(
        [
            "hook.sh",
            "watch.sh",
            "settings.json",
            "relay.fifo",
            "run.lock",
            "hook-command.0",
            "hook-command.1",
        ]
    ), "a run's files are removed once its end is read"


def test_a_watched_silent_hook_still_reports_its_run(relay: Relay) -> None:
    proc = run_watched(relay, 1, {"hook_event_name": "Stop", "session_id": "s1"})
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    runs = [event.run for event in relay.read_events() if event.run is not None]
    phases = [(run.phase, run.stdout, run.exit_code) for run in runs]
    assert phases == [("hook_started", "", 0), ("hook_response", "", 0)]


def test_without_watching_the_user_hooks_are_passed_as_they_are(tmp_path: Path) -> None:
    hooks = {"Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]}
    relay = Relay(tmp_root=str(tmp_path), user_settings={"hooks": hooks})
    try:
        settings = json.loads(Path(relay.settings_path).read_text())
        assert settings["hooks"]["Stop"][0] == hooks["Stop"][0]
        assert not os.path.exists(os.path.join(relay.dir, "watch.sh"))
    finally:
        relay.close()


@pytest.mark.parametrize(
    ("payload", "name"),
    [
        ({"hook_event_name": "PreToolUse", "tool_name": "Bash"}, "PreToolUse:Bash"),
        ({"hook_event_name": "SessionStart", "source": "startup"}, "SessionStart:startup"),
        ({"hook_event_name": "UserPromptSubmit", "prompt": "x"}, "UserPromptSubmit"),
        ({"hook_event_name": "Stop"}, "Stop"),
    ],
)
def test_hook_name_as_claude_p_names_a_run(payload: Dict[str, Any], name: str) -> None:
    assert hook_events.hook_name(payload) == name


def run(phase: str, run_id: str, event: str, **fields: Any) -> HookRun:
    payload = {"hook_event_name": event, "session_id": "s1", **fields.pop("payload", {})}
    return HookRun(phase, run_id, payload, **fields)


def subtypes(events: List[Dict[str, Any]]) -> List[str]:
    return [f"{e['subtype']}:{e['hook_name']}" for e in events]


def test_hook_runs_wait_for_their_place_in_the_stream() -> None:
    watch = HookWatch([WatchedCommand("x", 10.0)])
    watch.take(run("hook_started", "a", "UserPromptSubmit", command=0), 0.0, "s1")
    assert subtypes(watch.release({}, False)) == ["hook_started:UserPromptSubmit"]
    tool = {"tool_name": "Bash", "tool_use_id": "toolu_1"}
    watch.take(run("hook_started", "b", "PreToolUse", command=0, payload=tool), 0.0, "s1")
    watch.take(run("hook_response", "b", "PreToolUse", exit_code=2, payload=tool), 0.0, "s1")
    watch.take(run("hook_started", "c", "Stop", command=0), 0.0, "s1")
    assert watch.release({}, False) == [], "the tool call is not in the stream yet"
    released = watch.release({"toolu_1": "Bash"}, False)
    assert subtypes(released) == ["hook_started:PreToolUse:Bash", "hook_response:PreToolUse:Bash"]
    assert released[0]["hook_id"] == released[1]["hook_id"]
    assert (released[1]["outcome"], released[1]["exit_code"]) == ("error", 2)
    assert watch.running(5.0), "Stop's hook has not ended"
    assert not watch.running(10.5), "the TUI gave up on it after its timeout"
    assert subtypes(watch.release({}, True)) == ["hook_started:Stop"]


def test_transcript_records_of_hooks_not_ours() -> None:
    def record(command: str, kind: str = "hook_non_blocking_error") -> Dict[str, Any]:
        return {
            "type": "attachment",
            "attachment": {
                "type": kind,
                "hookName": "Stop",
                "hookEvent": "Stop",
                "stdout": "",
                "stderr": "Failed with non-blocking status code: bad",
                "exitCode": 1,
                "command": command,
            },
        }

    started, response = hook_events.from_attachment(record("exit 1"), None, "/tmp/cp-1", "s1")
    assert (started["subtype"], started["hook_id"]) == ("hook_started", response["hook_id"])
    assert (response["stderr"], response["output"], response["outcome"]) == (
        "bad\n",
        "bad\n",
        "error",
    )
    assert (
        hook_events.from_attachment(
            record("/bin/sh /tmp/cp-1/hook.sh Stop"), None, "/tmp/cp-1", "s1"
        )
        == []
    )
    assert (
        hook_events.from_attachment(record("exit 1"), hook_events.ALWAYS, "/tmp/cp-1", "s1") == []
    )
    assert hook_events.from_attachment(record("x", "environment"), None, "/tmp/cp-1", "s1") == []
