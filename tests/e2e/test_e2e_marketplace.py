"""End to end: the TUI's start-up install of Anthropic's official plugin marketplace.

An interactive Claude Code started in a HOME that never had the marketplace clones
`anthropics/claude-plugins-official` from GitHub into ~/.claude/plugins/marketplaces:
by HTTPS, and by SSH with the user's own keys (`ssh -T git@github.com` first). `claude -p`
never does (traced on 2.1.197 and 2.1.332). Offline the clone fails, so the test puts
recording `ssh` and `git` first on PATH and looks for GitHub in what they were asked.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Dict

import pytest
from checks import assert_clean, assert_exit
from harness import Sandbox, run_claude_p, run_claude_print

pytestmark = pytest.mark.e2e

# Long enough for the TUI's background install to reach its first ssh (~1 s after start).
PROMPT = "What is 2+2? [[sleep:3]]"


def recording_path(bindir: Path, log: Path) -> Dict[str, str]:
    """PATH with `ssh` (fails, as offline) and `git` (runs the real one) that log argv."""
    real_git = shutil.which("git")
    bindir.mkdir()
    for name, then in (
        ("ssh", "exit 255"),
        ("git", f'exec "{real_git}" "$@"' if real_git else "exit 1"),
    ):
        tool = bindir / name
        tool.write_text(f'#!/bin/sh\nprintf "%s\\n" "{name} $*" >> "{log}"\n{then}\n')
        tool.chmod(0o755)
    return {"PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"}


@pytest.mark.matrix  # also in scripts/sweep-releases' core: every release must know the variable
@pytest.mark.between
def test_the_official_marketplace_is_never_fetched(
    real_claude: str, sandbox: Sandbox, tmp_path: Path
) -> None:
    runs = {}
    for side in ("claude-print", "claude -p"):  # ours first: a fresh HOME's first start
        log = tmp_path / f"commands-{side.replace(' ', '')}.log"
        env = recording_path(tmp_path / f"bin-{side.replace(' ', '')}", log)
        if side == "claude-print":
            proc = run_claude_print(sandbox, [PROMPT], binary=real_claude, env=env)
        else:
            proc = run_claude_p(sandbox, real_claude, [PROMPT], env=env)
        assert_exit(proc, 0)
        runs[side] = log.read_text() if log.exists() else ""
    for side, commands in runs.items():
        fetches = [line for line in commands.splitlines() if "github.com" in line]
        assert fetches == [], f"{side} reached for GitHub: {fetches}"
    marketplaces = sandbox.home / ".claude" / "plugins" / "marketplaces"
    assert not marketplaces.exists(), "a marketplace folder was made under ~/.claude/plugins"
    assert_clean(sandbox)
