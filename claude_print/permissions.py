"""The permission mode the TUI starts in: the one `claude -p` would use.

`claude -p` starts in "default" unless the command line or the settings choose
another mode. Newer TUIs start in "auto" instead (contract.Facts.tui_default_mode),
where tools run that `claude -p` would deny. So, when nothing chose a mode, the TUI
is told `--permission-mode default`; a `permissions.defaultMode` in the settings
Claude Code reads is left to apply, as it does for `claude -p`.
"""

from __future__ import annotations

import json
import os
from typing import List, Mapping, Optional

from claude_print.contract import Facts

PRINT_MODE_DEFAULT = "default"


def settings_files(cwd: str, environ: Mapping[str, str]) -> List[str]:
    """The user, project and local settings files, in Claude Code's order."""
    config_dir = environ.get("CLAUDE_CONFIG_DIR") or os.path.join(
        environ.get("HOME") or os.path.expanduser("~"), ".claude"
    )
    return [
        os.path.join(config_dir, "settings.json"),
        os.path.join(cwd, ".claude", "settings.json"),
        os.path.join(cwd, ".claude", "settings.local.json"),
    ]


def configured_default_mode(paths: List[str]) -> Optional[str]:
    """`permissions.defaultMode` of the last settings file that sets one."""
    mode: Optional[str] = None
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                settings = json.load(f)
        except (OSError, ValueError):
            continue
        permissions = settings.get("permissions") if isinstance(settings, dict) else None
        chosen = permissions.get("defaultMode") if isinstance(permissions, dict) else None
        if isinstance(chosen, str) and chosen:
            mode = chosen
    return mode


def mode_flags(
    facts: Facts,
    *,
    asked: bool,
    reads_user_settings: bool,
    cwd: str,
    environ: Mapping[str, str],
) -> List[str]:
    """`--permission-mode default` when the TUI would otherwise start elsewhere."""
    if asked or facts.tui_default_mode == PRINT_MODE_DEFAULT:
        return []
    if reads_user_settings and configured_default_mode(settings_files(cwd, environ)):
        return []
    return ["--permission-mode", PRINT_MODE_DEFAULT]
