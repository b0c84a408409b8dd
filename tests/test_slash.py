"""Slash prompts `claude -p` answers without a model turn (measured on 2.1.197 and
2.1.331): answered at once, the TUI never started."""

from __future__ import annotations

import json

import pytest
from conftest import MOCK_CLAUDE, Sandbox, run_claude_print

from claude_print.slash import UNAVAILABLE_IN_PRINT, print_mode_answer, settings_refusal


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


@pytest.mark.parametrize(
    ("prompt", "refused"),
    [
        ("/model claude-sonnet-4-5", True),
        ("/model  opus", True),
        ("/model", False),  # the bare command opens the TUI's picker: no write
        ("/models are cool", False),
        ("please /model x", False),
    ],
)
def test_model_with_an_argument_is_refused(prompt: str, refused: bool) -> None:
    assert (settings_refusal(prompt) is not None) == refused


def test_a_settings_writing_command_never_reaches_the_tui(sandbox: Sandbox) -> None:
    """The TUI's `/model X` saves X as the user's default (~/.claude/settings.json; the
    real 2.1.331 did); claude -p's does not. Refused before anything starts."""
    log = sandbox.tmp / "argv.log"
    proc = run_claude_print(
        sandbox,
        ["/model claude-sonnet-4-5-20250929"],
        binary=str(MOCK_CLAUDE),
        env={"MOCK_CLAUDE_ARGV_LOG": str(log)},
    )
    assert proc.returncode == 2, proc.stderr.decode()
    assert b"saves the choice as your default" in proc.stderr and b"--model" in proc.stderr
    assert not log.exists()
    assert not (sandbox.home / ".claude" / "settings.json").exists()


def test_stream_json_messages_get_the_same_answers(sandbox: Sandbox) -> None:
    """Each stream-json message is a prompt too: a panel command gets claude -p's answer,
    /model X an error result, and the session goes on to the next message."""

    def user(text: str) -> bytes:
        message = {"type": "user", "message": {"role": "user", "content": text}}
        return json.dumps(message).encode() + b"\n"

    stdin = user("/help") + user("/model claude-sonnet-4-5") + user("hello")
    args = ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    proc = run_claude_print(sandbox, args, stdin=stdin, binary=str(MOCK_CLAUDE))
    assert proc.returncode == 0, proc.stderr.decode()
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    results = [e for e in events if e.get("type") == "result"]
    assert [(r["is_error"], r["num_turns"]) for r in results][:2] == [(False, 0), (True, 0)]
    assert results[0]["result"] == "/help isn't available in this environment."
    assert "saves the choice as your default" in str(results[1].get("errors"))
    assert results[2]["is_error"] is False and len(results) == 3
    assert not (sandbox.home / ".claude" / "settings.json").exists()
