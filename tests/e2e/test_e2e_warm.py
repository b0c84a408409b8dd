"""End to end: a warm run (issue 23) sends the model exactly what a cold run sends, on
the real Claude Code, and anything the warm TUI read too early gives a cold run.

Each case boots a keeper (`--warm-up`) in a git project, waits until its TUI is at the
input box, changes one thing (or nothing), then runs the prompt with --warm and again
cold, and holds the two Messages API requests against each other, whole (the session id
aside). Unchanged, the run must have been warm; changed, cold.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest
from checks import assert_exit
from fake_api import FakeApiServer, announced_mcp_tools
from harness import SUPPORT, Sandbox, run_claude_print, run_dir
from warm_helpers import (
    git,
    keeper_ready,
    skip_if_the_date_turned,
    stop_keepers,
    wait_until,
    warm_env,
    warm_up_until_ready,
)

pytestmark = pytest.mark.e2e  # `matrix` per test: the request space takes a sample

PROMPT = "What is in this warm zebra request?"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


# (project, home). The settings file is the user's: a project's .claude/settings.local.json
# makes Claude Code add it to the user's git ignore file, so the next run sees another
# git status, warm or cold.
CHANGES: Dict[str, Callable[[Path, Path], None]] = {
    "nothing": lambda p, h: None,
    "CLAUDE.md": lambda p, h: _write(p / "CLAUDE.md", "Answer in French.\n"),
    "a settings file": lambda p, h: _write(
        h / ".claude" / "settings.json", json.dumps({"permissions": {"deny": ["Bash"]}})
    ),
    "git status": lambda p, h: _write(p / "untracked.txt", "new\n"),
    # issue 30: each gave the old request before the fingerprint read it by content
    "AGENTS.md": lambda p, h: _write(p.parent / "AGENTS.md", "Answer in Danish.\n"),
    "a file CLAUDE.md imports": lambda p, h: _write(p / "notes.md", "Answer in Welsh.\n"),
    "the --append-system-prompt-file": lambda p, h: _write(p.parent / "extra.md", "Be brief.\n"),
    "a user MCP server": lambda p, h: None,  # `claude mcp add -s user` (in the test)
}
ECHO_SERVER = str(SUPPORT / "mcp_echo.py")


def normalised(request: Dict[str, Any], session_id: str) -> Any:
    """The whole request body, its session id (metadata) made neutral."""
    text = json.dumps(request["body"], sort_keys=True).replace(session_id, "SESSION")
    return json.loads(text)


def body_diff(warm: Any, cold: Any) -> str:
    import difflib

    a, b = (json.dumps(x, indent=1, sort_keys=True).splitlines() for x in (warm, cold))
    return "\n".join(difflib.unified_diff(a, b, "warm", "cold", lineterm="", n=1))


def turn_request(requests: List[Dict[str, Any]], prompt: str = PROMPT) -> Dict[str, Any]:
    [first] = [r for r in requests if not r["side"] and prompt.strip() in r["prompt"]]
    return first


def warm_then_cold(
    sandbox: Sandbox,
    fake_api: FakeApiServer,
    real_claude: str,
    env: Dict[str, str],
    flags: List[str],
    prompt: str = PROMPT,
) -> List[Tuple[subprocess.CompletedProcess[bytes], Dict[str, Any]]]:
    """`prompt` with --warm (traced), then cold: each run and its turn's request."""
    out = []
    for mode in (["--warm", "--trace"], []):
        start = len(fake_api.requests)
        done = run_claude_print(sandbox, [*mode, *flags, prompt], binary=real_claude, env=env)
        assert_exit(done, 0)
        out.append((done, turn_request(fake_api.requests[start:], prompt)))
    return out


# The releases before the newest take unchanged and the three kinds of input the TUI
# reads at start (a memory file, a settings file, git status); that the fingerprint covers
# every file each release reads is test_e2e_warm_reads.py's, on every release.
SAMPLE = ("nothing", "CLAUDE.md", "a settings file", "git status")


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(
            change,
            marks=[pytest.mark.matrix, pytest.mark.between]
            if change == "nothing"
            else []
            if change in SAMPLE
            else [pytest.mark.newest_only],
        )
        for change in sorted(CHANGES)
    ],
)
def test_warm_request_equals_cold(
    sandbox: Sandbox, fake_api: FakeApiServer, real_claude: str, change: str
) -> None:
    project = sandbox.project
    git(project, "init", "-q", "-b", "main")
    _write(project / "README.md", "hello\n")
    git(project, "add", "README.md")
    git(project, "commit", "-q", "-m", "first")
    # Outside the project (its git status must not change): a file a flag names, and
    # CLAUDE.md's import, as they are before the keeper starts.
    _write(project.parent / "extra.md", "Be kind.\n")
    _write(project / "notes.md", "Answer in English.\n")
    _write(project / ".git" / "info" / "exclude", "notes.md\nCLAUDE.md\n")
    _write(project / "CLAUDE.md", "Read @notes.md first.\n")
    env = warm_env(sandbox)
    flags = [
        "--output-format",
        "json",
        "--append-system-prompt-file",
        str(project.parent / "extra.md"),
    ]
    try:
        warm_up_until_ready(sandbox, real_claude, env, flags, project)
        CHANGES[change](project, sandbox.home)
        if change == "a user MCP server":  # the TUI rewrites ~/.claude.json: its own CLI
            add = [real_claude, "mcp", "add", "-s", "user", "echo", "--", sys.executable]
            done = subprocess.run(
                [*add, ECHO_SERVER], env=sandbox.env(**env), capture_output=True, timeout=60
            )
            assert_exit(done, 0)
        (warm, warm_request), (cold, cold_request) = warm_then_cold(
            sandbox, fake_api, real_claude, env, flags
        )
    finally:
        stop_keepers(sandbox)
    ours, theirs = json.loads(warm.stdout), json.loads(cold.stdout)
    assert ours["result"] == theirs["result"]
    assert sorted(ours) == sorted(theirs)
    skip_if_the_date_turned(warm.stderr)
    adopted = b"runs the prompt" in warm.stderr
    assert adopted == (change == "nothing"), warm.stderr.decode()[-2000:]
    assert run_dir(sandbox).exists()
    if change == "a user MCP server":
        # Both runs were cold (above), and a cold run does not wait for a server of the
        # user's own config (only --mcp-config's are gated: README, `--mcp-config`):
        # its first request names the tool or says "still connecting", by timing.
        return
    warm_body = normalised(warm_request, ours["session_id"])
    cold_body = normalised(cold_request, theirs["session_id"])
    assert warm_body == cold_body, body_diff(warm_body, cold_body)


@pytest.mark.matrix
def test_a_slow_mcp_server_is_up_before_the_keeper_says_ready(
    sandbox: Sandbox, fake_api: FakeApiServer, real_claude: str
) -> None:
    """A keeper waits at its box until its MCP servers have their tools (as a cold run's
    first prompt does), and only then says "ready": the run's prompt goes in at once,
    and its request is the cold run's, the server's tool included. (Before: a run that
    came as the box appeared waited for a server that is slow to start.)"""
    config = sandbox.project.parent / "slow-mcp.json"
    server = {"command": sys.executable, "args": [ECHO_SERVER, "", "1.5"]}
    config.write_text(json.dumps({"mcpServers": {"slow": server}}))
    env = warm_env(sandbox)
    flags = ["--output-format", "json", "--mcp-config", str(config), "--"]
    try:
        up = run_claude_print(sandbox, ["--warm-up", *flags[:-1]], binary=real_claude, env=env)
        assert_exit(up, 0)
        wait_until("the keeper's TUI at its input box", lambda: keeper_ready(sandbox))
        (warm, warm_request), (cold, cold_request) = warm_then_cold(
            sandbox, fake_api, real_claude, env, flags
        )
    finally:
        stop_keepers(sandbox)
    skip_if_the_date_turned(warm.stderr)
    trace = warm.stderr.decode()
    assert "runs the prompt" in trace, trace[-2000:]
    assert "MCP servers ready" not in trace, trace[-2000:]  # the prompt did not wait
    ours, theirs = json.loads(warm.stdout), json.loads(cold.stdout)
    assert announced_mcp_tools(warm_request["body"]) == ["mcp__slow__say"]
    warm_body = normalised(warm_request, ours["session_id"])
    cold_body = normalised(cold_request, theirs["session_id"])
    assert warm_body == cold_body, body_diff(warm_body, cold_body)


# A warm TUI takes a short line by a paste, anything else by the editor (decision 57);
# either way the model gets what the cold run (the prompt as argv) sends it, or the run
# is cold ("" below).
WAYS_IN = {
    "one short line": ("Say zebra once, please.", "pasting"),
    # The box trims it on submit, pasted or loaded: the run goes cold.
    "a trailing space argv keeps": ("Say zebra twice. ", ""),
    "a heading mark": ("# Zebra: say it", "pasting"),
    "801 characters": ("zebra " * 133 + "???", "with Ctrl+G"),
    "two lines": ("Say zebra\nthen stop.", "with Ctrl+G"),
}


@pytest.mark.parametrize(
    "way",
    [
        pytest.param(
            way,
            marks=[pytest.mark.matrix]
            if way == "one short line"
            else []
            if way == "two lines"
            else [pytest.mark.newest_only],
        )
        for way in WAYS_IN
    ],
)
def test_each_way_in_sends_what_a_cold_run_sends(
    sandbox: Sandbox, fake_api: FakeApiServer, real_claude: str, way: str
) -> None:
    prompt, trace = WAYS_IN[way]
    env = warm_env(sandbox)
    flags = ["--output-format", "json"]
    try:
        warm_up_until_ready(sandbox, real_claude, env, flags, sandbox.project)
        (warm, warm_request), (cold, cold_request) = warm_then_cold(
            sandbox, fake_api, real_claude, env, flags, prompt
        )
    finally:
        stop_keepers(sandbox)
    stderr = warm.stderr.decode()
    assert ("runs the prompt" in stderr) == bool(trace), stderr[-2000:]
    assert trace in stderr, stderr[-2000:]
    ours, theirs = json.loads(warm.stdout), json.loads(cold.stdout)
    assert ours["result"] == theirs["result"]
    warm_body = normalised(warm_request, ours["session_id"])
    cold_body = normalised(cold_request, theirs["session_id"])
    assert warm_body == cold_body, body_diff(warm_body, cold_body)
