"""The boot phase: from the spawn to the input box.

`StartupScreens` answers the startup dialogs Claude Code shows before its input box
(trust, asked-for bypass mode), refuses the ones a script must not answer, and fails
loudly on a dialog nobody has seen before. `Boot` adds the clock and the argv prompt,
which submits itself once the box is up. What the screens look like is `screens.py`'s
business; this module decides what to press."""

from __future__ import annotations

import os
from typing import Callable, Dict, List, Optional, Set, Tuple, Union

from claude_print import contract
from claude_print.errors import Fail
from claude_print.tui import screens
from claude_print.tui.delivery import GRACE as PROMPT_ARRIVAL_GRACE
from claude_print.tui.keys import Keyboard

UNKNOWN_SCREEN_GRACE = 2.0  # an unrecognised dialog that stays still this long blocks us
REANSWER_AFTER = 2.0  # a dialog still up this long after Enter gets Enter again
# A caret that did not move this long after an arrow lost it. An arrow only late, not
# lost, still lands: the lists wrap (2.1.332's "focus-next-option"), so a second Down
# in flight takes the caret from "Yes" back to "No, exit", and an Enter sent on the
# frame in between exits Claude Code (CI under load: 0.3 s here re-pressed a Down the
# starved TUI had not read yet). So rarely, and then the caret must hold still:
ARROW_RETRY = 2.0
HOLD_AFTER_REPRESS = 1.0  # quiet on the target after a re-pressed arrow before Enter

STARTUP_TIMEOUT = float(os.environ.get("CLAUDE_PRINT_STARTUP_TIMEOUT", "60"))
SLASH_HINT = (
    "; a custom slash command (the only kind claude-print passes to the TUI) may print "
    "instead of asking the model"
)

READY = "ready"


class StartupScreens:
    """`step()` is called with the rendered screen whenever no key is on its way."""

    def __init__(self, wants_bypass: bool, fail: Fail, trace: Callable[[str], None]) -> None:
        self.wants_bypass = wants_bypass
        self.fail = fail
        self.trace = trace
        self.answered: Dict[str, Tuple[float, Optional[int], bytes]] = {}  # kind -> last press
        self.repressed: Set[str] = set()  # kinds where an arrow went in twice from one place
        self.unknown_since: Optional[float] = None
        self.caret_missing_since: Optional[float] = None
        self.confirmed: Set[str] = set()  # kinds whose choice got its Enter

    def step(
        self, lines: List[str], now: float, last_output: float, quiet_since: float
    ) -> Optional[Union[bytes, str]]:
        """READY once the input box is up, a key to send, or None to wait."""
        state = screens.classify(lines)
        if state.kind in contract.ANSWERED_SCREENS:
            self.unknown_since = None
            if now - quiet_since < contract.QUIET_BEFORE_DIALOG_KEYS:
                return None  # the dialog may still be mounting: a key now can be lost
            return self._answer(state, lines, now, last_output, quiet_since)
        if state.kind in screens.BLOCKING_ADVICE:
            raise self.fail(screens.BLOCKING_ADVICE[state.kind], lines)
        if state.kind == "ready":
            return READY
        if state.kind == "choice":
            self.unknown_since = self.unknown_since or now
            if now - self.unknown_since >= UNKNOWN_SCREEN_GRACE and now - last_output >= 1.0:
                raise self.fail("Claude Code shows a screen claude-print does not know", lines)
        return None

    def _answer(
        self,
        state: screens.ScreenState,
        lines: List[str],
        now: float,
        last_output: float,
        quiet_since: float,
    ) -> Optional[bytes]:
        if state.kind == "bypass" and not self.wants_bypass:
            raise self.fail(
                "Claude Code asks to accept bypass-permissions mode (not asked for)", lines
            )
        label = contract.ANSWERED_SCREENS[state.kind]
        key = screens.next_key(state, label)
        if key is None:
            # No caret, or no such choice: the dialog is half drawn. After our Enter it is
            # going away: 2.1.332 stalled there kept its top rows and "No, exit" with no
            # caret, then drew nothing for seconds while another run renewed the login.
            # Before it, its caret may not be drawn yet (2.1.330's --add-dir dialog); one
            # that stays so, with nothing drawn, is one we misread.
            if state.kind in self.confirmed:
                return None
            self.caret_missing_since = self.caret_missing_since or now
            if now - self.caret_missing_since < UNKNOWN_SCREEN_GRACE or now - last_output < 1.0:
                return None
            raise self.fail(f"cannot find {label!r} on the {state.kind} screen", lines)
        self.caret_missing_since = None
        # The same key again only when the screen did not react to it: an arrow that
        # left the caret where it was was lost; an Enter that left the dialog up, too.
        last = self.answered.get(state.kind)
        enter = key == contract.KEY_ENTER
        if last is not None and last[1] == state.selected:  # no reaction to the last key
            if now - last[0] < (REANSWER_AFTER if enter else ARROW_RETRY):
                return None
            if not enter and last[2] != contract.KEY_ENTER:
                self.repressed.add(state.kind)  # this arrow may land twice
        if enter and state.kind in self.repressed and now - quiet_since < HOLD_AFTER_REPRESS:
            return None  # the other arrow may still be on its way
        choice = state.choices[state.selected or 0]
        action = "Enter" if enter else f"moving to {label!r}"
        self.trace(f"{state.kind} screen: caret on {choice!r}; {action}")
        self.answered[state.kind] = (now, state.selected, key)
        if enter:
            self.confirmed.add(state.kind)
        return key


class Boot:
    """`step()` is called after every batch of I/O while no key is on its way: READY once
    the input box is up (an argv prompt has then gone in by itself), a key to press, or
    None to wait. Fails on a startup that never reaches the box."""

    def __init__(
        self,
        screens: StartupScreens,
        argv_prompt: Optional[str],
        started: float,
        fail: Fail,
        trace: Callable[[str], None],
    ) -> None:
        self.screens = screens
        self.argv_prompt = argv_prompt  # the prompt given to the TUI as its argument
        self.started = started
        self.fail = fail
        self.trace = trace

    def step(
        self, now: float, lines: List[str], keys: Keyboard, transcript_exists: bool
    ) -> Optional[Union[bytes, str]]:
        outcome = self.screens.step(lines, now, keys.last_output, keys.quiet_since)
        if isinstance(outcome, bytes):
            return outcome
        argv = self.argv_prompt
        if outcome == READY:
            if argv is not None:
                self.trace("input box ready; the argv prompt submits itself")
            return READY
        if argv is not None and transcript_exists:
            return READY  # the argv prompt went in by itself: its transcript exists
        if argv is not None and argv.startswith("/") and now - self.started >= PROMPT_ARRIVAL_GRACE:
            # 2.1.330 opens a built-in command's panel instead of the input box.
            raise self.fail(
                f"the prompt started no turn within {PROMPT_ARRIVAL_GRACE:g}s{SLASH_HINT}", lines
            )
        if now - self.started >= STARTUP_TIMEOUT:
            what = "drew nothing" if not any(lines) else "never showed its input box"
            raise self.fail(f"Claude Code {what} within {STARTUP_TIMEOUT:g}s", lines)
        return None
