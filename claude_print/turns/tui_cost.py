"""The session's cost as the TUI itself counted it: the transcript's `cost-state` record.

Claude Code 2.1.247 and later write a `cost-state` record into the session's
transcript when the session is left (SIGTERM included): `totalCostUSD` and a
per-model `modelUsage` with `costUSD`, priced by the running release's own table,
so models newer than claude-print's fallback table (pricing.py) are priced too.
When the TUI made a session-title request (an `ai-title` record in the transcript;
always up to 2.1.310, from 2.1.321 only when non-essential traffic is allowed), its
total holds that request too, which `claude -p` does not make (about twice
`claude -p`'s cost on a tiny prompt); otherwise it equals `claude -p`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from claude_print import contract

if TYPE_CHECKING:
    from claude_print.records.summary import TurnSummary
    from claude_print.tui.pty_session import PtyChild
    from claude_print.turns.transcript_feed import TranscriptFeed

RECORD_TYPE = "cost-state"
# The TUI writes its cost-state record as it exits after SIGTERM (0.1-1.5 s alone, up to
# ~4 s with 20 at once, measured): how long the result waits for it.
COST_STATE_WAIT = 5.0


def last_cost_state(records: List[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    for record in reversed(records):
        if record.get("type") == RECORD_TYPE and isinstance(
            record.get("totalCostUSD"), (int, float)
        ):
            return record
    return None


def apply(
    cost_state: Dict[str, Any],
    total: float,
    model_usage: Dict[str, Dict[str, Any]],
) -> float:
    """Set each model's `costUSD` from the record (matched by name) and return the total."""
    recorded = cost_state.get("modelUsage")
    per_model = recorded if isinstance(recorded, dict) else {}
    for model, entry in model_usage.items():
        theirs = per_model.get(model)
        if isinstance(theirs, dict) and isinstance(theirs.get("costUSD"), (int, float)):
            entry["costUSD"] = float(theirs["costUSD"])
    value = cost_state.get("totalCostUSD", total)
    return float(value) if isinstance(value, (int, float)) else total


def settle(
    summary: TurnSummary,
    facts: contract.Facts,
    child: Optional[PtyChild],
    transcript: TranscriptFeed,
    trace: Callable[[str], None],
) -> None:
    """Report the TUI's own cost when it is `claude -p`'s cost too: no session-title
    request went into it, or claude-print's price table lacks a model. The record is
    written as the TUI exits, so this asks the child to leave (a one-shot run only: in a
    multi-turn session pass no child) and waits for it a while."""
    from claude_print.records import pricing

    unpriced = [m for m in summary.model_usage if pricing.price_for(m) is None]
    if not facts.cost_state or child is None or (transcript.titled() and not unpriced):
        trace("cost from claude-print's price table")
        return
    child.request_exit()
    code = child.wait_exit(COST_STATE_WAIT)
    transcript.poll()
    record = last_cost_state(transcript.records)
    titled = transcript.titled()
    if record is None or (titled and not unpriced):
        why = "no cost-state record" if record is None else "the TUI's cost has a title request"
        missing = f", which does not know {', '.join(unpriced)}" if unpriced else ""
        trace(f"{why} (child status {code}); cost from the price table{missing}")
        return
    summary.total_cost_usd = apply(record, summary.total_cost_usd, summary.model_usage)
    extra = " (it includes the TUI's session-title request)" if titled else ""
    trace(f"cost from the TUI's cost-state record: {summary.total_cost_usd}{extra}")
