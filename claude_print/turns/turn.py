"""One turn's state: a prompt typed into the TUI, the hooks it fired, its slice of the
transcript. A run has one turn (`claude -p`'s one-shot) or many (stream-json input, one
per `user` message, all in the same TUI)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

from claude_print.hooks.relay import HookEvent
from claude_print.turns.turn_state import TYPING, State

if TYPE_CHECKING:
    from claude_print.records.summary import TurnSummary
    from claude_print.records.transcript import Record
    from claude_print.tui.images import Image


class Turn:
    """A plain class, not a dataclass: `dataclasses` costs import time before the spawn.

    Its state and the facts of the events that move it (`submitted_at`, `interrupt_at`,
    `stop_event`, `stop_at`) change only through `turn_state.advance`."""

    def __init__(self, prompt: str, delivery: str, started: float, first_record: int = 0) -> None:
        self.prompt = prompt
        self.images: Sequence[Image] = ()  # pasted after the text (stream-json input)
        self.delivery = delivery  # "argv", "editor" or "paste"
        self.started = started  # what `duration_ms` counts from
        # The session's records before this index belong to earlier turns.
        self.first_record = first_record
        self.state: State = TYPING
        self.submitted_at: Optional[float] = None  # Enter pressed (argv: it submitted itself)
        self.hooks_seen = 0
        self.stop_event: Optional[HookEvent] = None  # the last Stop or StopFailure
        self.stop_at = 0.0  # when Stop or StopFailure came
        self.settle_until = 0.0  # after Stop, how long to wait for the transcript
        self.closed_at: Optional[float] = None  # the transcript closed it without a Stop
        self.denials: List[Dict[str, Any]] = []  # PermissionRequests denied
        self.interrupt_at: Optional[float] = None  # an SDK `interrupt`: Esc was sent
        self.init_sent = False
        self.replay: Optional[Dict[str, Any]] = None  # the user message to echo after init
        self.dialog_checked = 0.0  # the quiet spell whose screen was last read for a dialog
        # A turn the TUI starts itself (a background task's notification as its prompt)
        # follows the turn whose prompt has this uuid; None: a prompt given to the TUI.
        self.after: Optional[str] = None

    def denied(self, payload: Dict[str, Any]) -> None:
        """A PermissionRequest our hook denied (nobody may answer a dialog in print mode)."""
        self.denials.append(
            {"tool_name": payload.get("tool_name"), "tool_input": payload.get("tool_input", {})}
        )

    def records(self, session: List[Record]) -> List[Record]:
        return session[self.first_record :]

    def summary(self, session: List[Record], session_id: str) -> TurnSummary:
        from claude_print.records.summary import summarise
        from claude_print.records.transcript import turn_records

        return summarise(turn_records(self.records(session), session_id, self.after))


def denials_with_ids(
    denials: List[Dict[str, Any]], tool_uses: List[Dict[str, Any]]
) -> List[Dict[str, Any]]:
    """Match each denied PermissionRequest to its tool_use block for the id `claude -p` reports."""
    out = []
    used: List[str] = []
    for denial in denials:
        tool_id = ""
        for use in tool_uses:
            if (
                use.get("id") not in used
                and use.get("name") == denial["tool_name"]
                and use.get("input") == denial["tool_input"]
            ):
                tool_id = str(use.get("id"))
                used.append(tool_id)
                break
        out.append(
            {
                "tool_name": denial["tool_name"],
                "tool_use_id": tool_id,
                "tool_input": denial["tool_input"],
            }
        )
    return out
