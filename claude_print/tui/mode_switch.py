"""The SDK's `set_permission_mode`, in the TUI: Shift+Tab until the footer names the mode.

The real CLI switches at once and answers `{"mode": M}` with a `system/status` line;
claude-print answers the same at once (stream_input) and switches the TUI before the
next prompt goes in, by pressing Shift+Tab (the REPL's own way, which writes nothing to
the user's settings) until the footer shows the mode. A switch that does not get there
in a few presses fails with the screen.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Union

from claude_print import contract
from claude_print.errors import Fail
from claude_print.tui import screens
from claude_print.tui.keys import Keyboard

PRESSES = 6  # one full cycle and then some
REDRAW_WAIT = 1.0  # after a press, how long to wait for the footer to change
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
        self.seen: Optional[str] = None

    def step(self, now: float, lines: List[str], keys: Keyboard) -> Optional[Union[bytes, str]]:
        """DONE once the footer shows the mode, Shift+Tab to press, or None to wait."""
        mode = mode_on_screen(lines)
        if mode == self.target:
            self.trace(f"permission mode {self.target} ({self.presses} Shift+Tab)")
            return DONE
        if mode is None or now - keys.quiet_since < contract.QUIET_BEFORE_DIALOG_KEYS:
            return None  # not ready, or the last press may still be redrawing
        drawn = self.pressed_at is None or keys.last_output > self.pressed_at
        if not drawn and now - (self.pressed_at or now) < REDRAW_WAIT:
            return None
        if self.presses >= PRESSES:
            raise self.fail(
                f"the TUI did not switch to permission mode {self.target} "
                f"({self.presses} Shift+Tab; it shows {mode})",
                lines,
            )
        self.presses += 1
        self.pressed_at = now
        return contract.KEY_SHIFT_TAB
