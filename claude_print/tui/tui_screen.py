"""The TUI's window as claude-print sees it.

Its output is rendered into a screen model while the screen is read (boot, delivery,
between the turns of stream-json input); during a turn the bytes are only kept (the last
UNRENDERED_LIMIT of them) and rendered when a failure message needs the screen, which
saves the rendering cost on long answers. Terminal probes are answered either way.
"""

from __future__ import annotations

import os
from typing import List

from claude_print import contract
from claude_print.tui import screens
from claude_print.tui.probes import ProbeResponder
from claude_print.tui.terminal import Screen

UNRENDERED_LIMIT = 256 * 1024  # enough for the last screens of a failure message


class TuiScreen:
    def __init__(self) -> None:
        self.screen = Screen(contract.WINDOW_COLS, contract.WINDOW_ROWS)
        self.unrendered = bytearray()
        self.probes = ProbeResponder(
            rows=contract.WINDOW_ROWS,
            cols=contract.WINDOW_COLS,
            cursor=lambda: self.screen.cursor,
            # Unanswered, the TUI skips its follow-up queries (DECRQM, a second DA1)
            # and reports no terminal name in its telemetry.
            answer_xtversion=False,
        )

    def feed(self, data: bytes, render: bool) -> bytes:
        """Take the TUI's output; returns the replies its probes ask for."""
        if render:
            self.lines()  # anything held back first, in order
            self.screen.feed(data)  # before the probes, so a cursor reply sees this chunk
        else:
            self.keep(data)
        return b"".join(self.probes.feed(data))

    def keep(self, data: bytes) -> None:
        self.unrendered += data
        if len(self.unrendered) > UNRENDERED_LIMIT:
            del self.unrendered[: len(self.unrendered) - UNRENDERED_LIMIT]
            self.screen = Screen(contract.WINDOW_COLS, contract.WINDOW_ROWS)

    def lines(self) -> List[str]:
        """The screen as it is now, rendering any output held back."""
        if self.unrendered:
            self.screen.feed(bytes(self.unrendered))
            self.unrendered.clear()
        return self.screen.lines()


def failure_message(what: str, lines: List[str], claude_version: str) -> str:
    """A failure read off the screen: what went wrong, the release if known (a drifted
    one explains much), and the screen's text with secrets masked."""
    drift = ""
    if claude_version:
        tested = f"{contract.OLDEST_SUPPORTED} to {contract.NEWEST_TESTED}"
        drift = f" (Claude Code {claude_version}; tested {tested})"
    secrets = [os.environ.get(name, "") for name in screens.SECRET_VARS]
    excerpt = screens.screen_excerpt(lines, secrets=secrets)
    return f"{what}{drift}. Screen:\n{excerpt}" if excerpt else f"{what}{drift}."
