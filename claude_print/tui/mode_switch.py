"""The SDK's `set_permission_mode`, in the TUI: Shift+Tab until the footer names the mode.

The real CLI switches at once and answers `{"mode": M}` with a `system/status` line;
claude-print answers the same at once (stream_input) and switches the TUI before the
next prompt goes in, by pressing Shift+Tab (the REPL's own way, which writes nothing to
the user's settings) until the footer shows the mode. A switch that does not get there
in a few presses fails with the screen.

One press at a time: the next goes in only once the footer has shown the last one (its
mode changed). Output alone is no sign of that: a TUI short of CPU draws a spinner frame
or nothing for a second, and a second press then overshoots. It takes both keys, draws
the first one's footer for a frame and then the next mode's; the switch read that frame
as done, and the prompt ran in plan mode instead of acceptEdits (a fresh-clone CI's TS
SDK `set_permission_mode` case, 2.1.332; reproduced by stopping the TUI 1.5 s after the
press: its transcript's user record says `permissionMode: "plan"`).
"""

from __future__ import annotations

from typing import Callable, List, Optional, Union

from claude_print import contract
from claude_print.errors import Fail
from claude_print.tui import screens
from claude_print.tui.keys import Keyboard

PRESSES = 6  # one full cycle and then some
# A press whose footer has not changed by then counts as lost and is pressed again. Long:
# pressing again while the first is merely slow is what overshoots.
PRESS_SHOWS = 5.0
# After a press counted as lost, the first may land yet: the mode counts as reached only
# once its footer has held, with the TUI quiet, this long.
SETTLE = 1.0
DONE = "switched"


def mode_on_screen(lines: List[str]) -> Optional[str]:
    """The permission mode the ready REPL's footer shows (None: not ready). Only the
    footer is read: the mode's words in an answer above the box do not count."""
    if screens.classify(lines).kind != "ready":
        return None
    footer = "\n".join(screens.footer_lines(lines))
    for mode, marker in contract.MODE_FOOTERS.items():
        if marker in footer:
            return mode
    return "default"  # "? for shortcuts" alone, up to 2.1.2xx


class ModeSwitch:
    def __init__(self, target: str, fail: Fail, trace: Callable[[str], None]) -> None:
        self.target = target
        self.fail = fail
        self.trace = trace
        self.presses = 0
        self.pressed_at: Optional[float] = None
        self.before: Optional[str] = None  # the footer's mode as the last press went in
        self.lost = False  # a press was counted as lost: another may still land

    def step(self, now: float, lines: List[str], keys: Keyboard) -> Optional[Union[bytes, str]]:
        """DONE once the footer shows the mode, Shift+Tab to press, or None to wait."""
        mode = mode_on_screen(lines)
        if mode is None:
            return None  # not ready
        if self.before is not None:  # the last press: shown yet?
            if mode == self.before and now - (self.pressed_at or now) < PRESS_SHOWS:
                return None
            if mode == self.before:
                self.lost = True
                self.trace(f"Shift+Tab #{self.presses} not shown in {PRESS_SHOWS:g} s")
            self.before = None
        if mode == self.target:
            if self.lost and now - keys.quiet_since < SETTLE:
                return None  # the lost press may still land
            self.trace(f"permission mode {self.target} ({self.presses} Shift+Tab)")
            return DONE
        if now - keys.quiet_since < contract.QUIET_BEFORE_DIALOG_KEYS:
            return None  # still redrawing
        if self.presses >= PRESSES:
            raise self.fail(
                f"the TUI did not switch to permission mode {self.target} "
                f"({self.presses} Shift+Tab; it shows {mode})",
                lines,
            )
        self.presses += 1
        self.pressed_at = now
        self.before = mode
        return contract.KEY_SHIFT_TAB
