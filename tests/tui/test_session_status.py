"""session_status: the TUI's own busy/idle word, from its session registry entry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claude_print.tui import session_status


def test_status_is_read_from_the_registry_of_that_process(tmp_path: Path) -> None:
    config = tmp_path / "config"
    (config / "sessions").mkdir(parents=True)
    entry = {"pid": 41, "kind": "interactive", "entrypoint": "cli", "status": "busy"}
    (config / "sessions" / "41.json").write_text(json.dumps(entry))
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    assert session_status.status(41, env) == "busy"
    assert session_status.status(42, env) is None  # another process: no entry
    assert session_status.status(None, env) is None
    (config / "sessions" / "41.json").write_text("{half")  # caught mid-write
    assert session_status.status(41, env) is None


def test_the_registry_is_under_home_without_a_config_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert session_status.registry_path(7, {}) == str(tmp_path / ".claude" / "sessions" / "7.json")
