"""The prompt gate (claude_print/turns/prompt_gate.py): what is refused before a key is
typed, and that the binary is asked for its release only for a prompt that names a
command when the package did not say."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from claude_print import contract
from claude_print.turns import prompt_gate, slash

NEWEST = "2.1.332"


def fake_binary(tmp_path: Path, version: str) -> Path:
    """A `claude` that answers --version and counts how often it was asked."""
    binary = tmp_path / "claude"
    binary.write_text(
        f'#!/bin/sh\necho asked >> "{tmp_path}/asked"\necho "{version} (Claude Code)"\n'
    )
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    return binary


def asked(tmp_path: Path) -> int:
    log = tmp_path / "asked"
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.fixture(autouse=True)
def quiet_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No custom commands of this checkout's or the user's read into the decisions."""
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)


@pytest.mark.parametrize("delivery", ["editor", "paste", "argv"])
def test_plain_text_goes_in(tmp_path: Path, delivery: str) -> None:
    facts = contract.facts_for(NEWEST)
    gate = prompt_gate.judge("what is 2+2?", delivery, "", facts, "/nonexistent", [])
    assert gate == (slash.Decision(slash.TUI), "", facts)
    assert gate.facts is facts


def test_a_paste_that_would_act_as_keys_is_refused_only_as_a_paste() -> None:
    facts = contract.facts_for(NEWEST)
    prompt = "before\x1b[201~after"
    pasted = prompt_gate.judge(prompt, "paste", "", facts, "/nonexistent", [])
    assert pasted.refusal.startswith("the prompt contains the control character '\\x1b' at")
    assert "character 6," in pasted.refusal
    typed = prompt_gate.judge(prompt, "editor", "", facts, "/nonexistent", [])
    assert typed.refusal == ""


def test_an_earlier_error_refuses_even_plain_text() -> None:
    facts = contract.facts_for(NEWEST)
    gate = prompt_gate.judge("hello", "editor", "an image of 30 MB", facts, "/nonexistent", [])
    assert gate.refusal == "an image of 30 MB"
    assert gate.decision.kind == slash.TUI


def test_a_command_rule_refuses_with_its_reason() -> None:
    """A built-in of a release newer than the measured ones: no answer is known."""
    gate = prompt_gate.judge("/logout", "editor", "", contract.facts_for("9.9.9"), "/none", [])
    assert gate.decision.kind == slash.REFUSE and gate.decision.command == "logout"
    assert gate.refusal == gate.decision.text
    assert gate.refusal.startswith("/logout is a built-in command, and Claude Code 9.9.9 is newer")


@pytest.mark.parametrize("prompt", ["what is 2+2?", "/etc/hosts: what is in it?", "a /cost"])
def test_unknown_release_and_no_command_does_not_ask_the_binary(
    tmp_path: Path, prompt: str
) -> None:
    binary = fake_binary(tmp_path, NEWEST)
    unknown = contract.facts_for(None)
    gate = prompt_gate.judge(prompt, "editor", "", unknown, str(binary), [])
    assert asked(tmp_path) == 0
    assert gate.facts is unknown and gate.decision.kind == slash.TUI


@pytest.mark.parametrize("prompt", ["/cost", "/logout", "/model x"])
def test_unknown_release_and_a_command_asks_the_binary_once(tmp_path: Path, prompt: str) -> None:
    binary = fake_binary(tmp_path, NEWEST)
    gate = prompt_gate.judge(prompt, "editor", "", contract.facts_for(None), str(binary), [])
    assert asked(tmp_path) == 1
    assert gate.facts.version == NEWEST
    assert gate.decision.kind != slash.TUI  # a built-in: answered or refused, never typed


def test_the_binary_is_not_asked_when_the_package_said(tmp_path: Path) -> None:
    binary = fake_binary(tmp_path, "2.1.197")
    facts = contract.facts_for(NEWEST)
    gate = prompt_gate.judge("/cost", "editor", "", facts, str(binary), [])
    assert asked(tmp_path) == 0 and gate.facts is facts
