"""warm.prompt_reason over the prompt space: a prompt goes into a warm TUI (by the editor)
only where the cold run's delivery would hand the model the same text. Sizes on a log scale
with the argv limit on both sides, each with the editor's normalisations and without."""

from __future__ import annotations

from typing import Optional

import pytest

from claude_print import contract
from claude_print.options import Options
from claude_print.warm_start import warm

LIMIT = contract.MAX_ARGV_PROMPT_BYTES
SIZES = [1, 3, 10, 48, 50, 51, 300, 1000, 4000, 30000, LIMIT - 1, LIMIT, LIMIT + 1, 400000]
RELEASES = ["2.1.197", "2.1.331"]


def prompt_of(size: int, tail: str) -> str:
    body = ("line of words\n" * (size // 14 + 1))[: max(1, size - len(tail.encode()))]
    return body.rstrip() + "x" + tail if tail else body.rstrip("\n ") + "x"


def reason(prompt: str, source: str, release: str) -> Optional[str]:
    options = Options(prompt=prompt, prompt_source=source)
    return warm.prompt_reason(options, contract.facts_for(release))


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("source", ["argv", "stdin", "file"])
def test_plain_prompts_run_warm(release: str, size: int, source: str) -> None:
    assert reason(prompt_of(size, ""), source, release) is None


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("tail", [" ", "\n", "\t \n"])
def test_trailing_whitespace_is_cold_only_where_argv_keeps_it(
    release: str, size: int, tail: str
) -> None:
    prompt = prompt_of(size, tail)
    fits = len(prompt.encode()) <= LIMIT
    # An argv prompt keeps it (cold by argv, so not warm); over the limit, or from stdin,
    # the cold run goes by the editor too, which trims it the same way.
    assert (reason(prompt, "argv", release) is not None) == fits
    assert reason(prompt, "stdin", release) is None


@pytest.mark.parametrize("size", [1, 1000, LIMIT - 1])
def test_combining_characters_follow_the_release(size: int) -> None:
    prompt = "e\u0301" + prompt_of(size - 3, "")  # NFD: 2.1.331's editor path composes it
    nfc = contract.facts_for("2.1.331").nfc_loaded_text
    assert (reason(prompt, "argv", "2.1.331") is not None) == nfc
    assert reason(prompt, "stdin", "2.1.331") is None
