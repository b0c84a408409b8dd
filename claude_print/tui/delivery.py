"""The turn's first step: get one prompt into the TUI's input box and submitted.

Every step is confirmed by an event, never by reading the box back (a box taller than
the window has its top scrolled away, so it reads as empty):

- editor: the prompt is staged in a private file and Ctrl+G makes the TUI run
  claude-print's editor script, which copies it into the box's file and says so over
  the relay FIFO (`EDITOR_EVENT`); once the TUI has drawn after that, Enter submits;
- paste: one bracketed paste; once the TUI has drawn it, Enter submits.

Either way claude-print's UserPromptSubmit hook asks before the TUI sends anything: its
payload holds the prompt about to go to the model, which `check_submitted` holds
against the intended one, up to the release's documented normalisation. A prompt that
the box changed in any other way is blocked there, before any request, and the run
fails with exit 2: no prompt is ever sent changed without the user being told.
"""

from __future__ import annotations

import os
import re
import unicodedata
from typing import TYPE_CHECKING, Callable, List, Optional, Sequence, Tuple, Union

from claude_print import contract
from claude_print.errors import ClaudePrintError, Fail
from claude_print.tui import screens
from claude_print.tui.images import PLACEHOLDER, Clipboard, Image, placeholders, strip_placeholders
from claude_print.tui.keys import Timed

if TYPE_CHECKING:
    from claude_print.options import Options

# Nothing confirmed this long after the last key, with the TUI quiet: the key was lost
# (seen under CPU load), so it goes again, a bounded number of times. An extra Enter on
# the emptied box of a running turn does nothing (measured), nor does a second Ctrl+G
# (the editor script writes the same text again).
RETRY_AFTER = 2.0
RETRY_QUIET = 0.5
TRIES = 4
# The TUI loads the editor's file after the script has exited: Enter waits for a frame
# drawn after the script's report, or this long at most.
REDRAW_WAIT = 1.0
# Keys sent, yet nothing confirmed after this long: they were lost for good.
GRACE = float(os.environ.get("CLAUDE_PRINT_PROMPT_TIMEOUT", "20"))

DELIVERED = "delivered"
Lines = Callable[[], List[str]]

# JavaScript's String.prototype.trimEnd(): what the input box strips on submit.
_JS_SPACE_CHARS = (
    "\t\n\v\f\r \u00a0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_TRAILING = re.compile(f"[{re.escape(_JS_SPACE_CHARS)}]+$")
# 2.1.277 on: the box turns these line breaks into "\n" and drops other control characters
# (C0 but tab and newline, DEL, C1, the BOM) from loaded text (measured on 2.1.331).
_BREAKS = re.compile("\r\n|[\r\v\f\x85\u2028\u2029]")
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x84\x86-\x9f\ufeff]")
# 2.1.330 on, a collapsed paste: `\n\n<pasted_content id="c50f">\n...\n</pasted_content ...>`.
_WRAPPED = re.compile(
    r'\A\s*<pasted_content id="([0-9a-f]+)">\n(.*)</pasted_content id="\1">\s*\Z', re.S
)
# A paste is read by the terminal's key parser: ESC and the C1 controls start sequences
# there (ESC[Z is shift+tab, ESC[201~ ends the paste), so their text would act as keys.
_KEY_STARTERS = re.compile("[\x1b\x80-\x9f]")


# A warm keeper's TUI takes a short one-line prompt by a paste: loading the box from the
# editor costs the TUI a full redraw (~65 ms on 2.1.332, decision 57). Only text that the
# box takes as typed: a longer paste may collapse into "[Pasted text #N]" (over 800
# characters, or 3+ line breaks) and then reach the model wrapped in tags on some
# releases, and a pasted path to an image may become the image.
WARM_PASTE_MAX = 800
_IMAGE_NAME = re.compile(r"\.(png|jpe?g|gif|webp|bmp|tiff?|svg|heic|avif)\b", re.I)


def pastes_as_typed(prompt: str) -> bool:
    """`prompt` goes in by a paste exactly as by the editor or argv (warm runs only)."""
    return (
        0 < len(prompt) <= WARM_PASTE_MAX
        and not any(c in prompt for c in "\n\r\t")
        # The box trims a pasted prompt's end on submit (2.1.332: "a b " sent as "a b",
        # where argv keeps the space), and maybe its start: pasted only without either.
        and prompt.strip(_JS_SPACE_CHARS) == prompt
        and paste_refusal(prompt) is None
        and not _IMAGE_NAME.search(prompt)
    )


def sent_forms(prompt: str, method: str, facts: contract.Facts) -> List[str]:
    """The prompt as the TUI hands it to the model (without a paste's tags): the forms
    measured, the first the usual one. 2.1.331 kept the CRLFs of a text whose every line
    break was one and made all of them LF in a text of mixed breaks: both are taken."""
    text = prompt
    if method == "paste":
        # Typed keys: Enter is CR, so the terminal's CRs are line breaks; nothing is trimmed.
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        text = text.replace("\t", contract.PASTE_TAB_REPLACEMENT)
    forms = [text]
    if facts.sanitizes_controls:
        forms = [_CONTROLS.sub("", _BREAKS.sub("\n", text))]
        if "\r\n" in text:
            parts = text.split("\r\n")
            forms.append("\r\n".join(_CONTROLS.sub("", _BREAKS.sub("\n", p)) for p in parts))
    if method == "editor" and facts.nfc_loaded_text:
        forms = [unicodedata.normalize("NFC", form) for form in forms]
    if method == "editor":
        forms = [_TRAILING.sub("", form) for form in forms]
    return forms


def check_submitted(
    sent: str, prompt: str, method: str, facts: contract.Facts, images: int = 0
) -> Optional[str]:
    """None when `sent` (UserPromptSubmit's prompt) is `prompt` as this release's box
    sends it, followed by the marks of `images` pasted images; else what differs, for the
    error message."""
    text = strip_placeholders(sent, images)
    if text is None:
        shown = len(PLACEHOLDER.findall(sent))
        return (
            f"Claude Code was about to send {shown} image(s) where {images} were given "
            f"(the input box held {sent[-60:]!r})"
        )
    sent = text
    if method == "paste" and facts.paste_wraps:
        match = _WRAPPED.match(sent)
        if match:
            sent = match.group(2)
    forms = [_TRAILING.sub("", form) for form in sent_forms(prompt, method, facts)]
    sent = _TRAILING.sub("", sent)  # a wrapped paste's last line break is the tag's
    if sent in forms:
        return None
    expected = forms[0]
    at = next(
        (i for i, (a, b) in enumerate(zip(sent, expected)) if a != b),
        min(len(sent), len(expected)),
    )
    return (
        f"Claude Code was about to send a different prompt ({len(sent)} characters where "
        f"{len(expected)} were expected; first difference at character {at}: "
        f"{expected[at : at + 12]!r} became {sent[at : at + 12]!r})"
    )


def normalisation_notes(prompt: str, method: str, facts: contract.Facts) -> List[str]:
    """How the model's copy of the prompt differs from it (documented normalisation)."""
    notes = []
    trailing = _TRAILING.search(prompt)
    if (
        method == "editor"
        and facts.nfc_loaded_text
        and unicodedata.normalize("NFC", prompt) != prompt
    ):
        notes.append(
            f"Claude Code {facts.version or '(this release)'} composes the prompt's combining "
            "characters (Unicode NFC)"
        )
    if trailing and method == "editor":  # argv and paste keep it
        notes.append(
            f"the input box trims the prompt's {len(trailing.group(0))} trailing whitespace "
            "character(s)"
        )
    if facts.sanitizes_controls:
        removed = len(_CONTROLS.findall(prompt))
        breaks = len([b for b in _BREAKS.findall(prompt) if b != "\n"])
        if removed:
            notes.append(
                f"Claude Code {facts.version or '(this release)'} drops the prompt's {removed} "
                "control character(s)"
            )
        if breaks:
            notes.append(f"{breaks} CR/VT/FF/NEL/LS/PS line break(s) become '\\n'")
    if method == "paste" and "\r" in prompt:
        notes.append("a paste turns each CR into a line break ('\\n')")
    if method == "paste" and "\t" in prompt:
        notes.append(
            f"the prompt has {prompt.count(chr(9))} tab(s): a paste turns each into four spaces"
        )
    if method == "paste" and facts.paste_wraps and (len(prompt) > 800 or prompt.count("\n") > 2):
        notes.append(
            f"Claude Code {facts.version or '(this release)'} hands a paste this large to the "
            "model inside <pasted_content> tags (--prompt-via editor does not)"
        )
    return notes


def paste_refusal(prompt: str) -> Optional[str]:
    """Why `prompt` cannot go in as a paste (its text would act as keys), or None."""
    starter = _KEY_STARTERS.search(prompt)
    if starter:
        return (
            f"the prompt contains the control character {starter.group(0)!r} at character "
            f"{starter.start()}, which a terminal reads as the start of a key sequence (ESC[201~ "
            "would end the paste, ESC[Z switch the permission mode); it cannot be pasted "
            "(use --prompt-via editor, or argv up to 128 KiB)"
        )
    if prompt.startswith(contract.SHELL_MODE_PREFIX):
        # Pasted, it would switch the input box to shell mode and Enter would run it here.
        return (
            "the prompt starts with '!', which Claude Code's input box takes as a shell "
            "command to run on this machine; it cannot be pasted (use --prompt-via editor, "
            "or start the prompt with another character)"
        )
    return None


def choose_delivery(options: Options, multi_turn: bool = False) -> str:
    """ "argv" (byte-exact, visible in ps, <= 128 KiB), "editor" (any size, private) or
    "paste"; see --prompt-via and docs/contract.md (prompt delivery). Prompts typed in one
    after another (stream-json input) go in by the editor unless paste is asked for."""
    if multi_turn:
        return "paste" if options.prompt_via == "paste" else "editor"
    size = len(options.prompt.encode("utf-8"))
    fits = size <= contract.MAX_ARGV_PROMPT_BYTES
    if options.prompt_via == "argv":
        if not fits:
            raise ClaudePrintError(
                f"--prompt-via argv: the prompt is {size} bytes; one argument may hold at most "
                f"{contract.MAX_ARGV_PROMPT_BYTES} (use --prompt-via paste)"
            )
        return "argv"
    if options.prompt_via in ("editor", "paste"):
        delivery = options.prompt_via
    else:
        # With --mcp-config the prompt must wait for the servers (mcp_wait):
        # an argv prompt goes in by itself, before 2.1.331 has their tools.
        argv_ok = options.prompt_source == "argv" and fits and not options.mcp_configs
        delivery = "argv" if argv_ok else "editor"
    if delivery == "paste":
        refusal = paste_refusal(options.prompt)
        if refusal is not None:
            raise ClaudePrintError(refusal)
    return delivery


def warm_delivery(options: Options, facts: contract.Facts) -> Tuple[str, Optional[str]]:
    """How a warm TUI takes this prompt: a paste (short, one line, taken as typed) or the
    editor, whichever hands the model the text the cold run's delivery would; else why
    neither does."""
    prompt = options.prompt
    cold = choose_delivery(options)
    forms = sent_forms(prompt, cold, facts)
    if (
        options.prompt_via != "editor"
        and pastes_as_typed(prompt)
        and sent_forms(prompt, "paste", facts) == forms
    ):
        return "paste", None
    if sent_forms(prompt, "editor", facts) == forms:
        return "editor", None
    return "", f"the editor would change this prompt where {cold} does not"


def paste_keys(prompt: str) -> bytes:
    """The prompt as one bracketed paste (Enter follows once the TUI has drawn it)."""
    return contract.PASTE_START + prompt.encode("utf-8") + contract.PASTE_END


class Delivery:
    """One prompt, editor or paste. The pump calls `step()` whenever no key is on its way
    and hands over the editor script's report (`editor_done`) and the UserPromptSubmit
    payload (`submitted`)."""

    def __init__(
        self,
        prompt: str,
        method: str,
        facts: contract.Facts,
        stage: Callable[[str], None],
        fail: Fail,
        trace: Callable[[str], None],
        started: float,
        images: Sequence[Image] = (),
        clipboard: Optional[Clipboard] = None,
        submit: bool = True,
    ) -> None:
        self.prompt = prompt
        # False: load the text and stop once the TUI has drawn it, no Enter (a warm
        # keeper's dry run of the editor, keeper.prime_editor).
        self.submit = submit
        # Pasted after the text, one Ctrl+V each from claude-print's clipboard (images.py).
        self.images = list(images)
        self.clipboard = clipboard
        self.pasted = 0  # images staged and Ctrl+V pressed for
        self.pasted_at = 0.0  # the last Ctrl+V
        self.image_keys = 0  # Ctrl+V presses for the current image
        self.method = method
        self.facts = facts
        self.stage = stage  # puts text where the editor script finds it
        self.fail = fail
        self.trace = trace
        self.started = started
        self.loading_at: Optional[float] = None  # the prompt's keys went out
        self.loads = 0
        self.clearing_at: Optional[float] = None  # paste: old box text being replaced
        self.loaded_at: Optional[float] = None  # the TUI has the text (editor report / paste)
        self.enter_at: Optional[float] = None
        self.enters = 0
        self.confirmed = False

    def step(
        self, now: float, lines: Lines, last_output: float, last_key: float
    ) -> Optional[Union[bytes, str]]:
        """Keys to send next (after the usual quiet gap), DELIVERED, or None to wait."""
        if self.confirmed:
            return DELIVERED
        quiet = now - max(last_output, last_key)
        if self.loading_at is None:
            return self._load(now, lines(), quiet)
        if self.loaded_at is None:
            if self.method == "paste":
                # Drawn (or given time to): the TUI has taken the paste; an Enter that
                # comes while it still works on it is held and replayed after it. Drawn,
                # Enter goes at once, not after the quiet gap: ~25 ms sooner (decision 57).
                drawn = last_output > self.loading_at
                if drawn or now - self.loading_at >= REDRAW_WAIT:
                    self.loaded_at = now
                    if not self.submit:
                        return DELIVERED
                    if not self.images:
                        enter = self._enter(now, "the TUI has drawn the paste; pressing Enter")
                        return Timed(enter) if drawn else enter
                return None
            return self._reload(now, lines, quiet)
        if self.enter_at is None:
            if last_output <= self.loaded_at and now - self.loaded_at < REDRAW_WAIT:
                return None  # the TUI has not drawn the loaded text yet
            if not self.submit:
                return DELIVERED
            if self.images:
                return self._paste_images(now, lines, quiet)
            return self._enter(now, "pressing Enter")
        if now - self.enter_at >= RETRY_AFTER and quiet >= RETRY_QUIET and self.enters < TRIES:
            return self._enter(now, "no UserPromptSubmit yet; pressing Enter again")
        if now - self.enter_at >= GRACE:
            raise self.fail(
                f"Claude Code did not submit the prompt within "
                f"{GRACE:g}s of Enter ({self.enters} presses)",
                lines(),
            )
        return None

    def _paste_images(self, now: float, lines: Lines, quiet: float) -> Optional[bytes]:
        """The text is in: one Ctrl+V per image, each once the TUI shows the one before
        ("[Image #N]" in the box), then Enter."""
        clipboard = self.clipboard
        if clipboard is None:
            raise self.fail(
                "this message has images, but claude-print's clipboard could not be set up "
                "(is there a ':' in the temp dir's path?)",
                lines(),
            )
        if self.pasted:
            screen = lines()
            if placeholders(screens.input_box_text(screen) or "") < self.pasted:
                if now - self.pasted_at >= GRACE:
                    read = (
                        "read it but did not take it (an image it cannot decode?)"
                        if clipboard.served()
                        else "never read it"
                    )
                    raise self.fail(
                        f"Claude Code did not take image {self.pasted} of {len(self.images)} "
                        f"from claude-print's clipboard within {GRACE:g}s: it {read}",
                        screen,
                    )
                # Not asked for yet, the TUI quiet: the key was lost. Pressed again only
                # then: a second Ctrl+V after a read would paste the image twice.
                if (
                    not clipboard.served()
                    and now - self.pasted_at >= RETRY_AFTER
                    and quiet >= RETRY_QUIET
                    and self.image_keys < TRIES
                ):
                    self.image_keys += 1
                    self.pasted_at = now
                    self.trace("the clipboard was not read; pressing Ctrl+V again")
                    return contract.KEY_IMAGE_PASTE
                return None
        if self.pasted < len(self.images):
            image = self.images[self.pasted]
            clipboard.stage(image)
            self.pasted += 1
            self.pasted_at = now
            self.image_keys = 1
            self.trace(
                f"pasting image {self.pasted} of {len(self.images)} "
                f"({image.media_type}, {len(image.data)} bytes) with Ctrl+V"
            )
            return contract.KEY_IMAGE_PASTE
        clipboard.clear()
        return self._enter(now, f"the TUI shows the {len(self.images)} image(s); pressing Enter")

    def editor_done(self, now: float) -> None:
        """The editor script has written the staged text into the box's file."""
        if self.clearing_at is not None:
            self.trace("the input box is cleared")
            self.clearing_at = None
            self.loading_at = None  # now the prompt itself
        elif self.loading_at is not None and self.loaded_at is None:
            self.trace("the editor script handed the prompt to the input box")
            self.loaded_at = now

    def submitted(self, sent: str) -> Optional[str]:
        """UserPromptSubmit's prompt: None when it is ours (the turn may go on), else why
        not (the hook must block it)."""
        problem = check_submitted(sent, self.prompt, self.method, self.facts, len(self.images))
        if problem is None:
            self.confirmed = True
            for note in normalisation_notes(self.prompt, self.method, self.facts):
                self.trace(f"normalised as documented: {note}")
        return problem

    def _load(self, now: float, lines: List[str], quiet: float) -> Optional[bytes]:
        # A prompt put back by an interrupt (Esc before the request went out) leaves the
        # box idle but not "ready": 2.1.197 draws no shortcuts footer under a box with
        # text in it. The editor key replaces the whole box, and a paste clears it first.
        kind = screens.classify(lines).kind
        put_back = (
            kind == "other" and screens.is_idle(lines) and bool(screens.input_box_text(lines))
        )
        if kind != "ready" and not put_back:
            if now - self.started >= GRACE:
                raise self.fail(
                    f"Claude Code's input box did not come back within {GRACE:g}s",
                    lines,
                )
            return None
        if self.method == "paste" and self.clearing_at is None:
            leftover = screens.input_box_text(lines)
            if leftover and screens.is_idle(lines):
                # An interrupted prompt put back: a paste would add to it. The editor
                # key replaces the whole box.
                self.trace(f"the input box holds {len(leftover)} chars from before; clearing it")
                self.stage("")
                self.clearing_at = now
                return contract.KEY_EXTERNAL_EDITOR
        if self.clearing_at is not None:
            if now - self.clearing_at >= GRACE:
                raise self.fail("could not clear Claude Code's input box", lines)
            return None
        self.loading_at = now
        self.loads = 1
        if self.method == "editor":
            self.stage(self.prompt)
            self.trace(f"input box ready; loading {len(self.prompt)} chars with Ctrl+G")
            return contract.KEY_EXTERNAL_EDITOR
        self.trace(f"input box ready; pasting {len(self.prompt)} chars")
        return paste_keys(self.prompt)

    def _reload(self, now: float, lines: Lines, quiet: float) -> Optional[bytes]:
        assert self.loading_at is not None
        if now - self.loading_at >= GRACE:
            raise self.fail(
                f"Claude Code did not run the editor for Ctrl+G within "
                f"{GRACE:g}s ({self.loads} tries)",
                lines(),
            )
        if quiet >= RETRY_AFTER and self.loads < TRIES:
            self.loads += 1
            self.trace("no word from the editor script; pressing Ctrl+G again")
            return contract.KEY_EXTERNAL_EDITOR
        return None

    def _enter(self, now: float, why: str) -> bytes:
        self.enter_at = now
        self.enters += 1
        self.trace(why)
        return contract.KEY_ENTER
