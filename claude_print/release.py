"""Which Claude Code release a binary is, learned without running it.

The npm package keeps its version in a package.json next to the binary
(`@anthropic-ai/claude-code/bin/claude.exe`, or the platform package's
`claude-code-linux-x64/claude`); the native installer names the binary after
its version (`~/.local/share/claude/versions/2.1.330`). Reading one small file
costs well under a millisecond; `claude --version` costs a process start.
When neither works, the welcome banner or the transcript tells the runner
later (screens.claude_version_on_screen, the records' `version` field).
"""

from __future__ import annotations

import json
import os
from typing import Optional

from claude_print import contract

_PACKAGE_PREFIX = "@anthropic-ai/claude-code"


def installed_version(binary: str) -> Optional[str]:
    try:
        real = os.path.realpath(binary)
    except (OSError, ValueError):
        return None
    name = os.path.basename(real)
    if contract.parse_version(name) is not None and name.count(".") == 2:
        return name
    folder = os.path.dirname(real)
    for _ in range(2):  # the binary's folder, then its parent (bin/claude.exe)
        version = _package_version(os.path.join(folder, "package.json"))
        if version is not None:
            return version
        folder = os.path.dirname(folder)
    return None


def _package_version(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8") as f:
            package = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(package, dict) or not str(package.get("name", "")).startswith(
        _PACKAGE_PREFIX
    ):
        return None
    version = package.get("version")
    return version if isinstance(version, str) and contract.parse_version(version) else None
