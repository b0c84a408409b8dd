"""A turn's states and what moves it between them: one table, one way in (`advance`).

A turn is TYPING while its prompt goes into the TUI, RUNNING once it is submitted,
INTERRUPTING once an Esc was pressed for it, STOPPED once Stop or StopFailure came (the
transcript then settles), OVER_BUDGET once a tool call reached --max-budget-usd, and DONE
once its result is out. The events come from the hooks (`Stopped`), the keys sent
(`Submitted`, `EscPressed`), the budget check (`BudgetReached`) and the orchestrator
(`ResultOut`); `advance` is the only code that changes a turn's state.

The table is whole: every state has a row for every event, so no pair is left to
chance. Where an event does not move the turn it still records its facts (when the
Esc went, which hook stopped it): a Stop that comes to a turn over its budget is kept,
but the budget's verdict wins, as `claude -p` reports the budget.
"""

from __future__ import annotations

from typing import Dict, NamedTuple, Optional, Protocol, Tuple, Type, Union

from claude_print.hooks.relay import HookEvent

# After Stop, how long to wait for the turn's last records: Stop fires before the TUI's
# write queue has flushed the turn, and from there the pump goes on (reading the PTY, so
# the TUI never blocks on it) until the transcript holds the whole turn.
TRANSCRIPT_SETTLE = 3.0


class State:
    """A turn's state: a named sentinel, compared with `is`."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


TYPING = State("TYPING")  # its prompt is being delivered (or it waits to be started)
RUNNING = State("RUNNING")  # submitted: the TUI works on it
INTERRUPTING = State("INTERRUPTING")  # an Esc was pressed to stop it
STOPPED = State("STOPPED")  # Stop or StopFailure came: its records settle
OVER_BUDGET = State("OVER_BUDGET")  # a tool call reached --max-budget-usd
DONE = State("DONE")  # its result is out

STATES = (TYPING, RUNNING, INTERRUPTING, STOPPED, OVER_BUDGET, DONE)


class Submitted(NamedTuple):
    """Enter went in (an argv prompt: the TUI took it at its input box; a notification
    turn: the TUI started it by itself)."""

    at: float


class EscPressed(NamedTuple):
    """An interrupt's Esc was sent (again, when the TUI did not take the first)."""

    at: float


class Stopped(NamedTuple):
    """The Stop or StopFailure hook of the turn."""

    hook: HookEvent
    at: float


class BudgetReached(NamedTuple):
    """Our PreToolUse hook refused a tool call at the budget."""


class ResultOut(NamedTuple):
    """The turn's result went out (or it was counted without being printed)."""


Event = Union[Submitted, EscPressed, Stopped, BudgetReached, ResultOut]
EVENTS: Tuple[Type[Event], ...] = (Submitted, EscPressed, Stopped, BudgetReached, ResultOut)

# (state, event) -> the next state. Read a row as: "in STATE, EVENT moves the turn to".
TRANSITIONS: Dict[Tuple[State, Type[Event]], State] = {
    (TYPING, Submitted): RUNNING,
    (TYPING, EscPressed): INTERRUPTING,
    (TYPING, Stopped): STOPPED,  # an argv prompt's Stop, read before its boot ended
    (TYPING, BudgetReached): OVER_BUDGET,
    (TYPING, ResultOut): DONE,  # answered without the TUI (a refusal, a slash answer)
    (RUNNING, Submitted): RUNNING,
    (RUNNING, EscPressed): INTERRUPTING,
    (RUNNING, Stopped): STOPPED,
    (RUNNING, BudgetReached): OVER_BUDGET,
    (RUNNING, ResultOut): DONE,
    (INTERRUPTING, Submitted): INTERRUPTING,
    (INTERRUPTING, EscPressed): INTERRUPTING,  # Esc again: the first was lost
    (INTERRUPTING, Stopped): STOPPED,  # the turn ended before the Esc told
    (INTERRUPTING, BudgetReached): OVER_BUDGET,
    (INTERRUPTING, ResultOut): DONE,
    (STOPPED, Submitted): STOPPED,  # the argv prompt's boot ends after its Stop
    (STOPPED, EscPressed): STOPPED,  # too late: the turn is over, its records settle
    (STOPPED, Stopped): STOPPED,  # a user's Stop hook blocked the last: each counts
    (STOPPED, BudgetReached): OVER_BUDGET,
    (STOPPED, ResultOut): DONE,
    (OVER_BUDGET, Submitted): OVER_BUDGET,
    (OVER_BUDGET, EscPressed): OVER_BUDGET,
    (OVER_BUDGET, Stopped): OVER_BUDGET,
    (OVER_BUDGET, BudgetReached): OVER_BUDGET,
    (OVER_BUDGET, ResultOut): DONE,
    (DONE, Submitted): DONE,
    (DONE, EscPressed): DONE,
    (DONE, Stopped): DONE,  # a second Stop of a turn already reported
    (DONE, BudgetReached): DONE,
    (DONE, ResultOut): DONE,
}


class Moving(Protocol):
    """What `advance` reads and writes of a turn (turn.Turn): its state and the facts of
    the events that move it."""

    state: State
    submitted_at: Optional[float]
    interrupt_at: Optional[float]
    stop_event: Optional[HookEvent]
    stop_at: float
    settle_until: float


def advance(turn: Moving, event: Event) -> State:
    """Move `turn` by `event` (the table) and record the event's facts on it."""
    if isinstance(event, Submitted):
        turn.submitted_at = event.at
    elif isinstance(event, EscPressed):
        turn.interrupt_at = event.at
    elif isinstance(event, Stopped):
        turn.stop_event = event.hook
        turn.stop_at = event.at
        turn.settle_until = event.at + TRANSCRIPT_SETTLE
    turn.state = TRANSITIONS[turn.state, type(event)]
    return turn.state
