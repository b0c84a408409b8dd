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
        self.count = 0  # results built (printed, or only counted)
        self.shown = 0  # results printed

    def emit(self, ending: Ending, show: bool = True) -> int:
        """Print the result (`show` False: only count it in the totals, as a result
        `claude -p --output-format json` does not print); returns its exit code. A
        one-shot run's results after its first (background work's notifications started
        more turns) carry the run's totals too."""
        finish = ending.finish
        index = self.count

        def totals(conformed: Dict[str, Any]) -> Dict[str, Any]:
            finished = finish(conformed) if finish else conformed
            summed = self.totals.add(finished, index)
            return summed if self.multi_turn or index else finished

        if not show:
            totals(ending.obj)
        else:
            if self.shown and self.emitter.output_format == "text":
                self.emitter.line("\n")  # `claude -p` puts a blank line between results
            self.emitter.result(ending.obj, totals)
            self.shown += 1
        self.count += 1
        obj = ending.obj
        said = "printed" if show else "counted, not printed"
        self.trace(f"result {said} ({obj['subtype']}, is_error={obj['is_error']})")
        return ending.code
