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
_WITH_ARGS = re.compile(r"^/([a-z][a-z0-9-]*)\s+\S")
# Commands whose TUI form writes the user's settings where `claude -p`'s does not: the
# TUI's `/model X` says "Set model to X and saved as your default for new sessions" and
# writes ~/.claude/settings.json; `claude -p` 2.1.331 says "... for this session only"
# and writes nothing (measured on 2.1.331). claude-print never changes the user's files.
WRITES_SETTINGS = {
    "model": "pass --model (the SDK's model option) to choose the session's model",
}


def settings_refusal(prompt: str) -> Optional[str]:
    """Why claude-print will not type `prompt` into the TUI, if it is a command whose
    TUI form would change the user's settings (None: it may go in)."""
    match = _WITH_ARGS.match(prompt)
    if match is None or match.group(1) not in WRITES_SETTINGS:
        return None
    name = match.group(1)
    return (
        f"/{name} in the TUI also saves the choice as your default for new sessions "
        f"(~/.claude/settings.json), which claude -p's /{name} does not; claude-print "
        f"does not change your settings: {WRITES_SETTINGS[name]}"
    )


def print_mode_answer(prompt: str) -> Optional[str]:
    """`claude -p`'s answer to `prompt` if it is such a command (arguments or not: only
    the bare command was measured, so a command with arguments goes to the TUI)."""
    match = _COMMAND.match(prompt)
    if match and match.group(1) in UNAVAILABLE_IN_PRINT:
        return f"/{match.group(1)} isn't available in this environment."
    return None
