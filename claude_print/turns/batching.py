"""Messages that came while a turn ran: which `claude -p` answers together in one turn.

`claude -p` answers the stream-json messages that came during a turn in its next turn,
their texts joined by line breaks (measured on 2.1.197, 2.1.270 and 2.1.332: four
messages written at once gave the first alone, then the other three as one prompt).
The channel (sdk/stream_input.ControlChannel.next_prompt) folds them; this says which
may join.
"""

from __future__ import annotations

from claude_print.sdk.stream_input import Prompt
from claude_print.turns import slash


def joinable(prompt: Prompt) -> bool:
    """Plain text that names no command joins; a message that carries images, fails, or
    may be a command keeps a turn of its own (how `claude -p` folds those was not
    measured)."""
    text = prompt.text
    if text is None or prompt.error or prompt.images:
        return False
    return not slash.names_a_command(text)
