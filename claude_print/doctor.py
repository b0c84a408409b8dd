"""`--check`: a credential-free self-test, one line per check."""

from __future__ import annotations

import subprocess

from claude_print import contract
from claude_print.errors import ClaudePrintError


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


def run(binary: str, clean: bool = False) -> int:
    raise ClaudePrintError("--check is not implemented yet")
