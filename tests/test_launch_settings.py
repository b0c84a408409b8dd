"""The settings claude-print hands the TUI (run/launch.make_relay)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claude_print.options import Options
from claude_print.run.launch import make_relay


@pytest.mark.parametrize("delivery", ["argv", "editor", "paste"])
def test_the_users_status_line_gives_way_to_an_empty_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, delivery: str
) -> None:
    """On every release: up to 2.1.202 the status line takes the ready footer's place,
    which is read as "← for agents" there (test_screens), so no release keeps the user's."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    options = Options(prompt="hi", prompt_source="argv")
    relay = make_relay(options, delivery, None, False, None)
    try:
        settings = json.loads(Path(relay.settings_path).read_text())
    finally:
        relay.close()
    assert settings["statusLine"] == {"type": "command", "command": ""}
