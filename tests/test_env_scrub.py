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
from conftest import MOCK_CLAUDE, Sandbox, entrypoints, run_claude_print

from claude_print import contract
from claude_print.pty_session import child_environment

LEAKED = {
    "CLAUDECODE": "1",
    "CLAUDE_CODE_ENTRYPOINT": "sdk-cli",
    "CLAUDE_CODE_SESSION_ID": "00000000-0000-0000-0000-000000000000",
    "CLAUDE_CODE_CHILD_SESSION": "1",
}


def test_child_environment_drops_the_parent_session() -> None:
    kept = {name: "x" for name in contract.KEPT_ENV_NAMES}
    env = child_environment({**LEAKED, **kept, "PATH": "/bin", "COLUMNS": "80", "TERM": "dumb"})
    assert not set(LEAKED) & set(env)
    assert {name: env[name] for name in kept} == kept  # settings users set on purpose
    assert env["PATH"] == "/bin"
    assert "COLUMNS" not in env
    assert env["TERM"] == "xterm-256color"


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
