"""The session's transcript as read so far.

The TUI appends its JSONL records as the turn goes; this keeps the ones of our session
(another session's, or bookkeeping without one, are dropped) and hands each to a
consumer (the stream-json output) as it arrives. Turns see their slice by index.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

if TYPE_CHECKING:
    from claude_print.records.summary import TurnSummary
    from claude_print.records.transcript import TranscriptTail
    from claude_print.turns.turn import Turn

Record = Dict[str, Any]


class TranscriptFeed:
    def __init__(
        self,
        session_id: Optional[str],
        consume: Callable[[Record], None],
        before: Callable[[], None] = lambda: None,
    ) -> None:
        self.session_id = session_id  # None until a hook names it (a resumed session)
        self.consume = consume
        # Called once new records are read and before they are consumed: what happened
        # before they were written (a hook's report on the relay FIFO) goes out first.
        self.before = before
        # Called on every poll, before the session's new records are read: the
        # transcripts beside it (background subagents' messages, stream-json: StreamOut).
        self.beside: Callable[[], None] = lambda: None
        self.tail: Optional[TranscriptTail] = None
        self.records: List[Record] = []

    @property
    def path(self) -> Optional[str]:
        return self.tail.path if self.tail is not None else None

    def guessed_path(self) -> Optional[str]:
        """Where the TUI will write this session's transcript, if the id is known (a
        hook tells the real place later)."""
        if self.session_id is None:
            return None
        from claude_print.records.transcript import transcript_path

        home = os.path.expanduser("~")
        config_dir = os.environ.get("CLAUDE_CONFIG_DIR")
        return transcript_path(home, os.getcwd(), self.session_id, config_dir=config_dir)

    def open(self, path: str) -> None:
        """Read `path` from its start; what an earlier path gave is dropped."""
        from claude_print.records.transcript import TranscriptTail  # json: after the spawn

        self.tail = TranscriptTail(path)
        self.records = []

    def forget(self) -> List[str]:
        """--no-session-persistence: remove what the TUI wrote for the session."""
        if self.tail is None:
            return []
        from claude_print.records.transcript import forget_session

        return forget_session(self.tail.path)

    def exists(self) -> bool:
        return self.tail is not None and os.path.exists(self.tail.path)

    def poll(self) -> None:
        tail = self.tail
        if tail is None:
            return
        self.beside()
        records = tail.poll()
        if not records:
            return
        self.before()
        if self.tail is not tail:  # a hook named another transcript: read from its start
            return
        for record in records:
            if record.get("sessionId") == self.session_id:
                self.records.append(record)
                self.consume(record)

    def of(self, turn: Turn) -> List[Record]:
        return turn.records(self.records)

    def summary(self, turn: Turn) -> TurnSummary:
        return turn.summary(self.records, self.session_id or "")

    def titled(self) -> bool:
        """The TUI asked the model for a session title (its cost includes that request)."""
        return any(record.get("type") == "ai-title" for record in self.records)
