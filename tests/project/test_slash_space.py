"""The side-effect comparison (tests/support/slash_space.py) sees what a built-in wrote
anywhere under HOME: the bookkeeping list hides Claude Code's own session files, never
a place a command writes to (issue 41: `/terminal-setup:` wrote VS Code's
keybindings.json under ~/.config, the TUI's URL handler went to ~/.local/share)."""

from __future__ import annotations

from typing import Dict

import pytest
from slash_space import side_effects

# Written by a built-in command or by the TUI's start-up work, never by `claude -p`'s
# run of a prompt: each must show.
WRITTEN = (
    "home/.config/Code/User/keybindings.json",  # /terminal-setup, TERM_PROGRAM=vscode
    "home/.config/Cursor/User/keybindings.json",
    "home/.local/share/applications/claude-code-url-handler.desktop",
    "home/.claude/.credentials.json",  # /logout deletes it
    "home/.claude/settings.json",  # /model's picker
    "project/out.txt",  # /export
)


@pytest.mark.parametrize("path", WRITTEN)
def test_a_write_outside_the_bookkeeping_shows(path: str) -> None:
    before: Dict[str, str] = {}
    assert side_effects(before, {path: "0123"}) == ["+" + path]
    assert side_effects({path: "0123"}, {path: "4567"}) == ["~" + path]
    assert side_effects({path: "0123"}, {}) == ["-" + path]


def test_the_session_bookkeeping_does_not_show() -> None:
    after = {
        "home/.claude.json": "1",
        "home/.claude/projects/-p/s.jsonl": "2",
        "home/.config": "dir",
        "home/.local/share": "dir",
    }
    assert side_effects({}, after) == []
