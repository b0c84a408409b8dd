"""The hook relay: settings document, hook script, private dir, FIFO, cleanup.

The hook commands are run here the way Claude Code runs them (`/bin/sh -c
COMMAND`, payload on stdin), in temp dirs whose names try to break out of
the quoting; the events must arrive through the FIFO and nothing the names
contain may ever be executed.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import threading
import uuid
from pathlib import Path
from typing import Any, Dict, Iterator, List
from unittest import mock

import pytest

from claude_print import contract
from claude_print.errors import ClaudePrintError
from claude_print.hooks.hook_settings import (
    FIFO_NAME,
    SCRIPT_NAME,
    deny_decision,
    hook_script,
    hook_settings,
)
from claude_print.hooks.leftovers import LOCK_NAME
from claude_print.hooks.relay import (
    EDITOR_EVENT,
    SETTINGS_NAME,
    TEMP_PREFIX,
    USER_EDITOR_VAR,
    HookEvent,
    Relay,
    temp_root,
)


def settings_of(relay: Relay) -> Dict[str, Any]:
    with open(relay.settings_path, encoding="utf-8") as f:
        data: Dict[str, Any] = json.load(f)
    return data


def command_for(relay: Relay, event: str) -> str:
    command: str = settings_of(relay)["hooks"][event][0]["hooks"][0]["command"]
    return command


def run_hook(
    relay: Relay, event: str, payload: bytes, cwd: str = "/"
) -> subprocess.CompletedProcess[bytes]:
    """As Claude Code does: `/bin/sh -c <command>`, the payload on stdin."""
    return subprocess.run(
        ["/bin/sh", "-c", command_for(relay, event)],
        input=payload,
        capture_output=True,
        cwd=cwd,
        timeout=30,
    )


def payload_for(event: str, **extra: Any) -> Dict[str, Any]:
    body: Dict[str, Any] = {
        "session_id": str(uuid.uuid4()),
        "transcript_path": "/nonexistent/t.jsonl",
        "hook_event_name": event,
    }
    body.update(extra)
    return body


# ------------------------------------------------------------ settings shape


def test_settings_document_shape(relay: Relay) -> None:
    data = settings_of(relay)
    assert set(data) == {"hooks"}
    assert set(data["hooks"]) == set(contract.RELAYED_HOOKS)
    for event in contract.RELAYED_HOOKS:
        [entry] = data["hooks"][event]
        [hook] = entry["hooks"]
        assert hook == {
            "type": "command",
            "command": f"/bin/sh {shlex.quote(relay.script_path)} {event}",
            "timeout": contract.HOOK_TIMEOUT_SECS,
        }
        if event == contract.HOOK_PERMISSION_REQUEST:
            assert entry["matcher"] == "*"
        else:
            assert "matcher" not in entry


def test_extra_settings_are_merged(tmp_path: Path) -> None:
    r = Relay(tmp_root=str(tmp_path), extra_settings={contract.SKIP_BYPASS_SETTING: True})
    try:
        data = settings_of(r)
        assert data[contract.SKIP_BYPASS_SETTING] is True
        assert set(data["hooks"]) == set(contract.RELAYED_HOOKS)
    finally:
        r.close()


def test_extra_settings_cannot_replace_the_hooks() -> None:
    data = hook_settings("/x/hook.sh", {"hooks": {"Stop": []}, "other": 1})
    assert data["other"] == 1
    assert data["hooks"]["Stop"][0]["hooks"][0]["command"] == "/bin/sh /x/hook.sh Stop"


def test_command_splits_back_into_three_words() -> None:
    path = "/tmp/a b/'q'/\"dq\"/$(x)/`y`/hook.sh"
    for event in contract.RELAYED_HOOKS:
        command = hook_settings(path)["hooks"][event][0]["hooks"][0]["command"]
        assert shlex.split(command) == ["/bin/sh", path, event]


def test_hook_script_quotes_the_dir() -> None:
    script = hook_script("/tmp/it's $(here)")
    assert "dir='/tmp/it'\"'\"'s $(here)'\n" in script
    assert script.startswith("#!/bin/sh\n")


def test_deny_decision_shape() -> None:
    assert deny_decision() == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": contract.DENY_MESSAGE},
        }
    }


# ------------------------------------------------------------- files, modes


def test_private_dir_and_file_modes(relay: Relay, tmp_path: Path) -> None:
    assert os.path.dirname(relay.dir) == str(tmp_path)
    assert os.path.basename(relay.dir).startswith(f"{TEMP_PREFIX}{os.getpid()}-")
    assert stat.S_IMODE(os.stat(relay.dir).st_mode) == 0o700
    fifo = os.stat(relay.fifo_path)
    assert stat.S_ISFIFO(fifo.st_mode)
    assert stat.S_IMODE(fifo.st_mode) == 0o600
    for name in (SCRIPT_NAME, SETTINGS_NAME):
        mode = os.stat(os.path.join(relay.dir, name)).st_mode
        assert stat.S_ISREG(mode)
        assert stat.S_IMODE(mode) == 0o600
    assert sorted(os.listdir(relay.dir)) == sorted(
        [FIFO_NAME, SCRIPT_NAME, SETTINGS_NAME, LOCK_NAME]
    )


def test_modes_hold_under_a_permissive_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        r = Relay(tmp_root=str(tmp_path))
    finally:
        os.umask(old)
    try:
        assert stat.S_IMODE(os.stat(r.dir).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(r.fifo_path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(r.settings_path).st_mode) == 0o600
    finally:
        r.close()


def test_fds_are_not_inherited(relay: Relay) -> None:
    assert not os.get_inheritable(relay.read_fd)


def test_close_removes_everything_and_is_idempotent(tmp_path: Path) -> None:
    r = Relay(tmp_root=str(tmp_path))
    run_hook(r, "Stop", json.dumps(payload_for("Stop")).encode())  # an event file too
    assert len(os.listdir(r.dir)) == 5
    r.close()
    assert os.listdir(tmp_path) == []
    assert r.read_fd == -1
    r.close()
    assert os.listdir(tmp_path) == []


def test_close_removes_the_fifo_before_closing_its_read_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook opening the FIFO with no reader would block in open() forever; removing
    the FIFO first makes a late hook fail fast (ENOENT) instead."""
    r = Relay(tmp_root=str(tmp_path))
    ours = {r.read_fd, r._keeper_fd}
    seen: List[bool] = []
    real_close = os.close

    def spy(fd: int) -> None:
        if fd in ours:
            seen.append(os.path.exists(r.fifo_path))
        real_close(fd)

    monkeypatch.setattr(os, "close", spy)
    r.close()
    assert seen == [False, False]


def test_hook_after_close_returns_at_once_and_leaves_nothing(tmp_path: Path) -> None:
    r = Relay(tmp_root=str(tmp_path))
    command = command_for(r, "Stop")
    r.close()
    proc = subprocess.run(["/bin/sh", "-c", command], input=b"{}", capture_output=True, timeout=30)
    # The script went with the dir: the hook fails as /bin/sh fails on any missing script
    # (2 from dash, 127 from bash), saying so, and neither blocks nor writes anything.
    missing = subprocess.run(["/bin/sh", str(tmp_path / "gone.sh")], capture_output=True)
    assert missing.returncode != 0
    assert proc.returncode == missing.returncode, proc.stderr
    assert r.script_path.encode() in proc.stderr, proc.stderr
    assert proc.stdout == b""
    assert os.listdir(tmp_path) == []


# -------------------------------------------------------- events via the FIFO


def test_stop_event_arrives(relay: Relay) -> None:
    payload = payload_for("Stop", last_assistant_message="done ✓")
    proc = run_hook(relay, "Stop", json.dumps(payload).encode())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b""  # Stop must not print a decision
    [event] = relay.read_events()
    assert event == HookEvent("Stop", payload)
    assert relay.read_events() == []
    # the payload file was consumed
    assert sorted(os.listdir(relay.dir)) == sorted(
        [FIFO_NAME, SCRIPT_NAME, SETTINGS_NAME, LOCK_NAME]
    )


def test_stop_failure_event_arrives(relay: Relay) -> None:
    payload = payload_for("StopFailure", error="unknown", last_assistant_message="API Error")
    assert run_hook(relay, "StopFailure", json.dumps(payload).encode()).returncode == 0
    assert relay.read_events() == [HookEvent("StopFailure", payload)]


def test_permission_request_prints_the_deny_decision(relay: Relay) -> None:
    payload = payload_for("PermissionRequest", tool_name="Bash", tool_input={"command": "rm -rf /"})
    proc = run_hook(relay, "PermissionRequest", json.dumps(payload).encode())
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == deny_decision()
    assert proc.stdout.count(b"\n") == 1
    assert relay.read_events() == [HookEvent("PermissionRequest", payload)]


def test_no_events_without_hooks(relay: Relay) -> None:
    assert relay.read_events() == []


def test_malformed_payload_is_an_event_with_an_error(relay: Relay) -> None:
    run_hook(relay, "Stop", b"not json {")
    [event] = relay.read_events()
    assert event.name == "Stop"
    assert event.payload == {}
    assert event.error is not None and "unreadable Stop hook payload" in event.error


def test_non_object_payload_is_an_event_with_an_error(relay: Relay) -> None:
    run_hook(relay, "Stop", b"[1, 2, 3]")
    [event] = relay.read_events()
    assert event.error == "Stop hook payload is not a JSON object"


def test_empty_payload(relay: Relay) -> None:
    run_hook(relay, "Stop", b"")
    [event] = relay.read_events()
    assert event.name == "Stop" and event.error is not None


def test_large_payload(relay: Relay) -> None:
    payload = payload_for("Stop", last_assistant_message="x" * 2_000_000)
    assert run_hook(relay, "Stop", json.dumps(payload).encode()).returncode == 0
    assert relay.read_events() == [HookEvent("Stop", payload)]


def test_a_partial_line_waits_for_the_rest(relay: Relay) -> None:
    event_file = os.path.join(relay.dir, "event.manual")
    with open(event_file, "w") as f:
        json.dump({"a": 1}, f)
    fd = os.open(relay.fifo_path, os.O_WRONLY)
    try:
        os.write(fd, b"Stop event.ma")
        assert relay.read_events() == []
        os.write(fd, b"nual\n")
        assert relay.read_events() == [HookEvent("Stop", {"a": 1})]
    finally:
        os.close(fd)


def test_a_line_cannot_point_outside_the_dir(relay: Relay, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('{"stolen": true}')
    fd = os.open(relay.fifo_path, os.O_WRONLY)
    try:
        os.write(fd, f"Stop ../{outside.name}\n".encode())
    finally:
        os.close(fd)
    [event] = relay.read_events()
    assert event.payload == {} and event.error is not None
    assert outside.exists()


def test_concurrent_hooks_never_interleave(relay: Relay) -> None:
    payloads = [payload_for("Stop", n=n, text="y" * (n * 997)) for n in range(24)]
    results: List[int] = []

    def one(payload: Dict[str, Any]) -> None:
        results.append(run_hook(relay, "Stop", json.dumps(payload).encode()).returncode)

    threads = [threading.Thread(target=one, args=(p,)) for p in payloads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [0] * len(payloads)
    events = relay.read_events()
    assert sorted(e.payload["n"] for e in events) == list(range(24))
    assert all(e.error is None and e.payload in payloads for e in events)


# --------------------------------------------------------- hostile TMPDIRs

HOSTILE = [
    "with space",
    "it's",
    'dq"uote',
    "semi;colon & amp | pipe",
    "dollar $HOME ${HOME}",
    "glob * ? [a]",
    "new\nline",
    "tab\there",
    "-leading-dash",
    "ünïcödé ✓ 🦀",
]


@pytest.fixture
def pwn_names(tmp_path: Path) -> Iterator[List[Path]]:
    """Paths a broken quoting would create; none may exist afterwards."""
    tag = uuid.uuid4().hex[:12]
    names = [Path(f"/tmp/pwned-{tag}"), Path(f"/tmp/pwned-bt-{tag}")]
    yield names
    for path in names:
        if path.exists():
            path.unlink()


def hostile_dirs(base: Path, pwned: List[Path]) -> List[Path]:
    command_sub = f"cs $(touch {pwned[0]})"  # nested: the name holds "/"s
    backticks = f"bt `touch {pwned[1]}`"
    dirs = [base / name for name in HOSTILE]
    dirs.append(base / command_sub)
    dirs.append(base / backticks)
    dirs.append(base / f"all of it 'q' \"dq\" $(touch {pwned[0]}) `touch {pwned[1]}` $x")
    for d in dirs:
        d.mkdir(parents=True)
    return dirs


def test_hostile_tmp_roots_are_quoted(tmp_path: Path, pwn_names: List[Path]) -> None:
    for root in hostile_dirs(tmp_path / "roots", pwn_names):
        r = Relay(tmp_root=str(root))
        try:
            assert r.dir.startswith(str(root) + "/")
            for event in contract.RELAYED_HOOKS:
                payload = payload_for(event, root=str(root))
                proc = run_hook(r, event, json.dumps(payload).encode(), cwd=str(tmp_path))
                assert proc.returncode == 0, (root, proc.stderr)
                assert proc.stderr == b"", (root, proc.stderr)
                assert r.read_events() == [HookEvent(event, payload)], root
        finally:
            r.close()
        assert os.listdir(root) == []
        for path in pwn_names:
            assert not path.exists(), f"{path} was created: the quoting of {root!r} broke"


def test_hostile_tmpdir_env(
    tmp_path: Path, pwn_names: List[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    [root] = hostile_dirs(tmp_path / "env", pwn_names)[-1:]
    # (temp_root() now passes such a TMPDIR over; the hooks must be safe in it anyway.)
    monkeypatch.setenv("TMPDIR", str(root))
    r = Relay(tmp_root=str(root))
    try:
        assert os.path.dirname(r.dir) == str(root)
        payload = payload_for("PermissionRequest", tool_name="Bash")
        proc = run_hook(r, "PermissionRequest", json.dumps(payload).encode())
        assert json.loads(proc.stdout) == deny_decision()
        assert r.read_events() == [HookEvent("PermissionRequest", payload)]
    finally:
        r.close()
    for path in pwn_names:
        assert not path.exists()


def test_hook_works_when_tmp_is_noexec_style(relay: Relay) -> None:
    """The script is run by /bin/sh, so it needs no execute bit (noexec mounts)."""
    assert stat.S_IMODE(os.stat(relay.script_path).st_mode) & 0o111 == 0
    run_hook(relay, "Stop", b"{}")
    assert relay.read_events() == [HookEvent("Stop", {})]


# ---------------------------------------------------------------- TMPDIR


def test_temp_root_uses_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert temp_root() == str(tmp_path)


def test_temp_root_without_tmpdir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TMPDIR", raising=False)
    assert os.path.isdir(temp_root())
    monkeypatch.setenv("TMPDIR", "")
    assert os.path.isdir(temp_root())


def test_missing_tmpdir_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "missing"
    monkeypatch.setenv("TMPDIR", str(missing))
    with pytest.raises(ClaudePrintError, match="does not exist") as info:
        Relay()
    assert info.value.exit_code == 2
    assert not missing.exists()


def test_tmpdir_that_is_a_file_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "file"
    path.write_text("")
    monkeypatch.setenv("TMPDIR", str(path))
    with pytest.raises(ClaudePrintError, match="is not a directory"):
        Relay()


def test_unwritable_tmp_root_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # os.mkdir refuses as a chmod 500 dir would refuse anyone but root (CI runs as root)
    root = tmp_path / "ro"
    root.mkdir()
    real_mkdir = os.mkdir

    def refuse_in_root(path: str, mode: int = 0o777, **kwargs: Any) -> None:
        if os.path.dirname(os.fspath(path)) == str(root):
            raise PermissionError(13, "Permission denied", path)
        real_mkdir(path, mode, **kwargs)

    monkeypatch.setattr(os, "mkdir", refuse_in_root)
    with pytest.raises(ClaudePrintError) as info:
        Relay(tmp_root=str(root))
    assert info.value.message == f"cannot create a private temp dir in {root}: Permission denied"
    assert info.value.exit_code == 2
    assert os.listdir(root) == []


def test_setup_failure_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fifo(path: str, mode: int = 0o666) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "mkfifo", no_fifo)
    with pytest.raises(ClaudePrintError, match="cannot set up the hook relay"):
        Relay(tmp_root=str(tmp_path))
    assert os.listdir(tmp_path) == []


def test_no_post_tool_batch_hook_without_max_turns(relay: Relay) -> None:
    assert contract.HOOK_POST_TOOL_BATCH not in settings_of(relay)["hooks"]


def test_post_tool_batch_stops_the_turn_after_max_turns_batches(tmp_path: Path) -> None:
    relay = Relay(tmp_root=str(tmp_path), max_turns=2)
    try:
        command = command_for(relay, contract.HOOK_POST_TOOL_BATCH)
        assert command.endswith(" PostToolBatch 2")
        main = json.dumps(payload_for("PostToolBatch", tool_calls=[])).encode()
        sub = json.dumps(payload_for("PostToolBatch", agent_id="a1", tool_calls=[])).encode()
        outputs = [
            run_hook(relay, contract.HOOK_POST_TOOL_BATCH, body).stdout
            for body in (main, sub, sub, main, main)
        ]
        stop = json.dumps(contract.MAX_TURNS_STOP, separators=(",", ":")).encode() + b"\n"
        # A subagent's batches (hook input with "agent_id") do not count, as in claude -p.
        assert outputs == [b"", b"", b"", stop, stop]
        assert json.loads(stop) == {"continue": False, "stopReason": mock.ANY}
        assert [e.name for e in relay.read_events()] == ["PostToolBatch"] * 5
    finally:
        relay.close()
    assert not os.path.exists(relay.dir)


def test_post_tool_batch_asks_beside_its_max_turns_entry(tmp_path: Path) -> None:
    """--max-turns with --max-budget-usd: the batch counter stays, an asking entry joins
    it (the TUI runs both and stops if either says so)."""
    relay = Relay(
        tmp_root=str(tmp_path),
        max_turns=3,
        asking=(contract.HOOK_PRE_TOOL_USE, contract.HOOK_POST_TOOL_BATCH),
    )
    try:
        entries = settings_of(relay)["hooks"][contract.HOOK_POST_TOOL_BATCH]
        commands = [entry["hooks"][0]["command"] for entry in entries]
        assert [c.rsplit(" ", 2)[-2:] for c in commands] == [
            ["PostToolBatch", "3"],
            ["PostToolBatch", "ask"],
        ]
        [pre] = settings_of(relay)["hooks"][contract.HOOK_PRE_TOOL_USE]
        assert pre["hooks"][0]["command"].endswith(" PreToolUse ask")
    finally:
        relay.close()


def test_post_tool_batch_without_a_limit_never_stops(tmp_path: Path) -> None:
    relay = Relay(tmp_root=str(tmp_path), max_turns=1)
    try:
        script = command_for(relay, contract.HOOK_POST_TOOL_BATCH).rsplit(" ", 1)[0]
        body = json.dumps(payload_for("PostToolBatch", tool_calls=[])).encode()
        for _ in range(3):
            proc = subprocess.run(["/bin/sh", "-c", script], input=body, capture_output=True)
            assert (proc.returncode, proc.stdout) == (0, b"")
    finally:
        relay.close()


@pytest.mark.parametrize("name", ["a b", "it's", "$x", "new\nline", "tab\there", "semi;colon"])
def test_a_tmpdir_that_needs_quoting_gives_way_to_a_plain_one(tmp_path: Path, name: str) -> None:
    from claude_print.hooks.relay import PLAIN_ROOTS, temp_root

    quoted = tmp_path / name
    quoted.mkdir()
    assert temp_root({"TMPDIR": str(quoted)}) in PLAIN_ROOTS
    plain = tmp_path / "plain-dir_1.x"
    plain.mkdir()
    assert temp_root({"TMPDIR": str(plain)}) == str(plain)


# --- the editor script (Ctrl+G) ---------------------------------------------------


def run_editor(
    editor: str, target: Path, env: Dict[str, str]
) -> subprocess.CompletedProcess[bytes]:
    # The TUI runs $EDITOR through a shell with the temp file as the last argument.
    command = f"{editor} {shlex.quote(str(target))}"
    return subprocess.run(["/bin/sh", "-c", command], env=env, capture_output=True, timeout=10)


def test_the_editor_script_replaces_the_box_text_and_reports(relay: Relay, tmp_path: Path) -> None:
    """The box's file may hold an interrupted prompt put back: the staged prompt replaces
    it, never adds to it, and the script reports over the FIFO once it is written."""
    target = tmp_path / "box.md"
    target.write_text("the interrupted prompt, put back in the box")
    prompt = "second prompt\n$(touch pwned) `id` ; 'quoted' \"dq\"\n"
    relay.stage_prompt(prompt)
    proc = run_editor(relay.editor_command(), target, {"PATH": os.environ["PATH"]})
    assert proc.returncode == 0, proc.stderr
    assert target.read_text() == prompt
    assert [e.name for e in relay.read_events()] == [EDITOR_EVENT]
    assert not (tmp_path / "pwned").exists()


def test_after_the_prompt_the_editor_is_the_users(relay: Relay, tmp_path: Path) -> None:
    """Unstaged (the box has the prompt), $EDITOR is what the user set: a tool the model
    runs gets it; with none set, the script fails as a missing editor would."""
    target = tmp_path / "notes.txt"
    target.write_text("x")
    relay.stage_prompt("p")
    relay.unstage_prompt()
    env = {"PATH": os.environ["PATH"], USER_EDITOR_VAR: "sed -i s/x/edited/"}
    editor = relay.editor_command()
    proc = run_editor(editor, target, env)
    assert proc.returncode == 0, proc.stderr
    assert target.read_text() == "edited"
    assert relay.read_events() == []
    assert run_editor(editor, target, {"PATH": os.environ["PATH"]}).returncode == 1
