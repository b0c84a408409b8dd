"""Whether a prompt goes into the TUI, decided before a key is typed: refused (its text
would act as keys, or it names a command the TUI would run otherwise than `claude -p`),
answered here as `claude -p` answers it without a model turn (`slash.decide`), or sent
in."""

from __future__ import annotations

import os
from typing import NamedTuple, Sequence

from claude_print import contract
from claude_print.tui import release
from claude_print.tui.delivery import paste_refusal
from claude_print.turns import slash


class Gate(NamedTuple):
    decision: slash.Decision  # the slash-command rules' reading of the prompt
    refusal: str  # why the prompt is refused ("": it is not)
    facts: contract.Facts  # the release the rules were read for (maybe learned here)


def judge(
    prompt: str,
    delivery: str,
    error: str,
    facts: contract.Facts,
    binary: str,
    forwarded: Sequence[str],
) -> Gate:
    """The gate of one prompt. `error`: a reason to refuse it found earlier (a stream-json
    message claude-print cannot type in); `facts`: the installed release's, or empty ones
    where its package did not say (then a prompt that names a command asks the binary)."""
    paste = paste_refusal(prompt) if delivery == "paste" else None
    if not facts.version and slash.names_a_command(prompt):
        # The rules are per release: ask the binary (a process start, only here).
        facts = contract.facts_for(release.claude_version(binary))
    decision = slash.decide(prompt, facts.version, os.getcwd(), dict(os.environ), forwarded)
    refused_by_rules = decision.text if decision.kind == slash.REFUSE else ""
    return Gate(decision, error or paste or refused_by_rules, facts)
