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

from typing import Any, Dict, List, Optional

RECORD_TYPE = "cost-state"


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
