"""Contract: what a parent Claude Code session leaks into its children is not passed on.

Hooks and Bash tools of a Claude Code session inherit CLAUDECODE=1,
CLAUDE_CODE_ENTRYPOINT, CLAUDE_CODE_SESSION_ID and CLAUDE_CODE_CHILD_SESSION=1.
A child TUI that saw CLAUDE_CODE_CHILD_SESSION would write no transcript (measured
on 2.1.197, reproduced by mock_claude), and one that saw CLAUDE_CODE_ENTRYPOINT
would record that entrypoint instead of "cli" (docs/contract.md).
"""

from __future__ import annotations

import json

import pytest
from harness import MOCK_CLAUDE, Sandbox, entrypoints, run_claude_print

from claude_print.tui.pty_session import child_environment, scrubbed_names

LEAKED = {
    "CLAUDECODE": "1",
    "CLAUDE_CODE_ENTRYPOINT": "sdk-cli",
    "CLAUDE_CODE_SESSION_ID": "00000000-0000-0000-0000-000000000000",
    "CLAUDE_CODE_CHILD_SESSION": "1",
}


# Every name that must not reach the TUI, written out (not read from the list under
# test): the parent session's variables (measured on 2.1.197 and 2.1.330, docs/contract.md)
# and Claude Code's own fresh-session list.
SCRUBBED = (
    "AI_AGENT",
    "CLAUDECODE",
    "CLAUDE_CODE_BRIDGE_SESSION_ID",
    "CLAUDE_CODE_CHILD_NOTES_DIR",
    "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_CODE_CHROME_MCP_ORG_DENIED",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_EVAL_INTERVIEW_SESSION",
    "CLAUDE_CODE_EXECPATH",
    "CLAUDE_CODE_HOST_WORKTREE",
    "CLAUDE_CODE_HOST_WORKTREE_FENCE",
    "CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS",
    "CLAUDE_CODE_MESSAGING_SOCKET",
    "CLAUDE_CODE_MESSAGING_TOKEN",
    "CLAUDE_CODE_SDK_READS_SESSION_STATE",
    "CLAUDE_CODE_SESSION_ATTENDED",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_CODE_SSE_PORT",
    "CLAUDE_EFFORT",
    "CLAUDE_ENV_FILE",
    "CLAUDE_PID",
    "CLAUDE_PROJECT_DIR",
)


# User settings that `claude -p` honours: they must reach the TUI too.
USER_SETTINGS = {
    "CLAUDE_CODE_MAX_RETRIES": "3",
    "CLAUDE_CODE_EFFORT_LEVEL": "low",
    "CLAUDE_CODE_USE_FOUNDRY": "1",
    "CLAUDE_CODE_SUBAGENT_MODEL": "haiku",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_OAUTH_TOKEN": "t",
}


def test_child_environment_drops_the_parent_session_and_keeps_user_settings() -> None:
    leaks = {name: "x" for name in SCRUBBED}
    sdk = {"CLAUDE_AGENT_SDK_VERSION": "0.2.187", "CLAUDE_AGENT_SDK_CLIENT_APP": "app"}
    parent = {**LEAKED, **leaks, **sdk, **USER_SETTINGS, "PATH": "/bin", "COLUMNS": "80"}
    env = child_environment({**parent, "TERM": "dumb"})
    assert sorted((set(LEAKED) | set(leaks) | set(sdk)) & set(env)) == []
    assert {name: env[name] for name in USER_SETTINGS} == USER_SETTINGS
    assert env["PATH"] == "/bin"
    assert "COLUMNS" not in env
    assert env["TERM"] == "xterm-256color"
    assert scrubbed_names(parent) == sorted({*leaks, *sdk})


def test_verbose_names_what_was_not_passed_on(sandbox: Sandbox) -> None:
    env = {**LEAKED, **USER_SETTINGS}
    proc = run_claude_print(sandbox, ["--trace", "hi"], binary=str(MOCK_CLAUDE), env=env)
    assert proc.returncode == 0, proc.stderr
    line = [ln for ln in proc.stderr.decode().splitlines() if "not passed to Claude Code" in ln]
    assert line and line[0].endswith(": " + " ".join(sorted(LEAKED))), proc.stderr


def _check_interactive(sandbox: Sandbox, stdout: bytes) -> None:
    session_id = json.loads(stdout)["session_id"]
    [path] = [p for p in sandbox.transcripts() if p.stem == session_id]
    assert set(entrypoints(path)) == {"cli"}


def test_run_from_inside_claude_code_is_still_interactive(sandbox: Sandbox) -> None:
    proc = run_claude_print(
        sandbox, ["--output-format", "json", "hi"], binary=str(MOCK_CLAUDE), env=LEAKED
    )
    assert proc.returncode == 0, proc.stderr
    _check_interactive(sandbox, proc.stdout)


@pytest.mark.e2e
def test_real_tui_run_from_inside_claude_code(real_claude: str, sandbox: Sandbox) -> None:
    proc = run_claude_print(
        sandbox, ["--output-format", "json", "What is 2+2?"], binary=real_claude, env=LEAKED
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["usage"]["output_tokens"] > 0  # read from the transcript
    _check_interactive(sandbox, proc.stdout)


def test_betas_go_in_anthropic_betas_after_the_users_own() -> None:
    """--betas reaches the TUI through ANTHROPIC_BETAS: the TUI drops the flag's betas."""
    env = child_environment({"ANTHROPIC_BETAS": "mine-1"}, ["a-1,b-2", "c-3"])
    assert env["ANTHROPIC_BETAS"] == "mine-1,a-1,b-2,c-3"
    assert child_environment({}, ["x-1"])["ANTHROPIC_BETAS"] == "x-1"
    assert "ANTHROPIC_BETAS" not in child_environment({}, [])
