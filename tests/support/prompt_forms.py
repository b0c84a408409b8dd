"""What the model may get from the TUI for a prompt `claude -p` sends as given: the input
box's documented normalisation per release (docs/contract.md, "prompt delivery"),
measured and written out here, shared by the e2e tests that compare the two."""

from __future__ import annotations

import re
import unicodedata
from typing import List

# JavaScript's trimEnd(): what the input box strips from a loaded prompt on submit.
JS_TRAILING = re.compile(
    "[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+$"
)


def model_forms(prompt: str, release: str, channel: str) -> List[str]:
    """What the model may get from the TUI for `claude -p`'s `prompt` (measured per
    release): the positional argument as given, a loaded prompt with its trailing
    whitespace trimmed (composed, Unicode NFC, up to 2.1.269); from 2.1.277 on every way
    in also makes each line break LF (a text whose line breaks are all CRLF may keep
    them) and drops the other control characters."""
    forms = [prompt]
    version = tuple(int(p) for p in release.split("."))
    if channel != "argv" and version < (2, 1, 270):  # bisected: 2.1.269 still composes
        forms = [unicodedata.normalize("NFC", prompt)]
    if version >= (2, 1, 277):
        forms = [sanitized(prompt)]
        if "\r\n" in prompt:
            forms.append("\r\n".join(sanitized(part) for part in prompt.split("\r\n")))
    if channel != "argv":
        forms = [JS_TRAILING.sub("", form) for form in forms]
    return forms


def sanitized(text: str) -> str:
    text = re.sub("[\r\v\f\x85\u2028\u2029]", "\n", text)
    return re.sub("[\x00-\x08\x0b-\x1f\x7f-\x84\x86-\x9f\ufeff]", "", text)
