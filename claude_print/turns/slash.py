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
whitespace). A prompt `claude -p` reads as text goes to the TUI only where no TUI can
read a command in it (`plainly_text`): the TUI's input box drops and normalises
characters before it looks for a name (`/logout\\x7f`, `/logout:`, `/logout` with a
variation selector all signed the user out, where `claude -p` sends them to the model),
so claude-print does not predict that reading; it refuses what it cannot rule out.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from typing import Dict, FrozenSet, Iterable, List, NamedTuple, Optional, Sequence, Set, Tuple

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


# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): code points that
# render as nothing, letters among them (the Hangul fillers).
_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)  # fmt: skip
# Categories whose characters may show as nothing, or not at all, in the input box.
_UNSHOWN = ("Cc", "Cf", "Cs", "Co", "Cn", "Mn", "Me", "Mc", "Zl", "Zp", "Zs")


def shown(ch: str) -> bool:
    """A character the input box can only show as itself: no whitespace, control,
    format, mark, unassigned or default-ignorable character. Not a model of what the TUI
    drops: a prompt whose first such character is not `/` cannot be read as a command,
    whatever the TUI drops or normalises before it looks (default-deny)."""
    if ch in JS_SPACE or unicodedata.category(ch) in _UNSHOWN:
        return False
    point = ord(ch)
    return not any(low <= point <= high for low, high in _IGNORABLE)


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


def lead(prompt: str) -> str:
    """The prompt's first character after JavaScript whitespace ("" for none)."""
    for ch in prompt:
        if ch not in JS_SPACE:
            return ch
    return ""


def plainly_text(prompt: str) -> bool:
    """A prompt no TUI can read as a command, by construction: its first character past
    whitespace shows as itself and is not `/`; or its first word is a path of printable
    ASCII (`/etc/hosts`, `//x`), which no command name can be (measured as a model turn
    in the TUI and `claude -p` on every captured release)."""
    first = lead(prompt)
    if first == "":
        return True
    if first != "/":
        # No `/` in any form (a fullwidth solidus is one once NFKC-normalised): no command.
        return shown(first) or "/" not in unicodedata.normalize("NFKC", prompt)
    word = _SPLIT.split(js_trim(prompt), 1)[0]
    return "/" in word[1:] and all(" " < ch < "\x7f" for ch in word)


def names_a_command(prompt: str) -> bool:
    """Does the prompt name a command, for claude -p, or may it for the TUI?"""
    return command_name(prompt) is not None or not plainly_text(prompt)


def decide(
    prompt: str, version: str, cwd: str, env: Dict[str, str], forwarded: Sequence[str] = ()
) -> Decision:
    """What claude-print does with `prompt` on Claude Code `version` (`forwarded`: the
    flags the TUI gets, for the plugins they load)."""
    raw = command_name(prompt)
    if raw is None:
        if plainly_text(prompt):
            return Decision(TUI)  # not a command in either: a model turn in both
        return Decision(
            REFUSE,
            "claude -p sends this prompt to the model as text, but the interactive TUI may "
            "read it as a command: it starts with `/` (or with whitespace, an invisible or "
            "a control character before one), and the TUI drops and normalises characters "
            "before it looks for a command name (a `/logout` so read signs you out). "
            "claude-print does not send it to the TUI. Start the prompt with a word, or "
            "say it in words",
        )
    known = slash_commands.release(version)
    mine = custom_commands(cwd, env)
    if raw not in known.names and (raw in mine or custom(raw, known, plugins(forwarded, env))):
        return Decision(TUI, command=raw)
    if raw in known.names and raw in mine:
        # claude -p runs the custom command (measured on 2.1.332: .claude/commands/
        # logout.md, a user skill `status`); the TUI's choice between it and the
        # built-in is not known: never the built-in's answer for it.
        return Decision(
            REFUSE,
            f"/{raw} is both a built-in command and a custom command or skill here; claude "
            "-p runs the custom one, the interactive TUI may run the built-in. claude-print "
            "does not send it to the TUI. Rename the custom command, or say it in words",
            raw,
        )
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


def custom(name: str, known: slash_commands.Release, loaded: Optional[FrozenSet[str]]) -> bool:
    """An MCP prompt, or a plugin's namespaced command (`plugin:cmd`) of a plugin that is
    there (`loaded`; None: one loaded from a URL, whose name is not known before the
    start). Both sides of the `:` must be there, and the namespace no built-in's name:
    the TUI ran `/logout:` and `/model:` as the built-ins (measured on 2.1.197 to
    2.1.332), and a name it does not know is "Unknown skill" there, text to `claude -p`."""
    if name.startswith("mcp__"):
        return True
    space, colon, rest = name.partition(":")
    if not (colon and space and rest) or space in known.names:
        return False
    return loaded is None or space in loaded


def plugins(forwarded: Sequence[str], env: Dict[str, str]) -> Optional[FrozenSet[str]]:
    """The names of the plugins the TUI will load: --plugin-dir's and those installed
    under the config dir's plugins/ (None when --plugin-url loads one by URL)."""
    dirs: List[str] = []
    for index, word in enumerate(forwarded):
        if word == "--plugin-url" or word.startswith("--plugin-url="):
            return None
        if word == "--plugin-dir" and index + 1 < len(forwarded):
            dirs.append(forwarded[index + 1])
        elif word.startswith("--plugin-dir="):
            dirs.append(word.split("=", 1)[1])
    config = env.get("CLAUDE_CONFIG_DIR") or os.path.join(env.get("HOME", "~"), ".claude")
    names = {_plugin_name(d) for d in dirs}
    for top, subdirs, _ in os.walk(os.path.join(config, "plugins")):
        if top.count(os.sep) - config.count(os.sep) > 6:
            subdirs[:] = []  # marketplaces and caches nest a few levels, no deeper
        if ".claude-plugin" in subdirs:
            names.add(_plugin_name(top))
    return frozenset(names)


def _plugin_name(folder: str) -> str:
    """A plugin's name: its manifest's, else its folder's."""
    try:
        with open(os.path.join(folder, ".claude-plugin", "plugin.json"), encoding="utf-8") as f:
            name = json.load(f).get("name")
    except (OSError, ValueError, AttributeError):
        name = None
    return name if isinstance(name, str) and name else os.path.basename(folder.rstrip("/"))


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
    """`name` for folder/name.md, `sub:name` for folder/sub/name.md."""
    for entry in _entries(folder):
        if entry.name.endswith(".md") and not entry.is_dir():
            yield entry.name[:-3]
        elif entry.is_dir():
            for inner in _entries(entry.path):
                if inner.name.endswith(".md") and not inner.is_dir():
                    yield f"{entry.name}:{inner.name[:-3]}"


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
