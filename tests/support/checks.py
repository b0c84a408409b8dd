"""Checks that test files in several folders make the same way: the exit code with
stderr in the message, nothing left behind, an interactive session, claude-print's
JSON beside `claude -p`'s."""

from __future__ import annotations

import json
import subprocess
import time
from typing import Any, Callable, Dict, List, Tuple

from fake_api import FakeApiServer
from harness import Sandbox, entrypoints, run_claude_p, run_claude_print

TOOL_PROMPT = "Please run it [[tool:Bash:touch /nonexistent-dir/claude-print-denied]]"


def assert_same_shape(ours: Dict[str, Any], theirs: Dict[str, Any]) -> None:
    missing = set(theirs) - set(ours)
    assert not missing, f"keys claude -p prints that we do not: {sorted(missing)}"
    for key, value in theirs.items():
        if value is None or ours[key] is None:
            assert (value is None and ours[key] is None) or key in ("api_error_status",), key
            continue
        assert type(ours[key]) is type(value), (key, ours[key], value)
    assert [k for k in ours if k in theirs] == list(theirs), "key order differs from claude -p"


def assert_exit(proc: subprocess.CompletedProcess[bytes], code: int) -> None:
    """The exit code first, with stderr in the message: a lost prompt must show as exit 2
    with claude-print's reason, never as a wrong answer checked before the code."""
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == code, f"exit {proc.returncode}, expected {code}; stderr:\n{stderr}"


def assert_text_like_claude_p(sandbox: Sandbox, binary: str, args: List[str]) -> None:
    """Text mode, against claude -p on the same arguments: exit code first, then stdout;
    nothing left behind."""
    ours = run_claude_print(sandbox, args, binary=binary)
    theirs = run_claude_p(sandbox, binary, args)
    assert_exit(ours, theirs.returncode)
    assert ours.stdout == theirs.stdout
    assert_clean(sandbox)


def assert_same_denials(ours: Dict[str, Any], theirs: Dict[str, Any]) -> None:
    """The same denied tools as claude -p, each with a real `toolu_` id of our session."""

    def without_id(obj: Dict[str, Any]) -> List[Dict[str, Any]]:
        return [
            {k: v for k, v in d.items() if k != "tool_use_id"} for d in obj["permission_denials"]
        ]

    assert without_id(ours) == without_id(theirs)
    assert all(d["tool_use_id"].startswith("toolu_") for d in ours["permission_denials"])


def assert_clean(sandbox: Sandbox) -> None:
    assert sandbox.leftovers() == []


def assert_interactive(sandbox: Sandbox, session_id: str) -> None:
    [path] = [p for p in sandbox.transcripts() if p.stem == session_id]
    found = set(entrypoints(path))
    assert found == {"cli"}, found


def run_json_pair(
    sandbox: Sandbox, binary: str, args: List[str], code: int
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """claude-print and claude -p on the same json arguments: both exit codes first."""
    ours = run_claude_print(sandbox, ["--output-format", "json", *args], binary=binary)
    theirs = run_claude_p(sandbox, binary, ["--output-format", "json", *args])
    assert_exit(ours, code)
    assert_exit(theirs, code)
    return json.loads(ours.stdout), json.loads(theirs.stdout)


def check_tool_denied_like_claude_p(
    sandbox: Sandbox, binary: str
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    a, b = run_json_pair(sandbox, binary, [TOOL_PROMPT], 0)
    assert a["result"] == b["result"] == "Tool turn done."
    assert a["num_turns"] == b["num_turns"] == 2
    assert_same_denials(a, b)
    assert_same_shape(a, b)
    assert_interactive(sandbox, a["session_id"])
    assert_clean(sandbox)
    return a, b


def check_api_error_like_claude_p(
    sandbox: Sandbox,
    binary: str,
    same_shape: Callable[[Dict[str, Any], Dict[str, Any]], None] = assert_same_shape,
) -> None:
    prompt = "This fails [[error:400]]"
    started = time.monotonic()
    a, b = run_json_pair(sandbox, binary, [prompt], 1)
    elapsed = time.monotonic() - started
    for key in ("subtype", "is_error", "api_error_status", "result", "stop_reason", "num_turns"):
        assert a[key] == b[key], key
    same_shape(a, b)
    assert elapsed < 60, "an API error must end the run, not wait for the timeout"
    assert_text_like_claude_p(sandbox, binary, [prompt])


def requests_of(fake_api: FakeApiServer, marker: str) -> List[Dict[str, Any]]:
    """The turn requests (side requests aside) of the run whose prompt holds `marker`."""
    return [r for r in fake_api.requests if marker in r["prompt"] and not r["side"]]


TUI_ONLY_TOOLS = {"AskUserQuestion", "EnterPlanMode", "ExitPlanMode"}


def eventually(check: Callable[[], bool], within: float = 20.0) -> bool:
    """Whether `check` comes true within `within` seconds (a file another process
    creates: there is no event to wait on in the standard library)."""
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def signalled(
    proc: subprocess.Popen[bytes], when: Callable[[], object], signum: int, timeout: float
) -> subprocess.CompletedProcess[bytes]:
    """`proc` sent `signum` once `when()` has returned (it waits, and asserts what it
    waits for), then read to its end; killed if anything fails first, never left."""
    try:
        when()
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
