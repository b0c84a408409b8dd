"""The end of a turn, run side: its context (session, release, model asked) and its
result out, after the TUI's cost is settled and the stream flushed. `runner.Session`
calls these with the run's state and, for a one-shot run's last turn, its child."""

from __future__ import annotations

import os
from typing import Optional

from claude_print.run.run_state import RunState
from claude_print.tui.pty_session import PtyChild
from claude_print.turns import turn_end
from claude_print.turns.turn_watch import Verdict


def context(state: RunState) -> turn_end.Context:
    model_asked = bool(state.options.model or os.environ.get("ANTHROPIC_MODEL"))
    return turn_end.context(
        state.session_id or "",
        state.claude_version,
        state.facts,
        state.turn,
        model_asked,
    )


def emit(
    state: RunState, verdict: Verdict, one_shot: Optional[PtyChild], ctx: Optional[turn_end.Context]
) -> int:
    """The turn's result. A one-shot TUI (`one_shot`: the run's last turn) may shut down
    now that its last turn is on disk (not before: a SIGTERM can drop records still in
    its write queue); the cost is settled and the stream flushed, then the result goes
    out. `ctx`: the turn's context when it ended (a result held while background work
    ran)."""
    from claude_print.turns import tui_cost

    if one_shot is not None:
        one_shot.request_exit()
    if state.results.count:  # the TUI's cost-state is the run's: each turn is priced
        one_shot = None
    if state.options.output_format != "text":  # text shows no cost: nothing to wait for
        tui_cost.settle(verdict.summary, state.facts, one_shot, state.transcript, state.trace)
    state.stream.flush()
    if verdict.notice is not None:
        state.emitter.control(verdict.notice)
    return state.results.emit(verdict.build(ctx or context(state)))
