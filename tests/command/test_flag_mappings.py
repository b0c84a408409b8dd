"""Each claude-print flag reaches the child as the mapping says: argv, settings, result.

These are the mappings the issue-11 audit found untested (a mutation dropping any of
them survived the whole suite). Each test runs claude-print against mock_claude and
looks at what the child got (its argv, a copy of its `--settings` file) and at what
that changed (a user hook that did or did not run, a user settings file left alone,
the result's fields), so dropping the mapping fails it:

- `--dangerously-skip-permissions` (and `--permission-mode bypassPermissions`) put
  `skipDangerousModePermissionPrompt: true` in claude-print's settings file;
- `--no-inherit-hooks` (and `inherit_hooks = false`) pass `--setting-sources=`;
- the permission-denial fallback (no `hook_permission_decision` in the transcript)
  still reports each denied tool's `tool_use_id`.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from checks import assert_exit
from harness import MOCK_CLAUDE, RUN_TIMEOUT, Sandbox

from claude_print import contract
from claude_print.turns.turn import denials_with_ids

MOCK = str(MOCK_CLAUDE)


def recording_claude(sandbox: Sandbox) -> str:
    """mock_claude behind a wrapper that keeps a copy of the `--settings` file it is
    given (claude-print removes its own copy when the run ends)."""
    wrapper = sandbox.home.parent / "claude-recording"
    wrapper.write_text(
        "#!/bin/sh\n"
        "prev=\n"
        "for arg; do\n"
        '  if [ "$prev" = --settings ]; then cp "$arg" "$SETTINGS_COPY"; fi\n'
        '  prev="$arg"\n'
        "done\n"
        f'exec {shlex.quote(MOCK)} "$@"\n'
    )
    wrapper.chmod(0o755)
    return str(wrapper)


def settings_copy(sandbox: Sandbox) -> Path:
    return sandbox.home.parent / "child-settings.json"


def argv_log(sandbox: Sandbox) -> Path:
    return sandbox.home.parent / "argv.json"


def run(
    sandbox: Sandbox,
    args: List[str],
    scenario: str = "ok",
    *,
    launcher: Optional[List[str]] = None,
) -> subprocess.CompletedProcess[bytes]:
    """claude-print (`python -m claude_print`, or `python <launcher...>`) on the mock."""
    env = sandbox.env(
        MOCK_CLAUDE_SCENARIO=scenario,
        MOCK_CLAUDE_ARGV_LOG=str(argv_log(sandbox)),
        SETTINGS_COPY=str(settings_copy(sandbox)),
        IS_SANDBOX="1",  # bypass mode as root (CI), as the real Claude Code allows
    )
    head = [sys.executable, *(launcher or ["-m", "claude_print"])]
    return subprocess.run(
        [*head, "--claude-binary", recording_claude(sandbox), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd=sandbox.project,
        env=env,
        timeout=RUN_TIMEOUT,
    )


def child_argv(sandbox: Sandbox) -> List[str]:
    argv: List[str] = json.loads(argv_log(sandbox).read_text())
    return argv


def child_settings(sandbox: Sandbox) -> Dict[str, Any]:
    data: Dict[str, Any] = json.loads(settings_copy(sandbox).read_text())
    return data


def result_of(proc: subprocess.CompletedProcess[bytes]) -> Dict[str, Any]:
    [line] = proc.stdout.decode().splitlines()
    obj: Dict[str, Any] = json.loads(line)
    return obj


# ------------------------------------------- --dangerously-skip-permissions


@pytest.mark.parametrize(
    "flags",
    [["--dangerously-skip-permissions"], ["--permission-mode", "bypassPermissions"]],
    ids=["dangerously-skip-permissions", "permission-mode-bypass"],
)
def test_bypass_mode_skips_its_warning_through_our_settings(
    sandbox: Sandbox, flags: List[str]
) -> None:
    proc = run(sandbox, [*flags, "--output-format", "json", "hi"])
    assert_exit(proc, 0)
    assert child_settings(sandbox)[contract.SKIP_BYPASS_SETTING] is True
    # So the TUI never drew the warning: had it been answered, Claude Code would have
    # written the choice into the user's own settings.
    assert not (sandbox.home / ".claude" / "settings.json").exists()
    argv = child_argv(sandbox)
    assert any(argv[i : i + len(flags)] == flags for i in range(len(argv))), argv
    assert result_of(proc)["result"].startswith("ACK ")


def test_no_bypass_setting_when_bypass_mode_is_not_asked_for(sandbox: Sandbox) -> None:
    proc = run(sandbox, ["hi"])
    assert_exit(proc, 0)
    assert contract.SKIP_BYPASS_SETTING not in child_settings(sandbox)


# ------------------------------------------------------- --no-inherit-hooks


def user_permission_hook(sandbox: Sandbox) -> Path:
    """A PermissionRequest hook in the user's settings that leaves a marker file.

    The mock runs every PermissionRequest hook of a tool call together and waits for
    all of them before the turn goes on, so once the result lists the denial, this
    hook has run, if the TUI read the user's settings at all."""
    marker = sandbox.home.parent / "user-hook-ran"
    command = f"touch {shlex.quote(str(marker))}"
    hook = {"type": "command", "command": command}
    hooks = {"PermissionRequest": [{"matcher": "*", "hooks": [hook]}]}
    (sandbox.home / ".claude").mkdir(exist_ok=True)
    (sandbox.home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    return marker


def denied_tools(proc: subprocess.CompletedProcess[bytes]) -> List[str]:
    return [d["tool_name"] for d in result_of(proc)["permission_denials"]]


def test_no_inherit_hooks_passes_empty_setting_sources(sandbox: Sandbox) -> None:
    marker = user_permission_hook(sandbox)
    proc = run(sandbox, ["--no-inherit-hooks", "--output-format", "json", "hi"], "tool")
    assert_exit(proc, 0)
    assert "--setting-sources=" in child_argv(sandbox)
    assert denied_tools(proc) == ["Bash"]  # the PermissionRequest round is over...
    assert not marker.exists()  # ...and the user's hook was not in it


def test_inherit_hooks_false_in_the_config_file(sandbox: Sandbox) -> None:
    config = sandbox.home / ".config" / "claude-print" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[defaults]\ninherit_hooks = false\n")
    marker = user_permission_hook(sandbox)
    proc = run(sandbox, ["--output-format", "json", "hi"], "tool")
    assert_exit(proc, 0)
    assert "--setting-sources=" in child_argv(sandbox)
    assert denied_tools(proc) == ["Bash"]
    assert not marker.exists()


def test_user_hooks_are_inherited_by_default(sandbox: Sandbox) -> None:
    marker = user_permission_hook(sandbox)
    proc = run(sandbox, ["--output-format", "json", "hi"], "tool")
    assert_exit(proc, 0)
    assert not any(arg.startswith("--setting-sources") for arg in child_argv(sandbox))
    assert denied_tools(proc) == ["Bash"]
    assert marker.exists()


# ------------------------------------------- the permission-denial fallback

# claude-print with transcripts that have no `hook_permission_decision` attachment (as
# when a release does not write one): the denials must come from the relay's
# PermissionRequest events, matched to the transcript's tool_use blocks.
WITHOUT_DECISIONS = """\
import runpy
from claude_print.records import summary
real = summary.summarise
def without_decisions(records, *args, **kwargs):
    kept = [
        r for r in records
        if not (isinstance(r.get("attachment"), dict)
                and r["attachment"].get("type") == "hook_permission_decision")
    ]
    return real(kept, *args, **kwargs)
summary.summarise = without_decisions
runpy.run_module("claude_print", run_name="__main__", alter_sys=True)
"""


def tool_uses(sandbox: Sandbox) -> List[Dict[str, Any]]:
    [path] = sandbox.transcripts()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [
        block
        for r in records
        if r.get("type") == "assistant"
        for block in r["message"]["content"]
        if block.get("type") == "tool_use"
    ]


def test_denial_fallback_reports_the_tool_use_id(sandbox: Sandbox) -> None:
    proc = run(
        sandbox, ["--output-format", "json", "hi"], "tool", launcher=["-c", WITHOUT_DECISIONS]
    )
    assert_exit(proc, 0)
    [use] = tool_uses(sandbox)
    assert use["id"].startswith("toolu_")
    assert result_of(proc)["permission_denials"] == [
        {"tool_name": "Bash", "tool_use_id": use["id"], "tool_input": use["input"]}
    ]


def test_denial_fallback_matches_repeated_calls_in_order() -> None:
    denials = [
        {"tool_name": "Bash", "tool_input": {"command": "ls"}},
        {"tool_name": "Bash", "tool_input": {"command": "ls"}},
        {"tool_name": "Read", "tool_input": {"file_path": "/etc/hosts"}},
    ]
    tool_uses = [
        {"id": "toolu_read", "name": "Read", "input": {"file_path": "/etc/hosts"}},
        {"id": "toolu_ls1", "name": "Bash", "input": {"command": "ls"}},
        {"id": "toolu_ls2", "name": "Bash", "input": {"command": "ls"}},
    ]
    assert [d["tool_use_id"] for d in denials_with_ids(denials, tool_uses)] == [
        "toolu_ls1",
        "toolu_ls2",
        "toolu_read",
    ]


# ------------------------------------------------------------- --mcp-config


def test_an_unreadable_mcp_config_reaches_claude_code_as_given(sandbox: Sandbox) -> None:
    """claude-print gates the servers of a config it can read (tests/mcp/test_mcp_gate.py,
    and end to end test_e2e_forwarded.py); one it cannot read goes on unchanged, with
    the values beside it, for Claude Code to report in its own words."""
    values = ["/nonexistent/mcp.json", '{"mcpServers": {}}']
    proc = run(sandbox, ["--output-format", "json", "--mcp-config", *values, "--", "hi"])
    assert_exit(proc, 0)
    argv = child_argv(sandbox)
    assert argv[argv.index("--mcp-config") :][:3] == ["--mcp-config", *values], argv
