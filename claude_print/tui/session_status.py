"""The TUI's own word on whether a turn is running: `~/.claude/sessions/<pid>.json`.

Every interactive Claude Code keeps a registry entry for its process with a `status`
("busy" while a turn runs, "idle" at the input box; 2.1.197 and 2.1.332 alike, measured).
The screen's busy footer ("esc to interrupt") is not always there: on 2.1.197 to 2.1.202
any status line (claude-print's empty one included) takes its place, so an interrupt
lost under load went unnoticed and a turn still running was reported interrupted.
"""

from __future__ import annotations

import json
import os
from typing import Mapping, Optional


def registry_path(pid: int, environ: Mapping[str, str]) -> str:
    config = environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return os.path.join(config, "sessions", f"{pid}.json")


def status(pid: Optional[int], environ: Mapping[str, str]) -> Optional[str]:
    """ "busy", "idle", ... as the TUI wrote it last; None when it cannot be read."""
    if pid is None:
        return None
    try:
        with open(registry_path(pid, environ), encoding="utf-8") as handle:
            value = json.load(handle).get("status")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None
