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
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from claude_print.contract import Facts

PRINT_MODE_DEFAULT = "default"


SOURCES = ("user", "project", "local")


def settings_files(
    cwd: str, environ: Mapping[str, str], sources: Sequence[str] = SOURCES
) -> List[str]:
    """The settings files of `sources` (user, project, local), in Claude Code's order."""
    config_dir = environ.get("CLAUDE_CONFIG_DIR") or os.path.join(
        environ.get("HOME") or os.path.expanduser("~"), ".claude"
    )
    files = {
        "user": os.path.join(config_dir, "settings.json"),
        "project": os.path.join(cwd, ".claude", "settings.json"),
        "local": os.path.join(cwd, ".claude", "settings.local.json"),
    }
    return [files[source] for source in SOURCES if source in sources]


def setting_sources(inherit: bool, forwarded: Sequence[str]) -> Tuple[str, ...]:
    """The settings files the TUI reads: none with --no-inherit-hooks, those named by
    --setting-sources (comma-separated; empty for none), else all three."""
    if not inherit:
        return ()
    chosen: Optional[str] = None
    for i, word in enumerate(forwarded):
        if word == "--setting-sources" and i + 1 < len(forwarded):
            chosen = forwarded[i + 1]
        elif word.startswith("--setting-sources="):
            chosen = word.split("=", 1)[1]
    if chosen is None:
        return SOURCES
    return tuple(part.strip() for part in chosen.split(",") if part.strip() in SOURCES)


def default_mode_of(settings: object) -> Optional[str]:
    permissions = settings.get("permissions") if isinstance(settings, dict) else None
    chosen = permissions.get("defaultMode") if isinstance(permissions, dict) else None
    return chosen if isinstance(chosen, str) and chosen else None


def configured_default_mode(paths: List[str]) -> Optional[str]:
    """`permissions.defaultMode` of the last settings file that sets one."""
    mode: Optional[str] = None
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                settings = json.load(f)
        except (OSError, ValueError):
            continue
        mode = default_mode_of(settings) or mode
    return mode


def mode_flags(
    facts: Facts,
    *,
    asked: bool,
    sources: Sequence[str],
    cwd: str,
    environ: Mapping[str, str],
    flag_settings: Optional[Dict[str, Any]] = None,
) -> List[str]:
    """`--permission-mode default` when the TUI would otherwise start elsewhere: unless a
    mode was asked for, or set as `permissions.defaultMode` in a settings file the TUI
    reads (`sources`) or in the --settings document (`flag_settings`)."""
    if asked or facts.tui_default_mode == PRINT_MODE_DEFAULT:
        return []
    if default_mode_of(flag_settings):
        return []
    if configured_default_mode(settings_files(cwd, environ, sources)):
        return []
    return ["--permission-mode", PRINT_MODE_DEFAULT]
