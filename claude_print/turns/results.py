"""The results a run prints: one per turn, through the emitter.

A one-shot run prints its one result as the turn built it. With several turns
(stream-json input) each result carries the session's cost and model usage so far and
`result_index` counts the results, as `claude -p` does.
"""

from __future__ import annotations

from typing import Any, Callable, Dict

from claude_print.printing.emit import Emitter
from claude_print.turns.turn_end import Ending, SessionTotals


class Results:
    def __init__(self, emitter: Emitter, trace: Callable[[str], None], multi_turn: bool) -> None:
        self.emitter = emitter
        self.trace = trace
        self.multi_turn = multi_turn
        self.totals = SessionTotals()
        self.count = 0  # results printed

    def emit(self, ending: Ending) -> int:
        """Print the result; returns its exit code."""
        finish = ending.finish
        if not self.multi_turn:
            self.emitter.result(ending.obj, finish)
        else:
            index = self.count

            def totals(conformed: Dict[str, Any]) -> Dict[str, Any]:
                return self.totals.add(finish(conformed) if finish else conformed, index)

            self.emitter.result(ending.obj, totals)
        self.count += 1
        obj = ending.obj
        self.trace(f"result printed ({obj['subtype']}, is_error={obj['is_error']})")
        return ending.code
