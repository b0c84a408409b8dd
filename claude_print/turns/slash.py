"""Slash prompts, by default-deny: the TUI never does with one what `claude -p` would not.

The interactive TUI runs far more commands than print mode: it logs out, exports files,
adds directories, opens panels and dialogs. `claude -p` (measured per release,
scripts/capture-slash) answers most built-in commands with "/X isn't available in this
environment.", prints a few itself (/cost, /model) and sends everything it does not know
as a command, `/foo` or `/LOGOUT` included, to the model as text, where the TUI would say
"Unknown skill". So a prompt that reads as a command goes to the TUI only where both do
the same thing:

- not a command at all (no `/`, or a first word that is not a command name, such as
  `/etc/hosts what`): a model turn in both;
- a custom command of the user's (`.claude/commands`, skills, a plugin's `plugin:cmd`,
  an MCP prompt `mcp__server__prompt`) that is not a built-in name: both expand it;
- anything else gets `claude -p`'s measured answer for that release at once
  (`slash_commands`, derived from the release itself), or is refused (exit 2, nothing
  started) where the answer depends on state claude-print cannot know, or was not
  measured for this release (a newer release than the newest captured gets no answers).

The prompt is read as Claude Code reads it (`trim()`, the name up to the first JS
whitespace) and also as the TUI's input box would hold it (control characters dropped:
`/logout\\x7f` is `/logout` there, while `claude -p` sends it to the model as text).
"""

from __future__ import annotations

import os
import re
import unicodedata
from typing import Dict, FrozenSet, Iterable, List, NamedTuple, Optional, Set, Tuple

from claude_print.turns import slash_commands

# JavaScript's \s and String.prototype.trim(): what Claude Code splits and trims on.
JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"  # noqa: E501
# Claude Code's test for a command name (2.1.197 to 2.1.332: /^[a-zA-Z0-9_][a-zA-Z0-9:_-]*$/).
_COMMAND_NAME = re.compile(r"[a-zA-Z0-9_][a-zA-Z0-9:_-]*\Z")
_SPLIT = re.compile(f"[{re.escape(JS_SPACE)}]")
MANAGED_DIR = "/etc/claude-code"

TUI = "tui"
ANSWER = "answer"
REFUSE = "refuse"


class Decision(NamedTuple):
    kind: str  # TUI, ANSWER or REFUSE
    text: str = ""  # the answer, or why it is refused
    command: str = ""  # the command name read from the prompt ("" for none)


def js_trim(text: str) -> str:
    return text.strip(JS_SPACE)


def _dropped(ch: str) -> bool:
    """A character the TUI's input box drops: a control or format character other than
    whitespace (2.1.331+ drops them from typed and loaded text)."""
    return ch not in JS_SPACE and unicodedata.category(ch) in ("Cc", "Cf")


def split_command(prompt: str) -> Optional[Tuple[str, str]]:
    """(name, args) as `claude -p` splits a prompt that starts with `/` (None: it does
    not; leading whitespace makes it text, measured on 2.1.332); the name may still not
    be a command name (`etc/hosts`)."""
    if not prompt.startswith("/"):
        return None
    body = js_trim(prompt)[1:]
    cut = _SPLIT.search(body)
    if cut is None:
        return body, ""
    return body[: cut.start()], js_trim(body[cut.end() :])


def command_name(prompt: str) -> Optional[str]:
    """The command `claude -p` reads in the prompt, if its first word is a command name."""
    parts = split_command(prompt)
    if parts is None or not _COMMAND_NAME.match(parts[0]):
        return None
    return parts[0]


def tui_command_name(prompt: str) -> Optional[str]:
    """The command the TUI would read: its input box drops control characters and trims
    the prompt before it looks for one. Reads only the leading junk and the name, so a
    200 KB prompt costs what a short one does."""
    start, end = 0, len(prompt)
    while start < end and (prompt[start] in JS_SPACE or _dropped(prompt[start])):
        start += 1
    if start == end or prompt[start] != "/":
        return None
    name = []
    for ch in prompt[start + 1 :]:
        if ch in JS_SPACE:
            break
        if not _dropped(ch):
            name.append(ch)
    text = "".join(name)
    return text if _COMMAND_NAME.match(text) else None


def names_a_command(prompt: str) -> bool:
    """Does the prompt name a command, for claude -p or for the TUI?"""
    return command_name(prompt) is not None or tui_command_name(prompt) is not None


def decide(prompt: str, version: str, cwd: str, env: Dict[str, str]) -> Decision:
    """What claude-print does with `prompt` on Claude Code `version`."""
    raw = command_name(prompt)
    seen = tui_command_name(prompt)
    if raw is None and seen is None:
        return Decision(TUI)  # not a command in either: a model turn in both
    if raw != seen:
        name = seen or raw or ""
        return Decision(
            REFUSE,
            f"claude -p sends this prompt to the model as text, but the interactive TUI "
            f"would run it as /{name} (its input box drops leading whitespace and control "
            "characters); claude-print does not send it to the TUI. Remove what comes "
            f"before or inside /{name}, or say it in words",
            name,
        )
    assert raw is not None
    known = slash_commands.release(version)
    if raw not in known.names and (custom(raw) or raw in custom_commands(cwd, env)):
        return Decision(TUI, command=raw)
    form = "args" if split_command(prompt)[1:] != ("",) else "bare"  # type: ignore[index]
    if (raw, form) in known.tui:
        return Decision(TUI, command=raw)  # measured: the TUI expands it as claude -p
    answer = known.answer(raw, form)
    if answer is not None:
        return Decision(ANSWER, answer, raw)
    return Decision(REFUSE, refusal(raw, known, version), raw)


def refusal(name: str, known: slash_commands.Release, version: str) -> str:
    shown = f"Claude Code {version}" if version else "this Claude Code (release unknown)"
    if name in known.names and not known.measured:
        what = (
            f"/{name} is a built-in command, and {shown} is newer than the releases whose "
            f"commands claude-print has measured (up to {slash_commands.NEWEST})"
        )
    elif name in known.names:
        what = (
            f"/{name} is a built-in command of {shown}, and claude -p's answer to it in "
            "this form is not a fixed text that claude-print can give (it shows state or "
            "does something)"
        )
    else:
        what = (
            f"/{name} is not a custom command here (.claude/commands, skills), and claude -p "
            "and the interactive TUI treat an unknown command name differently"
        )
    return (
        f"{what}; claude-print does not send it to the TUI, which would run it (panels, "
        "settings, logout). Run it in `claude` itself, or say it in words"
    )


def custom(name: str) -> bool:
    """A plugin's namespaced command (`plugin:cmd`, `dir:cmd`) or an MCP prompt: no
    built-in is named so."""
    return ":" in name or name.startswith("mcp__")


def custom_commands(cwd: str, env: Dict[str, str]) -> FrozenSet[str]:
    """The names of the custom commands and skills Claude Code finds for `cwd`: in
    .claude/commands and .claude/skills of the work dir and every parent, of the user's
    config dir and of the managed dir (the places a TUI looks at start, by strace on
    2.1.332). A command in a subfolder is namespaced (`sub:cmd`), so `custom` lets it."""
    config = env.get("CLAUDE_CONFIG_DIR") or os.path.join(env.get("HOME", "~"), ".claude")
    bases = [os.path.join(d, ".claude") for d in _parents(cwd)]
    bases += [config, os.path.join(MANAGED_DIR, ".claude")]
    names: Set[str] = set()
    for base in bases:
        names.update(_command_files(os.path.join(base, "commands")))
        names.update(_skills(os.path.join(base, "skills")))
    return frozenset(names)


def _parents(path: str) -> List[str]:
    found = []
    path = os.path.abspath(path)
    while True:
        found.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            return found
        path = parent


def _entries(folder: str) -> List[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return list(entries)
    except OSError:
        return []


def _command_files(folder: str) -> Iterable[str]:
    for entry in _entries(folder):
        if entry.name.endswith(".md") and not entry.is_dir():
            yield entry.name[:-3]


def _skills(folder: str) -> Iterable[str]:
    for entry in _entries(folder):
        if entry.is_dir():
            yield entry.name
            yield from _skill_name(os.path.join(entry.path, "SKILL.md"))


def _skill_name(path: str) -> Iterable[str]:
    """The `name:` a skill's front matter gives it, if any."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            head = handle.read(4096)
    except OSError:
        return
    match = re.match(r"---\s*\n(.*?)\n---", head, re.S)
    if match:
        for line in match.group(1).splitlines():
            if line.startswith("name:"):
                yield line[5:].strip().strip("'\"")
