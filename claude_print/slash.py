"""Slash prompts that `claude -p` answers without a model turn.

A prompt that is only a built-in command whose interactive form is a panel (`/help`,
`/status`, ...) gets `claude -p`'s one-line answer, "/X isn't available in this
environment." (success, 0 turns), where the TUI would open the panel and never start a
turn. Measured with `claude -p` on 2.1.197 and 2.1.331 (44 commands each): the commands
below answered so on both; /model, /agents, /mcp, /output-style and /doctor did on 2.1.197
only (2.1.331 prints text or asks the model), so they are left to the TUI. Other slash
prompts go to the TUI: a command it runs itself ends the turn with its output
(`transcript.local_output`), anything else reaches the model as with `claude -p`.
"""

from __future__ import annotations

import re
from typing import Optional

UNAVAILABLE_IN_PRINT = frozenset(
    (
        "add-dir",
        "bashes",
        "bug",
        "exit",
        "export",
        "feedback",
        "help",
        "hooks",
        "ide",
        "login",
        "logout",
        "memory",
        "permissions",
        "plugin",
        "privacy-settings",
        "quit",
        "release-notes",
        "resume",
        "rewind",
        "skills",
        "status",
        "statusline",
        "tasks",
        "terminal-setup",
        "theme",
        "upgrade",
        "vim",
    )
)
_COMMAND = re.compile(r"^/([a-z][a-z0-9-]*)\s*$")


def print_mode_answer(prompt: str) -> Optional[str]:
    """`claude -p`'s answer to `prompt` if it is such a command (arguments or not: only
    the bare command was measured, so a command with arguments goes to the TUI)."""
    match = _COMMAND.match(prompt)
    if match and match.group(1) in UNAVAILABLE_IN_PRINT:
        return f"/{match.group(1)} isn't available in this environment."
    return None
