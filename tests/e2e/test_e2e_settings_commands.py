"""End to end: commands a user's settings make the TUI run that `claude -p` never runs.

The TUI runs a `statusLine` command (the session's JSON on its stdin) as it draws; print
mode draws nothing. Wherever the setting comes from, a claude-print run must not run it
either (measured: `claude -p` of 2.1.197 and 2.1.332 never does). claude-print puts an
empty one in its place; up to 2.1.202 that shows "← for agents" where the ready footer
was, which claude-print reads as ready (contract.READY_FOOTERS)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

import pytest
from checks import assert_clean, assert_exit
from harness import Sandbox, run_claude_p, run_claude_print

pytestmark = pytest.mark.e2e

SOURCES = [
    pytest.param("user", marks=pytest.mark.matrix),
    pytest.param("project", marks=pytest.mark.newest_only),
    pytest.param("flag", marks=pytest.mark.newest_only),
]


def status_line_args(sandbox: Sandbox, source: str, marker: Path) -> List[str]:
    """Where the status line is set; the argv that goes with it."""
    settings = {"statusLine": {"type": "command", "command": f"touch {marker}; echo status"}}
    if source == "flag":
        return ["--settings", json.dumps(settings)]
    where = sandbox.home if source == "user" else sandbox.project
    (where / ".claude").mkdir(exist_ok=True)
    (where / ".claude" / "settings.json").write_text(json.dumps(settings))
    return []


@pytest.mark.parametrize("source", SOURCES)
def test_a_status_line_command_never_runs(
    real_claude: str, sandbox: Sandbox, tmp_path: Path, source: str
) -> None:
    for side in ("claude -p", "claude-print"):
        marker = tmp_path / f"status-line-ran-{side.replace(' ', '')}"
        args = [*status_line_args(sandbox, source, marker), "--output-format", "json", "hi"]
        if side == "claude -p":
            proc = run_claude_p(sandbox, real_claude, args)
        else:
            proc = run_claude_print(sandbox, args, binary=real_claude)
        assert_exit(proc, 0)
        assert not marker.exists(), f"{side} ran the {source} settings' status line command"
    assert_clean(sandbox)
