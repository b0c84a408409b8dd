"""The Claude Code binary: where it is, and which release it is.

`resolve_binary` finds it (PATH or --claude-binary) and says plainly why it cannot
run. `installed_version` learns the release without running it: the npm package
keeps its version in a package.json next to the binary
(`@anthropic-ai/claude-code/bin/claude.exe`, or the platform package's
`claude-code-linux-x64/claude`); the native installer names the binary after
its version (`~/.local/share/claude/versions/2.1.330`). Reading one small file
costs well under a millisecond; `claude --version` (`claude_version`, for
--version, --check and failure messages) costs a process start.
When neither works, the welcome banner or the transcript tells the runner
later (screens.claude_version_on_screen, the records' `version` field).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Optional

from claude_print import contract
from claude_print.errors import ClaudePrintError

_PACKAGE_PREFIX = "@anthropic-ai/claude-code"


def resolve_binary(name: str) -> str:
    path = shutil.which(name) if os.sep not in name else name
    if path is None:
        raise ClaudePrintError(
            f"Claude Code not found: `{name}` is not on PATH (install it with "
            "`npm install -g @anthropic-ai/claude-code` or pass --claude-binary PATH)"
        )
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        if not os.path.exists(path):
            why = "it does not exist"
        elif os.path.isdir(path):
            why = "it is a directory"
        elif not os.path.isfile(path):
            why = "it is not a regular file"
        else:
            why = "it has no execute permission"
        raise ClaudePrintError(f"--claude-binary {path}: not an executable file ({why})")
    return path


def claude_version(binary: str) -> str:
    """`claude --version` -> "2.1.197"; a clear error when it is not Claude Code."""
    try:
        proc = subprocess.run(
            [binary, "--version"], stdin=subprocess.DEVNULL, capture_output=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ClaudePrintError(f"cannot run {binary} --version: {exc}") from exc
    match = contract.VERSION_RE.search(proc.stdout)
    if proc.returncode != 0 or match is None:
        raise ClaudePrintError(f"{binary} --version did not print a Claude Code version")
    return match.group(1).decode()


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
