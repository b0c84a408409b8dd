"""Fault injection (issue 4): unattended runs never hang and never leak. The child's start
goes wrong: it dies early, draws nothing or a screen claude-print does not know, or asks
what claude-print will not answer for the user (an API key, a login, bypass mode). Each
case runs claude-print against a mock_claude scenario and checks it with
mock_runs.check.
"""

from __future__ import annotations

import json
import os
import time

import pytest
from harness import Sandbox
from mock_runs import HUNG, ack, check, err, json_out, run_mock, submitted

ROOT_ERROR = "--dangerously-skip-permissions cannot be used with root/sudo privileges"
IS_ROOT = os.geteuid() == 0


def test_ok_baseline(sandbox: Sandbox) -> None:
    proc = run_mock(sandbox, ["hello there"])
    check(sandbox, proc, 0)
    assert proc.stdout.decode() == ack("hello there") + "\n"


def test_die_early_passes_on_the_childs_last_words(sandbox: Sandbox) -> None:
    started = time.monotonic()
    proc = run_mock(sandbox, ["hi"], "die_early")
    assert time.monotonic() - started < HUNG
    check(sandbox, proc, 2, "exited (status 1) before answering", ROOT_ERROR)
    assert proc.stdout == b""


def test_die_early_json_prints_an_error_object(sandbox: Sandbox) -> None:
    proc = run_mock(sandbox, ["--output-format", "json", "hi"], "die_early")
    check(sandbox, proc, 2, ROOT_ERROR)
    obj = json_out(proc)
    assert obj["type"] == "result"
    assert obj["is_error"] is True
    assert obj["subtype"] == "error_during_execution"
    assert any(ROOT_ERROR in e for e in obj["errors"])


def test_no_screen_hits_the_startup_timeout(sandbox: Sandbox) -> None:
    started = time.monotonic()
    proc = run_mock(sandbox, ["hi"], "no_screen", env={"CLAUDE_PRINT_STARTUP_TIMEOUT": "3"})
    assert time.monotonic() - started < HUNG
    check(sandbox, proc, 2, "Claude Code drew nothing within 3s")
    assert submitted(sandbox) == []


def test_unknown_screen_is_shown_in_the_error(sandbox: Sandbox) -> None:
    proc = run_mock(sandbox, ["hi"], "unknown_screen")
    check(
        sandbox,
        proc,
        2,
        "a screen claude-print does not know",
        "A brand-new dialog this mock's driver cannot know",
        "1. Continue",
    )
    assert submitted(sandbox) == []


def test_trust_with_no_exit_highlighted_moves_to_yes(sandbox: Sandbox) -> None:
    proc = run_mock(sandbox, ["--trace", "hi"], "trust_no_default")
    check(sandbox, proc, 0, "caret on 'No, exit'; moving to 'Yes, I trust this folder'")
    assert proc.stdout.decode() == ack("hi") + "\n"
    config = json.loads((sandbox.home / ".claude.json").read_text())
    assert config["projects"][os.path.realpath(sandbox.project)]["hasTrustDialogAccepted"]


@pytest.mark.parametrize("guard_ms", [100, 250])
@pytest.mark.parametrize("scenario", ["ok", "trust_no_default"])
def test_dialog_keys_wait_for_the_dialog_to_settle(
    sandbox: Sandbox, scenario: str, guard_ms: int
) -> None:
    # A dialog's first key waits for 0.3 s of quiet (contract.QUIET_BEFORE_DIALOG_KEYS):
    # on 2.1.330 a key sent sooner was lost. mock_claude drops keys that come within its
    # guard of a new screen; a guard longer than the 50 ms between ordinary keys and
    # shorter than the dialog's wait must lose no key (a lost one would be sent again
    # after 0.3 s or 2 s, and the run would still pass, only later).
    dropped = sandbox.tmp / "dropped.log"
    env = {"MOCK_CLAUDE_KEY_GUARD_MS": str(guard_ms), "MOCK_CLAUDE_DROP_LOG": str(dropped)}
    proc = run_mock(sandbox, ["--trace", "hi"], scenario, env=env)
    check(sandbox, proc, 0, "trust screen: caret on")
    assert proc.stdout.decode() == ack("hi") + "\n"
    assert not dropped.exists(), dropped.read_text()
    config = json.loads((sandbox.home / ".claude.json").read_text())
    assert config["projects"][os.path.realpath(sandbox.project)]["hasTrustDialogAccepted"]


def test_api_key_prompt_is_never_answered(sandbox: Sandbox) -> None:
    proc = run_mock(sandbox, ["hi"], "api_key_prompt")
    check(
        sandbox,
        proc,
        2,
        "a billing decision claude-print will not make",
        "unset ANTHROPIC_API_KEY",
        "Do you want to use this API key?",
    )
    assert "login.. Screen" not in err(proc)  # one full stop, then the screen
    # The screen shows the key's last 20 characters: none of them reach the message.
    key = sandbox.env()["ANTHROPIC_API_KEY"]
    assert "sk-ant-...[redacted]" in err(proc)
    assert not any(key[i : i + 8] in err(proc) for i in range(len(key) - 7))
    config = json.loads((sandbox.home / ".claude.json").read_text())
    assert config["customApiKeyResponses"]["rejected"] == []  # neither Yes nor No
    assert len(config["customApiKeyResponses"]["approved"]) == 1
    assert submitted(sandbox) == []


@pytest.mark.parametrize(
    ("scenario", "advice"),
    [
        ("onboarding", "Claude Code needs a login"),
        ("onboarding_offline", "could not reach Anthropic's services"),
    ],
)
def test_onboarding_fails_with_advice(sandbox: Sandbox, scenario: str, advice: str) -> None:
    proc = run_mock(sandbox, ["hi"], scenario)
    check(sandbox, proc, 2, advice, "Run `claude` once in a terminal")
    assert "retry.." not in err(proc)
    assert submitted(sandbox) == []


def test_bypass_warning_not_asked_for_is_refused(sandbox: Sandbox) -> None:
    proc = run_mock(sandbox, ["hi"], "bypass_warning", env={"IS_SANDBOX": "1"})
    check(sandbox, proc, 2, "bypass-permissions mode (not asked for)", "Bypass Permissions mode")
    assert submitted(sandbox) == []
    # Declining is not ours to do either: the user setting stays unwritten.
    assert not (sandbox.home / ".claude" / "settings.json").exists()


def test_bypass_warning_accepted_when_asked_for(sandbox: Sandbox) -> None:
    proc = run_mock(
        sandbox,
        ["--dangerously-skip-permissions", "hi"],
        "bypass_warning",
        env={"IS_SANDBOX": "1"},
    )
    check(sandbox, proc, 0)
    assert proc.stdout.decode() == ack("hi") + "\n"


@pytest.mark.skipif(not IS_ROOT, reason="the root/sudo refusal only happens as root")
def test_bypass_as_root_without_is_sandbox(sandbox: Sandbox) -> None:
    proc = run_mock(sandbox, ["--dangerously-skip-permissions", "hi"])
    check(sandbox, proc, 2, ROOT_ERROR)


def test_timeout_during_startup(sandbox: Sandbox) -> None:
    proc = run_mock(sandbox, ["--timeout", "2", "hi"], "no_screen")
    check(sandbox, proc, 124, "timed out after 2s")


def test_unknown_probe_is_harmless(sandbox: Sandbox) -> None:
    proc = run_mock(sandbox, ["hi"], "unknown_probe")
    check(sandbox, proc, 0)
    assert proc.stdout.decode() == ack("hi") + "\n"
