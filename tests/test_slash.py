"""Slash prompts `claude -p` answers without a model turn (measured on 2.1.197 and
2.1.331): answered at once, the TUI never started."""

from __future__ import annotations

import json

import pytest
from conftest import MOCK_CLAUDE, Sandbox, run_claude_print

from claude_print.slash import UNAVAILABLE_IN_PRINT, print_mode_answer


@pytest.mark.parametrize("command", sorted(UNAVAILABLE_IN_PRINT))
def test_panel_commands_get_claude_p_s_answer(command: str) -> None:
    assert print_mode_answer(f"/{command}") == f"/{command} isn't available in this environment."
    assert print_mode_answer(f"/{command}  \n") is not None


@pytest.mark.parametrize(
    "prompt", ["/model", "/cost", "/review", "/help me", "/etc/hosts what", " /help", "help"]
)
def test_everything_else_goes_to_the_tui(prompt: str) -> None:
    assert print_mode_answer(prompt) is None


def test_help_answers_at_once_without_starting_claude_code(sandbox: Sandbox) -> None:
    log = sandbox.tmp / "argv.log"
    proc = run_claude_print(
        sandbox,
        ["--output-format", "json", "/help"],
        binary=str(MOCK_CLAUDE),
        env={"MOCK_CLAUDE_ARGV_LOG": str(log)},
    )
    assert proc.returncode == 0, proc.stderr.decode()
    result = json.loads(proc.stdout)
    assert (result["subtype"], result["is_error"], result["num_turns"]) == ("success", False, 0)
    assert result["result"] == "/help isn't available in this environment."
    assert not log.exists()  # nothing was spawned
