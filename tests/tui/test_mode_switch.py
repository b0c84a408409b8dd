"""set_permission_mode in the TUI: the footer read, Shift+Tab pressed until it matches."""

from __future__ import annotations

from typing import List

import pytest

from claude_print import contract
from claude_print.errors import ClaudePrintError
from claude_print.tui import mode_switch
from claude_print.tui.keys import Keyboard
from claude_print.tui.mode_switch import DONE, ModeSwitch, mode_on_screen

RULE = contract.RULE_CHAR * 60


def screen(footer: str) -> List[str]:
    return [RULE, contract.CARET + " ", RULE, "  " + footer]


@pytest.mark.parametrize(
    ("footer", "mode"),
    [  # as 2.1.197 / 2.1.270 / 2.1.331 draw them (measured)
        ("? for shortcuts · ← for agents", "default"),
        ("⏸ manual mode on · ? for shortcuts · ← for agents", "default"),
        ("⏵⏵ accept edits on (shift+tab to cycle) · ← for agents", "acceptEdits"),
        ("⏸ plan mode on (shift+tab to cycle) · ← for agents", "plan"),
        ("⏵⏵ auto mode on (shift+tab to cycle) · ← for agents", "auto"),
        ("⏵⏵ bypass permissions on (shift+tab to cycle)", "bypassPermissions"),
    ],
)
def test_the_footer_names_the_mode(footer: str, mode: str) -> None:
    assert mode_on_screen(screen(footer)) == mode


def test_not_ready_is_no_mode() -> None:
    assert mode_on_screen(["Do you trust the files in this folder?"]) is None


CYCLE = [
    "? for shortcuts",
    "accept edits on (shift+tab to cycle)",
    "plan mode on (shift+tab to cycle)",
]


def test_presses_once_per_redraw_until_the_mode_shows() -> None:
    keys = Keyboard(0.0)
    switch = ModeSwitch("plan", lambda what, lines: ClaudePrintError(what), print)
    shown = 0
    now = 1.0
    presses = 0
    for _ in range(50):
        outcome = switch.step(now, screen(CYCLE[shown]), keys)
        if outcome == DONE:
            break
        if outcome == contract.KEY_SHIFT_TAB:
            presses += 1
            keys.last_key = now
            now += 0.1
            assert switch.step(now, screen(CYCLE[shown]), keys) is None  # not redrawn yet
            shown += 1
            keys.last_output = now
        now += 0.5
    assert (outcome, presses) == (DONE, 2)


def test_no_second_press_while_the_first_has_not_shown() -> None:
    """The CI failure (TS SDK `set_permission_mode`, 2.1.332 under load): the TUI, short of
    CPU, had not drawn the first Shift+Tab's footer a second later (or drew a spinner
    frame meanwhile), a second press went in, the TUI then took both, drew "accept edits
    on" for a frame, which counted as switched, and ran the prompt in plan mode (its
    transcript: `permissionMode: "plan"`). One press at a time: the next only once the
    footer has shown the last one."""
    keys = Keyboard(0.0)
    switch = ModeSwitch("acceptEdits", lambda what, lines: ClaudePrintError(what), print)
    assert switch.step(1.0, screen(CYCLE[0]), keys) == contract.KEY_SHIFT_TAB
    keys.last_key = 1.0
    for now in (1.5, 2.0, 2.5, 3.0, 4.0):  # the TUI draws (a spinner), the footer stays
        keys.last_output = now - 0.4
        assert switch.step(now, screen(CYCLE[0]), keys) is None, now
    keys.last_output = 4.5
    assert switch.step(5.0, screen(CYCLE[1]), keys) == DONE
    assert switch.presses == 1


def test_a_press_that_never_shows_is_pressed_again_and_the_target_must_hold() -> None:
    """A press whose footer never changes counts as lost after PRESS_SHOWS and goes in
    again; the first may land after all, so the target counts only once it has held."""
    keys = Keyboard(0.0)
    switch = ModeSwitch("acceptEdits", lambda what, lines: ClaudePrintError(what), print)
    assert switch.step(1.0, screen(CYCLE[0]), keys) == contract.KEY_SHIFT_TAB
    keys.last_key = 1.0
    t = 1.0 + mode_switch.PRESS_SHOWS
    assert switch.step(t, screen(CYCLE[0]), keys) == contract.KEY_SHIFT_TAB
    keys.last_key = t
    keys.last_output = t + 0.2  # the first press, late: accept edits for a frame...
    assert switch.step(t + 0.3, screen(CYCLE[1]), keys) is None
    keys.last_output = t + 0.4  # ...then the second: plan
    assert switch.step(t + 0.5, screen(CYCLE[2]), keys) is None  # still drawing
    assert switch.step(t + 0.8, screen(CYCLE[2]), keys) == contract.KEY_SHIFT_TAB
    keys.last_key, keys.last_output = t + 0.8, t + 0.9
    assert switch.step(t + 1.3, screen(CYCLE[0]), keys) == contract.KEY_SHIFT_TAB
    keys.last_key, keys.last_output = t + 1.3, t + 1.4
    assert switch.step(t + 1.5, screen(CYCLE[1]), keys) is None  # held long enough?
    assert switch.step(t + 1.4 + mode_switch.SETTLE, screen(CYCLE[1]), keys) == DONE
    assert switch.presses == 4


def test_a_footer_that_never_gets_there_fails_with_the_screen() -> None:
    keys = Keyboard(0.0)
    switch = ModeSwitch("auto", lambda what, lines: ClaudePrintError(what), print)
    now = 1.0
    with pytest.raises(ClaudePrintError, match="did not switch to permission mode auto"):
        for _ in range(100):
            if switch.step(now, screen(CYCLE[0]), keys) is not None:
                keys.last_key = now
            now += 2.0


ANSWERS = [  # an answer above the box that says the words of every footer
    "Noted: accept edits on",
    "⏵⏵ bypass permissions on (shift+tab to cycle)",
    "plan mode on · auto mode on · manual mode on",
    "? for shortcuts",
]


# Each mode's footer, written out as the TUI draws it (2.1.332).
FOOTERS = [
    ("? for shortcuts", "default"),
    ("⏵⏵ accept edits on (shift+tab to cycle)", "acceptEdits"),
    ("⏵⏵ bypass permissions on (shift+tab to cycle)", "bypassPermissions"),
    ("⏸ plan mode on (shift+tab to cycle)", "plan"),
]


@pytest.mark.parametrize(("footer", "mode"), FOOTERS)
@pytest.mark.parametrize("answer", ANSWERS)
def test_words_in_the_answer_are_not_the_footer(footer: str, mode: str, answer: str) -> None:
    """Issue 29 item 5: a turn-1 answer saying "accept edits on" made a bypass session
    count as switched with 0 Shift+Tab. The footer under the box is read, nothing else."""
    lines = ["⏺ " + answer, "", *screen(footer)]
    assert mode_on_screen(lines) == mode


@pytest.mark.parametrize(("footer", "mode"), FOOTERS)
@pytest.mark.parametrize("typed", ANSWERS)
@pytest.mark.parametrize("where", ["caret line", "wrapped line"])
def test_words_in_the_input_box_are_not_the_footer(
    footer: str, mode: str, typed: str, where: str
) -> None:
    """The other side of the decoy: a prompt in the input box (its caret line, or a
    line it wraps onto before the closing rule) that says a footer's words is not the
    footer either."""
    if where == "caret line":
        box = [contract.CARET + " " + typed]
    else:
        box = [contract.CARET + " please write this down:", "  " + typed]
    lines = ["⏺ Done.", "", RULE, *box, RULE, "  " + footer]
    assert mode_on_screen(lines) == mode


def test_a_switch_is_not_done_by_an_answer_that_names_the_target() -> None:
    keys = Keyboard(0.0)
    switch = ModeSwitch("acceptEdits", lambda what, lines: ClaudePrintError(what), print)
    lines = ["⏺ Noted: accept edits on", *screen("⏵⏵ bypass permissions on (shift+tab to cycle)")]
    assert switch.step(5.0, lines, keys) == contract.KEY_SHIFT_TAB


def test_no_footer_under_the_box_is_not_ready() -> None:
    lines = ["⏺ ? for shortcuts (shift+tab to cycle)", RULE, contract.CARET + " ", RULE]
    assert mode_on_screen(lines) is None
