"""The settings claude-print hands the TUI, per release (run/launch.make_relay)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Optional

import pytest

from claude_print import contract
from claude_print.options import Options
from claude_print.run.launch import make_relay

EMPTY_STATUS_LINE = {"type": "command", "command": ""}


@pytest.mark.parametrize(
    "version, status_line",
    [
        ("2.1.197", None),
        ("2.1.202", None),  # bisected: its ready footer gives way to any status line
        ("2.1.203", EMPTY_STATUS_LINE),
        ("2.1.332", EMPTY_STATUS_LINE),
        ("2.1.999", EMPTY_STATUS_LINE),  # newer than tested: the newest facts
        ("", None),  # learned only later (a wrapper): it may be an old one
    ],
)
def test_the_users_status_line_gives_way_where_the_footer_stays(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    version: str,
    status_line: Optional[Dict[str, Any]],
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    options = Options(prompt="hi", prompt_source="argv")
    relay = make_relay(options, "argv", None, False, None, contract.facts_for(version))
    try:
        settings = json.loads(Path(relay.settings_path).read_text())
    finally:
        relay.close()
    assert settings.get("statusLine") == status_line
