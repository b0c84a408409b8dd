"""The permission mode the TUI is told to start in: the one `claude -p` would use."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict

import pytest

from claude_print import contract, permissions

AUTO = contract.facts_for("2.1.290")  # the TUI starts in auto mode from here
OLD = contract.facts_for("2.1.280")


def flags(tmp_path: Path, facts: contract.Facts, asked: bool = False, reads: bool = True) -> str:
    environ: Dict[str, str] = {"HOME": str(tmp_path / "home")}
    return " ".join(
        permissions.mode_flags(
            facts, asked=asked, reads_user_settings=reads, cwd=str(tmp_path), environ=environ
        )
    )


def write_settings(path: Path, mode: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": {"defaultMode": mode}}))


def test_an_auto_mode_tui_is_told_default(tmp_path: Path) -> None:
    assert flags(tmp_path, AUTO) == "--permission-mode default"
    assert flags(tmp_path, OLD) == ""  # already starts in default


def test_a_mode_the_user_asked_for_wins(tmp_path: Path) -> None:
    assert flags(tmp_path, AUTO, asked=True) == ""


@pytest.mark.parametrize(
    "where", ["home/.claude/settings.json", ".claude/settings.json", ".claude/settings.local.json"]
)
def test_a_default_mode_in_the_settings_applies_as_for_claude_p(tmp_path: Path, where: str) -> None:
    write_settings(tmp_path / where, "acceptEdits")
    assert flags(tmp_path, AUTO) == ""
    # --no-inherit-hooks (--setting-sources=): the TUI reads none of them
    assert flags(tmp_path, AUTO, reads=False) == "--permission-mode default"


def test_config_dir_and_broken_files(tmp_path: Path) -> None:
    config = tmp_path / "config"
    write_settings(config / "settings.json", "plan")
    files = permissions.settings_files(str(tmp_path), {"CLAUDE_CONFIG_DIR": str(config)})
    assert permissions.configured_default_mode(files) == "plan"
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{not json")
    assert permissions.configured_default_mode(files) == "plan"
    assert permissions.configured_default_mode([str(tmp_path / "missing.json")]) is None
