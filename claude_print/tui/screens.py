"""Recognise Claude Code's startup screens from the rendered text.

Works on the lines of the screen model (never on raw bytes: Ink moves the
cursor between words). A dialog is a list of choices, one of them marked by
the caret, numbered ("1. Yes", 2.1.197) or not ("No, exit", 2.1.248 on);
which one is highlighted by default differs between releases, so the keys to
send are computed from where the caret is.
"""

from __future__ import annotations

import re
from typing import List, NamedTuple, Optional, Sequence, Tuple

from claude_print import contract

_CHOICE = re.compile(r"^\s*(" + contract.CARET + r")?\s*(\d+)\.\s+(\S.*?)\s*$")
_VERSION = re.compile(r"Claude Code v(\d+\.\d+\.\d+)")

# Screens claude-print never answers, with what the user should do instead (no final
# period: the failure message goes on with ". Screen:" and the screen's text).
BLOCKING_ADVICE = {
    "api_key": (
        "Claude Code asks whether to use the API key in ANTHROPIC_API_KEY (a billing decision "
        "claude-print will not make for you). Run `claude` once in a terminal and answer it, "
        "or unset ANTHROPIC_API_KEY to use your subscription login"
    ),
    "onboarding": (
        "Claude Code has not been set up for this user (first-run onboarding). "
        "Run `claude` once in a terminal and log in, then retry"
    ),
    "login": "Claude Code needs a login. Run `claude` once in a terminal and log in, then retry",
    "connectivity": (
        "Claude Code could not reach Anthropic's services during first-run setup. "
        "Run `claude` once in a terminal with network access, then retry"
    ),
    "auto_mode_billing": (
        "Claude Code asks to confirm a change to auto mode's classifier billing. Run "
        "`claude --permission-mode auto` once in a terminal and answer it, or choose "
        "another --permission-mode"
    ),
    "auto_mode_unavailable": (
        "Claude Code's auto mode cannot check tool calls in this session (its safety "
        "classifier is unavailable for this API endpoint): choose another --permission-mode"
    ),
    "permission_dialog": (
        "Claude Code asks for permission to run a tool on screen, where no hook can answer "
        "(claude -p would deny it): allow the tool with --allowedTools, or choose another "
        "--permission-mode"
    ),
}


class ScreenState(NamedTuple):
    kind: str  # a contract.SCREEN_MARKERS key, "ready", "choice" (unknown dialog) or "other"
    choices: Sequence[str] = ()
    selected: Optional[int] = None  # index into choices of the caret's entry


def parse_choices(lines: List[str]) -> ScreenState:
    """The dialog's choices and the entry the caret is on: a numbered list if there
    is one under a caret, else the caret's list by layout."""
    numbered = _numbered_choices(lines)
    if numbered.selected is not None:
        return numbered
    laid_out = _caret_list(lines)
    return laid_out if laid_out.selected is not None else numbered


def _numbered_choices(lines: List[str]) -> ScreenState:
    """The last numbered list on screen and the entry the caret is on."""
    choices: List[str] = []
    selected: Optional[int] = None
    for line in lines:
        match = _CHOICE.match(line)
        if not match:
            continue
        number = int(match.group(2))
        if number == 1:  # a new list starts
            choices, selected = [], None
        if number != len(choices) + 1:
            continue
        if match.group(1):
            selected = len(choices)
        choices.append(match.group(3))
    return ScreenState("choice", choices, selected)


def _caret_list(lines: List[str]) -> ScreenState:
    """An unnumbered list: the lowest caret line that is not the input box, and the
    lines next to it whose text starts in the caret's label column. Deeper-indented
    lines (a choice's description) are skipped; anything else ends the list."""
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        stripped = line.lstrip()
        if not stripped.startswith(contract.CARET) or (i > 0 and _is_rule(lines[i - 1])):
            continue
        after = stripped[len(contract.CARET) :]
        label = after.strip()
        if not label:
            continue
        column = len(line) - len(stripped) + len(contract.CARET) + len(after) - len(after.lstrip())
        above = _list_lines(lines, range(i - 1, -1, -1), column)
        below = _list_lines(lines, range(i + 1, len(lines)), column)
        choices = [*reversed(above), label, *below]
        return ScreenState("choice", choices, len(above))
    return ScreenState("choice")


def _list_lines(lines: List[str], order: range, column: int) -> List[str]:
    found: List[str] = []
    for index in order:
        line = lines[index]
        text = line.strip()
        indent = len(line) - len(line.lstrip())
        if not text or indent < column or text.startswith(contract.CARET):
            break
        if indent == column:
            found.append(text)
    return found


def is_ready(lines: List[str]) -> bool:
    """The REPL's input box: a caret line between two rules, and the shortcuts footer
    under it (read there only: an answer that quotes the footer's words is not one)."""
    footer = footer_lines(lines)
    return any(marker in line for line in footer for marker in contract.READY_FOOTERS)


def is_idle(lines: List[str]) -> bool:
    """The input box is drawn and no turn is running (whatever the box holds)."""
    busy = any(contract.BUSY_FOOTER in line for line in lines)
    return not busy and input_box_text(lines) is not None


def footer_lines(lines: List[str]) -> List[str]:
    """The lines under the input box's closing rule, where the REPL draws its footer
    (the permission mode, "? for shortcuts"); [] when no box is drawn. State read off
    the screen is read here, never from the whole screen, where model text can say
    anything ("accept edits on" in an answer is not the footer)."""
    box = _input_box(lines)
    return [] if box is None else lines[box[1] + 1 :]


def _input_box(lines: List[str]) -> Optional[Tuple[int, int]]:
    """(caret line, closing rule) of the REPL's input box: the lowest caret line right
    under a rule, up to the next rule; None when not drawn."""
    for i in range(len(lines) - 1, 0, -1):
        if lines[i].lstrip().startswith(contract.CARET) and _is_rule(lines[i - 1]):
            for end in range(i + 1, len(lines)):
                if _is_rule(lines[end]):
                    return i, end
            return None
    return None


def input_box_text(lines: List[str]) -> Optional[str]:
    """What the REPL's input box shows, stripped ("" when empty; None when not drawn).

    Only the box is looked for (the lowest caret line right under a rule, up to the
    next rule): the footer below changes with what the box holds (blank after a short
    paste, "paste again to expand" after one over 800 characters, which shows as
    "[Pasted text #1 +N lines]").
    """
    box = _input_box(lines)
    if box is None:
        return None
    start, end = box
    return "\n".join(lines[start:end]).lstrip()[len(contract.CARET) :].strip()


def _is_rule(line: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= 10 and set(stripped) == {contract.RULE_CHAR}


# The first-run welcome banner stays on screen above the screens that follow it
# ("Unable to connect ...", the login choices): those, when present, say more.
_BANNER_KINDS = ("onboarding",)


def classify(lines: List[str]) -> ScreenState:
    text = "\n".join(lines)
    flat = " ".join(text.split())
    found = [
        kind
        for kind, markers in contract.SCREEN_MARKERS.items()
        if all(marker in flat for marker in markers)
    ]
    if found and is_ready(lines):
        # A dialog's top rows can stay above the input box once it has gone (2.1.332
        # under load erased only the rows below "Security guide"): the box drawn under
        # a dialog's text says the dialog is over.
        box = _input_box(lines)
        below = box[0] if box else len(lines)
        found = [kind for kind in found if _marker_row(lines, kind) > below]
    if found:
        specific = [kind for kind in found if kind not in _BANNER_KINDS]
        return parse_choices(lines)._replace(kind=(specific or found)[0])
    if is_ready(lines):
        return ScreenState("ready")
    state = parse_choices(lines)
    if state.selected is not None and len(state.choices) >= 2:
        return state
    return ScreenState("other")


def _marker_row(lines: List[str], kind: str) -> int:
    """The lowest row from which the screen still holds every marker of `kind` (markers
    wrap, so the text is read from each row down)."""
    for row in range(len(lines) - 1, -1, -1):
        flat = " ".join(" ".join(lines[row:]).split())
        if all(marker in flat for marker in contract.SCREEN_MARKERS[kind]):
            return row
    return -1


def next_key(state: ScreenState, label: str) -> Optional[bytes]:
    """One key toward the entry starting with `label`: an arrow while the caret is
    elsewhere, Enter once it is on it; None when there is no caret or no such entry.

    One key at a time, the screen read again in between: a key that arrives while a
    dialog is still mounting can be lost (2.1.330), and Enter on the wrong entry
    (the trust dialog's "No, exit") ends Claude Code.
    """
    if state.selected is None:
        return None
    for index, choice in enumerate(state.choices):
        if choice.startswith(label):
            if index == state.selected:
                return contract.KEY_ENTER
            return contract.KEY_DOWN if index > state.selected else contract.KEY_UP
    return None


def claude_version_on_screen(lines: List[str]) -> Optional[str]:
    """The release the welcome banner names, once something is drawn after its number: a
    read of the terminal can end in the middle of the TUI's write, and "v2.1.3" is how
    "v2.1.332" starts (taken for 2.1.3, a run used the facts of a release it was not)."""
    for index, line in enumerate(lines):
        match = _VERSION.search(line)
        if match:
            after = line[match.end() :].strip() or any(rest.strip() for rest in lines[index + 1 :])
            return match.group(1) if after else None
    return None


def screen_excerpt(
    lines: List[str], limit: int = 20, width: int = 100, secrets: Sequence[str] = ()
) -> str:
    """The screen's non-empty lines, for error messages, with any piece of `secrets`
    the screen shows (the API-key question shows the key's last 20 characters) hidden."""
    kept = [redact(line.rstrip()[:width], secrets) for line in lines if line.strip()]
    return "\n".join("  | " + line for line in kept[-limit:])


# Secrets whose pieces a screen may show: run of this many token characters or more.
_PIECE = re.compile(r"[A-Za-z0-9_\-]{8,}")
SECRET_VARS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_REFRESH_TOKEN",
)


def redact(text: str, secrets: Sequence[str]) -> str:
    """`text` with every run of 8+ token characters that is part of a secret hidden."""
    values = [s for s in secrets if len(s) >= 8]
    if not values:
        return text
    return _PIECE.sub(
        lambda m: "[redacted]" if any(m.group(0) in v for v in values) else m.group(0), text
    )
