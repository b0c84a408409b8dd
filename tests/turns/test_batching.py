"""Which messages that came during a turn join into one (turns/batching.py)."""

from __future__ import annotations

import pytest

from claude_print.sdk.stream_input import Prompt
from claude_print.tui.images import Image
from claude_print.turns.batching import joinable


@pytest.mark.parametrize(
    "prompt, joins",
    [
        (Prompt("message 2", 0.0), True),
        (Prompt("two\nlines", 0.0), True),
        (Prompt("/etc/hosts what", 0.0), True),  # a path: text in both
        (Prompt("/logout", 0.0), False),  # a command: its own turn
        (Prompt("/logout:", 0.0), False),  # may be one in the TUI
        (Prompt("\u200b/logout", 0.0), False),
        (Prompt("look", 0.0, images=(Image("image/png", b"\x89PNG"),)), False),
        (Prompt("", 0.0, error="a document block"), False),
        (Prompt(None, 0.0), False),  # stdin ended
    ],
)
def test_what_folds_into_the_turn_of_the_messages_that_came_with_it(
    prompt: Prompt, joins: bool
) -> None:
    """claude -p joins the plain messages that came during a turn (measured); what it
    does with the others was not measured, so they keep a turn of their own."""
    assert joinable(prompt) is joins
