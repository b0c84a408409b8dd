"""The flag table (claude_print/flags.py): complete for every supported release, and each
row does what its kind says: forwarded rows reach the child's argv, refused rows stop the
run before anything starts, with their reason."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Set

import pytest
from harness import ROOT, real_claude_paths

from claude_print import flags
from claude_print.command.cli import parse_options
from claude_print.command.parser import build_parser
from claude_print.errors import ClaudePrintError

_HELP_FLAG = re.compile(r"^  (?:(-\w), )?(--[\w-]+)(?:, (--[\w-]+))?", re.M)


def installed_binaries() -> Dict[str, str]:
    """release -> binary: the releases the tests install (tests/matrix.txt)."""
    found: Dict[str, str] = {}
    for binary in real_claude_paths():
        match = re.search(r"cc-(\d+\.\d+\.\d+)", binary)
        if match and os.access(binary, os.X_OK):
            found.setdefault(match.group(1), binary)
    return found


def help_flags(binary: str) -> Set[str]:
    out = subprocess.run(
        [binary, "--help"], capture_output=True, text=True, timeout=60, env={**os.environ}
    ).stdout
    options = out.split("\nOptions:", 1)[1].split("\nCommands:", 1)[0]
    return {name for match in _HELP_FLAG.finditer(options) for name in match.groups() if name}


@pytest.mark.parametrize("release", sorted(installed_binaries()) or ["none"])
def test_every_help_flag_of_every_installed_release_has_a_row(release: str) -> None:
    binaries = installed_binaries()
    if release not in binaries:
        if os.environ.get("CLAUDE_PRINT_REQUIRE_E2E"):
            pytest.fail("no Claude Code installed, and scripts/test installed the matrix")
        pytest.skip("no Claude Code installed (scripts/test installs the matrix)")
    missing = sorted(help_flags(binaries[release]) - set(flags.BY_NAME) - {"--help", "-h"})
    assert not missing, f"Claude Code {release} has flags without a row in flags.py: {missing}"


def test_rows_are_well_formed() -> None:
    names = [name for flag in flags.FLAGS for name in flag.names]
    assert len(names) == len(set(names)), "a flag has two rows"
    for flag in flags.FLAGS:
        assert flag.kind in flags.KINDS, flag
        assert flag.name.startswith("--"), flag
        if flag.kind in (flags.REFUSED, flags.EMULATED):
            assert flag.note, f"{flag.name}: a refused or emulated row says why or how"
    parser_names = {s for action in build_parser()._actions for s in action.option_strings}
    assert set(flags.BY_NAME) <= parser_names


def sample_value(flag: flags.Flag) -> List[str]:
    return [] if flag.takes in (flags.SWITCH, flags.OPTIONAL) else ["some-value"]


@pytest.mark.parametrize("flag", flags.of_kind(flags.FORWARDED), ids=lambda f: f.name.lstrip("-"))
def test_forwarded_rows_reach_the_tui_argv(flag: flags.Flag, tmp_path: Path) -> None:
    from claude_print.hooks.relay import Relay
    from claude_print.run.launch import build_argv

    value = "0b8e2a6e-6a36-4d0c-9a57-1c0ed4f0b8a1" if flag.name == "--session-id" else None
    words = [flag.name, value] if value else [flag.name, *sample_value(flag)]
    _, options = parse_options([*words, "--", "the prompt"], None, {"HOME": str(tmp_path)})
    assert options is not None
    relay = Relay(tmp_root=str(tmp_path))
    try:
        argv = build_argv(options, "claude", relay, options.session_id, "argv")
    finally:
        relay.close()
    at = argv.index(flag.name)
    assert argv[at : at + len(words)] == words
    # claude-print adds one --disallowedTools of its own (contract.TUI_ONLY_TOOLS).
    assert argv.count(flag.name) == (2 if flag.name == "--disallowedTools" else 1)
    assert argv[-2:] == ["--", "the prompt"]


@pytest.mark.parametrize("flag", flags.of_kind(flags.REFUSED), ids=lambda f: f.name.lstrip("-"))
def test_refused_rows_exit_2_with_their_reason_and_start_nothing(
    flag: flags.Flag, tmp_path: Path
) -> None:
    marker = tmp_path / "started"
    claude = tmp_path / "claude"
    claude.write_text(f"#!/bin/sh\ntouch {marker}\n")
    claude.chmod(0o755)
    argv = [flag.name, *sample_value(flag), "--claude-binary", str(claude), "--", "hi"]
    proc = subprocess.run(
        [sys.executable, "-m", "claude_print", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path)},
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == f"claude-print: error: {flags.refusal(flag)}\n"
    assert proc.stdout == ""
    assert not marker.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["claude"], "nothing left behind"


def test_a_flag_newer_than_the_installed_release_is_refused_with_the_release_it_needs() -> None:
    assert flags.too_new(["--restricted"], "2.1.247") == (
        "--restricted needs Claude Code 2.1.248 or newer (this is 2.1.247); "
        "update Claude Code or leave the flag out"
    )
    assert flags.too_new(["--restricted"], "2.1.248") is None
    assert flags.too_new(["--model", "x"], "2.1.197") is None
    assert flags.too_new(["--restricted"], None) is None, "unknown release: let it try"


def test_refusal_raises_while_parsing() -> None:
    with pytest.raises(ClaudePrintError, match="--bare is not supported: it switches off"):
        parse_options(["--bare", "hi"], None, {})


@pytest.mark.parametrize("mode", [None, "plan", "acceptEdits"])
def test_the_tui_offers_the_model_claude_p_s_tools(mode: Optional[str], tmp_path: Path) -> None:
    """The TUI's own question and plan-mode tools are not offered (claude -p offers none;
    measured on 2.1.197 and 2.1.331); plan mode, when asked for, keeps its pair."""
    from claude_print import contract
    from claude_print.hooks.relay import Relay
    from claude_print.run.launch import build_argv

    words = ["--permission-mode", mode] if mode else []
    _, options = parse_options([*words, "--", "hi"], None, {"HOME": str(tmp_path)})
    assert options is not None
    relay = Relay(tmp_root=str(tmp_path))
    try:
        argv = build_argv(options, "claude", relay, None, "argv")
    finally:
        relay.close()
    at = argv.index("--disallowedTools")
    hidden = argv[at + 1 : argv.index("--", at)]
    if mode == "plan":
        assert hidden == ["AskUserQuestion"]
    else:
        assert hidden == list(contract.TUI_ONLY_TOOLS)
