"""warm.prompt_reason over the prompt space: a prompt goes into a warm TUI (by the editor)
only where the cold run's delivery would hand the model the same text. Sizes on a log scale
with the argv limit on both sides, each with the editor's normalisations and without."""

from __future__ import annotations

from typing import Optional

import pytest

from claude_print import contract
from claude_print.options import Options
from claude_print.tui.delivery import warm_delivery
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
    # An argv prompt keeps it: cold (the editor and a paste would trim it). Over the
    # limit, or from stdin, the cold run goes by the editor too, which trims it the same.
    assert (reason(prompt, "argv", release) is not None) == fits
    assert reason(prompt, "stdin", release) is None


@pytest.mark.parametrize("size", [1, 1000, LIMIT - 1])
def test_combining_characters_follow_the_release(size: int) -> None:
    prompt = "e\u0301" + prompt_of(size - 3, "")  # NFD: 2.1.331's editor path composes it
    nfc = contract.facts_for("2.1.331").nfc_loaded_text
    assert (reason(prompt, "argv", "2.1.331") is not None) == nfc
    assert reason(prompt, "stdin", "2.1.331") is None


def via(
    prompt: str, source: str = "argv", release: str = "2.1.331", prompt_via: str = "auto"
) -> str:
    options = Options(prompt=prompt, prompt_source=source, prompt_via=prompt_via)
    method, reason = warm_delivery(options, contract.facts_for(release))
    assert (method == "") == (reason is not None)
    return method


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("source", ["argv", "stdin", "file"])
@pytest.mark.parametrize("size", [1, 2, 10, 100, 799, 800])
def test_a_short_line_is_pasted(release: str, source: str, size: int) -> None:
    assert via("w" * size, source, release) == "paste"


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("size", [801, 1000, 4000, 30000, LIMIT])
def test_a_longer_prompt_goes_by_the_editor(release: str, size: int) -> None:
    # Over 800 characters a paste collapses to "[Pasted text #N]" and may be wrapped.
    assert via("w" * size, "argv", release) == "editor"


@pytest.mark.parametrize(
    "prompt",
    [
        "two\nlines",  # 3+ line breaks collapse a paste; any break goes by the editor
        "a\r\nb",
        "tab\there",  # a paste turns a tab into spaces
        "!ls",  # a paste would switch the box to shell mode
        "see shot.png please",  # a pasted path to an image may become the image
        "photo.JPEG",
        "x.webp",
    ],
)
def test_what_a_paste_would_change_goes_by_the_editor(prompt: str) -> None:
    assert via(prompt, "stdin") == "editor"


def test_a_prompt_with_escape_is_never_pasted() -> None:
    assert via("a\x1b[201~b", "stdin") != "paste"


@pytest.mark.parametrize("prompt", ["# heading", "& more", "/tmp/notes.txt", "a\u00a0b"])
def test_plain_text_that_starts_oddly_is_pasted(prompt: str) -> None:
    assert via(prompt) == "paste"


def test_an_editor_asked_for_stays_the_editor() -> None:
    assert via("short", "stdin", prompt_via="editor") == "editor"


@pytest.mark.parametrize("prompt", ["keep it ", " lead", "tail\u3000", "\ufeffbom"])
def test_space_at_either_end_is_never_pasted(prompt: str) -> None:
    # The box trims a pasted prompt's end on submit (measured, 2.1.332), the editor's
    # too: an argv prompt keeps it, so that one runs cold; from stdin, by the editor.
    assert via(prompt, "argv") == ("" if prompt.endswith((" ", "\u3000")) else "editor")
    assert via(prompt, "stdin") == "editor"
