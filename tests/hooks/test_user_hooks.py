"""Where a Stop hook of the user's may run beside claude-print's (then a Stop of ours is
not the end of the turn until the transcript closes it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

import pytest

from claude_print.hooks import permissions
from claude_print.hooks.user_hooks import stop_hooks_possible

STOP = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}
FILES = {
    "user": "home/.claude/settings.json",
    "project": ".claude/settings.json",
    "local": ".claude/settings.local.json",
}


def possible(
    tmp_path: Path,
    sources: Sequence[str] = permissions.SOURCES,
    flag: Optional[Dict[str, Any]] = None,
) -> bool:
    environ = {"HOME": str(tmp_path / "home")}
    managed = str(tmp_path / "managed.json")
    return stop_hooks_possible(sources, str(tmp_path), environ, flag, managed)


def write(path: Path, data: Dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_none_anywhere(tmp_path: Path) -> None:
    write(tmp_path / FILES["user"], {"hooks": {"PreToolUse": STOP["hooks"]["Stop"]}})
    assert not possible(tmp_path)
    assert not possible(tmp_path, flag={"hooks": {}})


@pytest.mark.parametrize("where", sorted(FILES))
def test_a_settings_file_counts_only_when_read(tmp_path: Path, where: str) -> None:
    write(tmp_path / FILES[where], STOP)
    assert possible(tmp_path)
    others = [s for s in permissions.SOURCES if s != where]
    assert not possible(tmp_path, sources=others)


def test_the_settings_flag_managed_settings_and_plugins_count(tmp_path: Path) -> None:
    assert possible(tmp_path, sources=(), flag=STOP)
    write(tmp_path / "managed.json", STOP)
    assert possible(tmp_path, sources=())
    (tmp_path / "managed.json").unlink()
    write(tmp_path / FILES["project"], {"enabledPlugins": {"x@market": True}})
    assert possible(tmp_path)
    write(tmp_path / FILES["project"], {"enabledPlugins": {"x@market": False}})
    assert not possible(tmp_path)
