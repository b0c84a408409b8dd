"""Bytes on their way into the TUI.

Keys (Enter, Ctrl+G, a dialog's arrows, a paste) wait in line and each goes out only once
the TUI has been quiet for a moment: one that lands while Ink redraws can be lost.
Replies to terminal probes and an interrupt's Esc go out at once. The pump writes the
outbox as fast as the PTY takes it.
"""

from __future__ import annotations

from typing import List, Optional

from claude_print import contract


class Timed(bytes):
    """A key whose phase has timed it itself (it saw the TUI draw what it waited for):
    it goes out at once, without the quiet gap."""


class Keyboard:
    def __init__(self, now: float) -> None:
        self.outbox = bytearray()
        self.pending: List[bytes] = []
        self.last_output = now  # the TUI last drew something
        self.last_key = now  # a key last went out

    @property
    def busy(self) -> bool:
        """A key waits or is still being written: the screen is about to change."""
        return bool(self.pending or self.outbox)

    @property
    def quiet_since(self) -> float:
        return max(self.last_output, self.last_key)

    def press(self, key: bytes) -> None:
        self.pending.append(key)

    def press_now(self, key: bytes, now: float) -> None:
        self.outbox += key
        self.last_key = now

    def reply(self, data: bytes) -> None:
        """Answers to the TUI's probes: not keys, no quiet gap."""
        self.outbox += data

    def flush(self, now: float) -> None:
        """The next key into the outbox once the TUI has been quiet long enough."""
        if (
            self.pending
            and not self.outbox
            and now - self.quiet_since >= contract.QUIET_BEFORE_KEYS
        ):
            self.outbox += self.pending.pop(0)
            self.last_key = now

    def next_key_at(self) -> Optional[float]:
        return self.quiet_since + contract.QUIET_BEFORE_KEYS if self.pending else None

    def chunk(self) -> bytes:
        return bytes(self.outbox[: contract.PASTE_CHUNK])

    def written(self, count: int) -> None:
        del self.outbox[:count]
