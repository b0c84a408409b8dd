"""The turn's transition table (turns/turn_state.py), one test per row.

The expected rows are written out here, from what each state means, not read from the
table under test: a Stop ends a running or interrupted turn; the budget's verdict wins
over a Stop; an Esc after the Stop is too late; nothing moves a turn whose result is out.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

import pytest

from claude_print import contract
from claude_print.hooks.relay import HookEvent
from claude_print.turns import turn_state
from claude_print.turns.turn import Turn
from claude_print.turns.turn_state import (
    BudgetReached,
    EscPressed,
    Event,
    ResultOut,
    Stopped,
    Submitted,
    advance,
)

STOP = HookEvent(contract.HOOK_STOP, {"last_assistant_message": "4"})
EVENTS: Dict[str, Event] = {
    "Submitted": Submitted(5.0),
    "EscPressed": EscPressed(6.0),
    "Stopped": Stopped(STOP, 7.0),
    "BudgetReached": BudgetReached(),
    "ResultOut": ResultOut(),
}
# state, event -> next state
ROWS = """
TYPING        Submitted      RUNNING
TYPING        EscPressed     INTERRUPTING
TYPING        Stopped        STOPPED
TYPING        BudgetReached  OVER_BUDGET
TYPING        ResultOut      DONE
RUNNING       Submitted      RUNNING
RUNNING       EscPressed     INTERRUPTING
RUNNING       Stopped        STOPPED
RUNNING       BudgetReached  OVER_BUDGET
RUNNING       ResultOut      DONE
INTERRUPTING  Submitted      INTERRUPTING
INTERRUPTING  EscPressed     INTERRUPTING
INTERRUPTING  Stopped        STOPPED
INTERRUPTING  BudgetReached  OVER_BUDGET
INTERRUPTING  ResultOut      DONE
STOPPED       Submitted      STOPPED
STOPPED       EscPressed     STOPPED
STOPPED       Stopped        STOPPED
STOPPED       BudgetReached  OVER_BUDGET
STOPPED       ResultOut      DONE
OVER_BUDGET   Submitted      OVER_BUDGET
OVER_BUDGET   EscPressed     OVER_BUDGET
OVER_BUDGET   Stopped        OVER_BUDGET
OVER_BUDGET   BudgetReached  OVER_BUDGET
OVER_BUDGET   ResultOut      DONE
DONE          Submitted      DONE
DONE          EscPressed     DONE
DONE          Stopped        DONE
DONE          BudgetReached  DONE
DONE          ResultOut      DONE
"""
TABLE: List[Tuple[str, str, str]] = [
    (a, b, c) for a, b, c in (line.split() for line in ROWS.strip().splitlines())
]


def turn_in(state: str) -> Turn:
    """A turn brought to `state` the way a run brings it there."""
    turn = Turn("What is 2+2?", "editor", 1.0)
    paths: Dict[str, List[Event]] = {
        "TYPING": [],
        "RUNNING": [Submitted(2.0)],
        "INTERRUPTING": [Submitted(2.0), EscPressed(3.0)],
        "STOPPED": [Submitted(2.0), Stopped(STOP, 3.0)],
        "OVER_BUDGET": [Submitted(2.0), BudgetReached()],
        "DONE": [Submitted(2.0), Stopped(STOP, 3.0), ResultOut()],
    }
    for event in paths[state]:
        advance(turn, event)
    assert turn.state.name == state
    return turn


def test_every_state_has_a_row_for_every_event() -> None:
    assert len(TABLE) == 6 * 5 == len(turn_state.TRANSITIONS)
    assert {s.name for s in turn_state.STATES} == {row[0] for row in TABLE}
    assert {e.__name__ for e in turn_state.EVENTS} == set(EVENTS) == {row[1] for row in TABLE}


@pytest.mark.parametrize(("state", "event", "after"), TABLE, ids=[f"{a}-{b}" for a, b, _ in TABLE])
def test_row(state: str, event: str, after: str) -> None:
    turn = turn_in(state)
    assert advance(turn, EVENTS[event]).name == after
    assert turn.state.name == after


@pytest.mark.parametrize("state", [row[0] for row in TABLE[::5]])
def test_each_event_records_its_facts_whatever_the_state(state: str) -> None:
    """An event that does not move the turn still says when (a Stop of a turn over its
    budget is kept; a second Stop restarts the settling)."""
    turn = turn_in(state)
    advance(turn, Submitted(10.0))
    assert turn.submitted_at == 10.0
    advance(turn, EscPressed(11.0))
    assert turn.interrupt_at == 11.0
    later = HookEvent(contract.HOOK_STOP_FAILURE, {"error": "rate_limit"})
    advance(turn, Stopped(later, 12.0))
    assert (turn.stop_event, turn.stop_at, turn.settle_until) == (later, 12.0, 15.0)


def test_a_new_turn_is_typing_with_no_facts() -> None:
    turn = Turn("hi", "paste", 1.0)
    assert turn.state.name == "TYPING"
    assert (turn.submitted_at, turn.interrupt_at, turn.stop_event) == (None, None, None)
