"""The delivery phase on its own: recorded screens and events in, keys and outcomes out
(no PTY, no Claude Code). How each release's input box changes a prompt, written out
from measurements on the real binaries (2.1.197, 2.1.270, 2.1.276/2.1.277, 2.1.331)."""

from __future__ import annotations

from typing import List, Optional, Tuple, Union

import pytest
from harness import TESTS

from claude_print import contract
from claude_print.errors import ClaudePrintError
from claude_print.tui import delivery
from claude_print.tui.delivery import DELIVERED, Delivery, check_submitted, paste_refusal
from claude_print.tui.images import Image
from claude_print.tui.keys import Timed
from claude_print.tui.terminal import Screen

SCREENS = TESTS / "data" / "screens"
OLD = contract.facts_for("2.1.197")
KEEPS = contract.facts_for("2.1.276")
SANITIZES = contract.facts_for("2.1.277")
NEW = contract.facts_for("2.1.331")


def capture(name: str) -> List[str]:
    screen = Screen(contract.WINDOW_COLS, contract.WINDOW_ROWS)  # as recorded
    screen.feed((SCREENS / name).read_bytes())
    return screen.lines()


READY = capture("cc-2.1.330-ready.bin")
TRUST = capture("cc-2.1.330-trust.bin")


def fail(what: str, lines: List[str]) -> ClaudePrintError:
    return ClaudePrintError(what)


class Rig:
    """A Delivery with a clock, a screen, and a log of what it staged and traced."""

    def __init__(
        self, prompt: str, method: str, facts: contract.Facts = NEW, submit: bool = True
    ) -> None:
        self.staged: List[str] = []
        self.traces: List[str] = []
        self.lines = READY
        self.now = 100.0
        self.last_output = 100.0
        self.last_key = 100.0
        self.d = Delivery(
            prompt,
            method,
            facts,
            self.staged.append,
            fail,
            self.traces.append,
            self.now,
            submit=submit,
        )

    def step(self, after: float = 0.0) -> Optional[Union[bytes, str]]:
        self.now += after
        out = self.d.step(self.now, lambda: self.lines, self.last_output, self.last_key)
        if isinstance(out, bytes):
            self.last_key = self.now
        return out

    def output(self, after: float = 0.01) -> None:
        self.now += after
        self.last_output = self.now


def test_editor_delivery_is_driven_by_events() -> None:
    rig = Rig("x\n" * 300, "editor")  # taller than the window: the box is never read back
    assert rig.step() == contract.KEY_EXTERNAL_EDITOR
    assert rig.staged == ["x\n" * 300]
    assert rig.step(0.5) is None  # no word from the editor script yet
    rig.d.editor_done(rig.now)
    assert rig.step() is None  # the TUI has not drawn the loaded text
    rig.output()
    assert rig.step() == contract.KEY_ENTER
    assert rig.step(0.1) is None
    assert rig.d.submitted("x\n" * 299 + "x") is None  # trailing newline trimmed: documented
    assert rig.step() == DELIVERED
    assert any("trims" in t for t in rig.traces)


def test_a_dry_run_loads_the_text_and_never_presses_enter() -> None:
    """A warm keeper runs the editor once with nothing in it before its first prompt."""
    rig = Rig("", "editor", submit=False)
    assert rig.step() == contract.KEY_EXTERNAL_EDITOR
    assert rig.staged == [""]
    assert rig.step(0.5) is None  # no word from the editor script yet
    rig.d.editor_done(rig.now)
    assert rig.step() is None  # the TUI has not drawn the loaded text
    rig.output()
    assert rig.step() == DELIVERED
    assert rig.step(delivery.RETRY_AFTER + 1) == DELIVERED  # and no Enter, ever
    assert rig.d.enters == 0


def test_a_dry_run_paste_stops_once_drawn() -> None:
    rig = Rig("x", "paste", submit=False)
    assert rig.step() == delivery.paste_keys("x")
    assert rig.step(0.01) is None  # not drawn yet
    rig.output()
    assert rig.step() == DELIVERED
    assert rig.d.enters == 0


def test_a_dry_run_whose_ctrl_g_is_lost_presses_it_again() -> None:
    rig = Rig("", "editor", submit=False)
    assert rig.step() == contract.KEY_EXTERNAL_EDITOR
    assert rig.step(delivery.RETRY_AFTER) == contract.KEY_EXTERNAL_EDITOR


def test_a_changed_prompt_is_refused_with_what_differs() -> None:
    rig = Rig("first half|second half", "editor")
    rig.step()
    rig.d.editor_done(rig.now)
    rig.output()
    rig.step()
    problem = rig.d.submitted("first half|")
    assert problem is not None and "first difference at character 11" in problem
    assert rig.step() is None  # not delivered


def test_a_lost_ctrl_g_is_pressed_again_then_fails() -> None:
    rig = Rig("hi", "editor")
    assert rig.step() == contract.KEY_EXTERNAL_EDITOR
    assert rig.step(delivery.RETRY_AFTER - 0.1) is None
    assert rig.step(0.2) == contract.KEY_EXTERNAL_EDITOR
    presses = 2
    with pytest.raises(ClaudePrintError, match="did not run the editor"):
        while True:
            if rig.step(delivery.RETRY_AFTER + 0.1) == contract.KEY_EXTERNAL_EDITOR:
                presses += 1
    assert presses == delivery.TRIES


def test_a_lost_enter_is_pressed_again_only_while_the_tui_is_quiet() -> None:
    rig = Rig("hi", "paste")
    assert rig.step() == delivery.paste_keys("hi")
    assert rig.step() is None  # not drawn yet
    rig.output()
    assert rig.step() == contract.KEY_ENTER
    rig.output(delivery.RETRY_AFTER + 0.1)  # busy drawing: no second Enter
    assert rig.step() is None
    assert rig.step(delivery.RETRY_QUIET) == contract.KEY_ENTER
    assert rig.d.enters == 2
    with pytest.raises(ClaudePrintError, match="did not submit the prompt"):
        for _ in range(100):
            rig.step(delivery.RETRY_AFTER + 0.1)
    assert rig.d.enters == delivery.TRIES


def test_enter_follows_a_drawn_paste_at_once_and_the_editor_after_the_quiet_gap() -> None:
    rig = Rig("hi", "paste")
    rig.step()
    rig.output()
    enter = rig.step()
    assert enter == contract.KEY_ENTER and isinstance(enter, Timed)  # no quiet gap
    rig = Rig("hi", "paste")
    rig.step()
    enter = rig.step(delivery.REDRAW_WAIT)  # never drawn: given time, then the usual way
    assert enter == contract.KEY_ENTER and not isinstance(enter, Timed)
    rig = Rig("hi", "editor")
    rig.step()
    rig.d.editor_done(rig.now)
    rig.output()
    enter = rig.step()  # the TUI loads the file after the redraw it starts with
    assert enter == contract.KEY_ENTER and not isinstance(enter, Timed)


def test_the_box_must_come_back_before_anything_is_sent() -> None:
    rig = Rig("hi", "editor")
    rig.lines = TRUST
    assert rig.step() is None
    with pytest.raises(ClaudePrintError, match="input box did not come back"):
        rig.step(delivery.GRACE)
    assert rig.staged == []


def test_a_paste_into_a_box_holding_old_text_clears_it_first() -> None:
    rig = Rig("new", "paste")
    rig.lines = [
        line.replace(contract.CARET, contract.CARET + " old prompt", 1)
        if line.lstrip().startswith(contract.CARET)
        else line
        for line in rig.lines
    ]
    assert rig.step() == contract.KEY_EXTERNAL_EDITOR
    assert rig.staged == [""]
    rig.d.editor_done(rig.now)
    rig.lines = READY
    assert rig.step() == delivery.paste_keys("new")


# ------------------------------------------------------------- normalisation


NORMALISED: List[Tuple[str, str, contract.Facts, List[str]]] = [
    # (prompt, method, release, the forms the model may get) -- measured
    ("a\rb\x01c\x1bd \n\n", "argv", KEEPS, ["a\rb\x01c\x1bd \n\n"]),
    ("a\rb\x01c\x1bd ", "argv", SANITIZES, ["a\nbcd "]),
    ("x \t\n\n", "editor", OLD, ["x"]),
    ("x\x1b[31mred\x1b[0m\x01\n", "editor", OLD, ["x\x1b[31mred\x1b[0m\x01"]),
    ("x\x1b[31mred\x1b[0m\x01\n", "editor", NEW, ["x[31mred[0m"]),
    ("a\vb\fc\rd\x85e\u2028f\ufeff", "editor", NEW, ["a\nb\nc\nd\ne\nf"]),
    ("a\r\nb\r\n\r\nc\r\n", "editor", NEW, ["a\nb\n\nc", "a\r\nb\r\n\r\nc"]),
    ("\u00a0x\u00a0\u3000", "editor", OLD, ["\u00a0x"]),  # JavaScript's trimEnd, not rstrip
    ("x\x1c", "editor", OLD, ["x\x1c"]),  # Python's rstrip() would take it
    ("t\ta\r\nb \n", "paste", OLD, ["t    a\nb \n"]),  # a paste trims nothing
    ("e\u0301 x", "editor", OLD, ["\u00e9 x"]),  # NFC up to 2.1.269
    ("e\u0301 x", "editor", contract.facts_for("2.1.270"), ["e\u0301 x"]),
    ("e\u0301 x", "argv", OLD, ["e\u0301 x"]),
]


@pytest.mark.parametrize(("prompt", "method", "facts", "forms"), NORMALISED)
def test_sent_forms(prompt: str, method: str, facts: contract.Facts, forms: List[str]) -> None:
    assert delivery.sent_forms(prompt, method, facts) == forms


@pytest.mark.parametrize("code", [c for c in range(0x20) if c not in (9, 10)] + [0x7F, 0x9B])
def test_every_control_character_is_dropped_from_2_1_277(code: int) -> None:
    prompt = f"a{chr(code)}b"
    expected = "a\nb" if chr(code) in "\v\f\r" else "ab"
    assert check_submitted(expected, prompt, "editor", SANITIZES) is None
    assert check_submitted(prompt, prompt, "editor", KEEPS) is None
    assert check_submitted("ab", prompt, "editor", KEEPS) is not None


def test_a_wrapped_paste_is_its_text() -> None:
    text = "line\n" * 5
    sent = f'\n\n<pasted_content id="40d0">\n{text}\n</pasted_content id="40d0">\n'
    assert check_submitted(sent, text, "paste", NEW) is None
    assert check_submitted(sent.replace("line", "lime", 1), text, "paste", NEW) is not None
    assert check_submitted(sent, text, "paste", OLD) is not None  # 2.1.197 does not wrap


@pytest.mark.parametrize(
    "prompt",
    [
        "a\x1b[201~b",
        "a\x1b[200~b",
        "mode \x1b[Z switch",
        "\x1b]0;title\x07",
        "csi \x9b2J",
        "!ls",
        "only \x1b",
    ],
)
def test_text_that_would_act_as_keys_is_never_pasted(prompt: str) -> None:
    assert paste_refusal(prompt) is not None


@pytest.mark.parametrize("prompt", ["# note", "& bg", "/help", "@file", "a\rb", "tab\there", " !x"])
def test_plain_text_is_pasted(prompt: str) -> None:
    assert paste_refusal(prompt) is None


def test_the_asking_hook_blocks_a_changed_prompt_before_any_request() -> None:
    from claude_print.hooks.relay import HookEvent
    from claude_print.records.summary import TurnSummary
    from claude_print.turns.asking import AskingHooks
    from claude_print.turns.turn import Turn

    answers: List[Tuple[str, object]] = []
    asks = AskingHooks(lambda e, d: answers.append((e.name, d)), print)
    rig = Rig("the whole prompt", "editor")
    turn = Turn("the whole prompt", "editor", 0.0)
    submit = contract.HOOK_USER_PROMPT_SUBMIT
    asks.add(HookEvent(submit, {"prompt": "the whole"}, reply="/nonexistent"), 0.0)
    with pytest.raises(ClaudePrintError, match="the prompt was not sent"):
        asks.serve(0.0, turn, TurnSummary(), rig.d)
    [(name, decision)] = answers
    assert name == submit and isinstance(decision, dict) and decision["decision"] == "block"
    answers.clear()
    asks.waiting = [(HookEvent(submit, {"prompt": "the whole prompt"}, reply="/x"), 0.0)]
    asks.serve(0.0, turn, TurnSummary(), rig.d)
    assert answers == [(submit, None)] and rig.d.confirmed


# --- images (stream-json input): one Ctrl+V each after the text, then Enter ------------


class FakeClipboard:
    """images.Clipboard's part the delivery uses: what is staged, and whether it was read."""

    def __init__(self) -> None:
        self.staged: List[Image] = []
        self.read = False

    def stage(self, image: Image) -> None:
        self.staged.append(image)
        self.read = False

    def served(self) -> bool:
        return self.read

    def clear(self) -> None:
        self.staged.append(Image("cleared", b""))


def box(text: str) -> List[str]:
    """The ready screen with `text` in the input box (its caret line is line 47)."""
    lines = list(READY)
    lines[47] = contract.CARET + " " + text
    return lines


PNG = Image("image/png", b"\x89PNG\r\n\x1a\n1")
GIF = Image("image/gif", b"GIF89a2")


def image_rig(method: str, clipboard: FakeClipboard) -> Rig:
    rig = Rig("look", method)
    rig.d = Delivery(
        "look",
        method,
        NEW,
        rig.staged.append,
        fail,
        rig.traces.append,
        rig.now,
        [PNG, GIF],
        clipboard,  # type: ignore[arg-type]
    )
    return rig


@pytest.mark.parametrize("method", ["editor", "paste"])
def test_images_are_pasted_after_the_text_each_once_the_one_before_shows(method: str) -> None:
    clipboard = FakeClipboard()
    rig = image_rig(method, clipboard)
    first = rig.step()
    if method == "editor":
        assert first == contract.KEY_EXTERNAL_EDITOR
        rig.d.editor_done(rig.now)
    else:
        assert first == delivery.paste_keys("look")
    rig.output()
    rig.lines = box("look")
    if method == "paste":
        assert rig.step() is None  # the paste is drawn: taken, and the box drawn again
        rig.output()
    assert rig.step(0.01) == contract.KEY_IMAGE_PASTE
    assert clipboard.staged == [PNG]
    clipboard.read = True
    assert rig.step(0.5) is None  # read, but not in the box yet: no key
    rig.lines = box("look[Image #1]")
    assert rig.step(0.01) == contract.KEY_IMAGE_PASTE
    assert clipboard.staged == [PNG, GIF]
    rig.lines = box("look[Image #1] [Image")  # the mark wraps: still one
    assert rig.step(0.5) is None
    rig.lines = box("look[Image #1] [Image #2]")
    assert rig.step(0.01) == contract.KEY_ENTER
    assert clipboard.staged[-1].media_type == "cleared"  # nothing left to hand out
    assert rig.d.submitted("look[Image #1] [Image #2] ") is None
    assert rig.step() == DELIVERED


def test_a_lost_ctrl_v_is_pressed_again_only_if_the_clipboard_was_never_read() -> None:
    clipboard = FakeClipboard()
    rig = image_rig("editor", clipboard)
    rig.step()
    rig.d.editor_done(rig.now)
    rig.output()
    rig.lines = box("look")
    assert rig.step() == contract.KEY_IMAGE_PASTE
    assert rig.step(delivery.RETRY_AFTER) == contract.KEY_IMAGE_PASTE  # never read: lost
    assert clipboard.staged == [PNG]  # the same image, not staged again
    clipboard.read = True
    assert rig.step(delivery.RETRY_AFTER) is None  # read: a second paste would double it
    with pytest.raises(ClaudePrintError, match=r"did not take image 1 of 2 .*: it read it but"):
        rig.step(delivery.GRACE)


def test_images_without_claude_print_s_clipboard_are_refused_before_any_ctrl_v() -> None:
    """No clipboard (a ':' in the temp dir's path, test_launch_settings): Ctrl+V would
    give the TUI whatever the user's own clipboard tool hands out. The message is refused
    once its text is in, and no Ctrl+V is pressed."""
    rig = image_rig("editor", None)  # type: ignore[arg-type]
    keys = [rig.step()]
    rig.d.editor_done(rig.now)
    rig.output()
    rig.lines = box("look")
    with pytest.raises(ClaudePrintError, match="clipboard could not be set up"):
        for _ in range(5):
            keys.append(rig.step(0.5))
    assert contract.KEY_IMAGE_PASTE not in keys and contract.KEY_ENTER not in keys


def test_a_missing_image_blocks_the_submit() -> None:
    rig = image_rig("editor", FakeClipboard())
    problem = rig.d.submitted("look[Image #1]")
    assert problem is not None and "1 image(s) where 2 were given" in problem
    assert not rig.d.confirmed


# 2.1.197 after an interrupt whose Esc came before the request went out (TypeScript SDK
# case `interrupt`, measured under load): the prompt is back in the box and no
# shortcuts footer is drawn under a box with text in it (the screen's last rows).
PUT_BACK_197 = [
    "│      Opus 4.8 (1M context) · API Usage Billing     │",
    "╰" + "─" * 79,
    "─" * 80,
    contract.CARET + " [[sleep:30]] slow",
    "─" * 80,
    "",
]


@pytest.mark.parametrize("method", ["editor", "paste"])
def test_a_prompt_put_back_by_an_interrupt_does_not_hold_the_next(method: str) -> None:
    rig = Rig("after", method, contract.facts_for("2.1.197"))
    rig.lines = PUT_BACK_197
    assert rig.step() == contract.KEY_EXTERNAL_EDITOR  # the editor key replaces the box
    if method == "paste":
        assert rig.staged == [""], "cleared before the paste"
        assert any("holds 17 chars from before" in t for t in rig.traces)


def test_a_busy_box_or_a_dialog_is_not_a_put_back_prompt() -> None:
    rig = Rig("after", "editor", contract.facts_for("2.1.197"))
    rig.lines = [*PUT_BACK_197[:-1], "  ✻ Thinking… (esc to interrupt)"]
    assert rig.step() is None
    rig.lines = TRUST  # a caret list of choices, which could pass for a box with text
    assert rig.step() is None
