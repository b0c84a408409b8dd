"""Recognising startup screens, on real Claude Code 2.1.197 captures
(tests/data/screens/*.bin, 120x50) and on screens built from their lines."""

from __future__ import annotations

from typing import List

import pytest
from harness import TESTS

from claude_print import contract
from claude_print.tui import screens
from claude_print.tui.screens import ScreenState, classify, is_ready, next_key, parse_choices
from claude_print.tui.terminal import Screen

SCREENS = TESTS / "data" / "screens"
CARET = contract.CARET
RULE = contract.RULE_CHAR * 120
BYPASS_FOOTER = "  ⏵⏵ bypass permissions on (shift+tab to cycle) · ← for agents"


def capture(name: str, chunk: int = 0) -> List[str]:
    data = (SCREENS / name).read_bytes()
    screen = Screen(120, 50)
    step = chunk or len(data)
    for i in range(0, len(data), step):
        screen.feed(data[i : i + step])
    return screen.lines()


def footer_index(lines: List[str]) -> int:
    return next(i for i, line in enumerate(lines) if "? for shortcuts" in line)


# ------------------------------------------------------------------ trust


def test_trust_capture() -> None:
    state = classify(capture("trust.bin"))
    assert state.kind == "trust"
    assert state.choices == ["Yes, I trust this folder", "No, exit"]
    assert state.selected == 0  # 2.1.197 highlights Yes


@pytest.mark.parametrize("chunk", [1, 7, 64])
def test_trust_capture_fed_in_pieces(chunk: int) -> None:
    state = classify(capture("trust.bin", chunk))
    assert (state.kind, state.selected) == ("trust", 0)


def test_keys_for_yes_when_the_caret_is_on_yes() -> None:
    state = classify(capture("trust.bin"))
    assert next_key(state, contract.TRUST_ACCEPT) == contract.KEY_ENTER


def caret_moved_to_no(lines: List[str]) -> List[str]:
    """The same dialog with the caret on "No, exit", as 2.1.263 draws it."""
    out = []
    for line in lines:
        if "1. Yes, I trust this folder" in line:
            line = line.replace(CARET, " ")
        elif "2. No, exit" in line:
            line = line.replace("  2. No, exit", f"{CARET} 2. No, exit")
        out.append(line)
    return out


def test_keys_for_yes_when_the_caret_is_on_no() -> None:
    lines = caret_moved_to_no(capture("trust.bin"))
    assert f"{CARET} 2. No, exit" in "\n".join(lines)
    state = classify(lines)
    assert (state.kind, state.selected) == ("trust", 1)
    # One key, then the screen is read again: Enter only once the caret is on Yes.
    assert next_key(state, contract.TRUST_ACCEPT) == contract.KEY_UP


def test_keys_move_one_step_at_a_time() -> None:
    state = ScreenState("bypass", ["No, exit", "Maybe", "Yes, I accept"], 0)
    assert next_key(state, contract.BYPASS_ACCEPT) == contract.KEY_DOWN
    assert next_key(state._replace(selected=1), contract.BYPASS_ACCEPT) == contract.KEY_DOWN
    assert next_key(state._replace(selected=2), contract.BYPASS_ACCEPT) == contract.KEY_ENTER
    assert next_key(state._replace(selected=2), "No, exit") == contract.KEY_UP


def test_keys_none_without_caret_or_label() -> None:
    assert next_key(ScreenState("trust", ["Yes, I trust this folder"], None), "Yes") is None
    assert next_key(ScreenState("trust", ["No, exit"], 0), contract.TRUST_ACCEPT) is None


UNNUMBERED_TRUST = [
    "─" * 60,
    " Accessing workspace:",
    "",
    " /tmp/project",
    "",
    " Quick safety check: Is this a project you created or one you trust? (Like your own",
    " code, a well-known open source project, or work from your team).",
    "",
    " Security guide",
    "",
    f" {CARET} No, exit",
    "   Yes, I trust this folder",
    "",
    " Enter to confirm \u00b7 Esc to cancel",
]


def test_unnumbered_trust_dialog_as_2_1_248_draws_it() -> None:
    state = classify(UNNUMBERED_TRUST)
    assert state == ScreenState("trust", ["No, exit", "Yes, I trust this folder"], 0)
    assert next_key(state, contract.TRUST_ACCEPT) == contract.KEY_DOWN
    moved = [
        line.replace(f"{CARET} No", "  No").replace("  Yes", f"{CARET} Yes")
        for line in UNNUMBERED_TRUST
    ]
    assert classify(moved).selected == 1
    assert next_key(classify(moved), contract.TRUST_ACCEPT) == contract.KEY_ENTER


def test_unnumbered_list_skips_descriptions_and_stops_at_other_text() -> None:
    lines = [
        "  Pick one",
        f"  {CARET} First",
        "      what the first one does",
        "    Second",
        "  Not a choice",
    ]
    assert parse_choices(lines) == ScreenState("choice", ["First", "Second"], 0)


def test_unknown_unnumbered_dialog_is_a_choice() -> None:
    lines = ["", "  Something new?", "", f"  {CARET} Go on", "    Stop", ""]
    assert classify(lines) == ScreenState("choice", ["Go on", "Stop"], 0)


# ------------------------------------------------------------------ ready


def test_ready_capture() -> None:
    lines = capture("ready.bin")
    assert is_ready(lines)
    assert classify(lines).kind == "ready"
    assert screens.claude_version_on_screen(lines) == "2.1.197"


def test_ready_with_the_bypass_mode_footer() -> None:
    lines = capture("ready.bin")
    lines[footer_index(lines)] = BYPASS_FOOTER
    assert is_ready(lines)
    assert classify(lines).kind == "ready"


def test_ready_with_the_bypass_footer_drawn_like_ink() -> None:
    """The footer as bytes, words placed by cursor moves (no spaces), as Ink draws it."""
    data = (SCREENS / "ready.bin").read_bytes()
    old = "\x1b[37m?\x1b[5Gfor\x1b[9Gshortcuts\x1b[19G·\x1b[21G←\x1b[23Gfor\x1b[27Gagents"
    assert data.count(old.encode()) == 1
    new = (
        "\x1b[37m⏵⏵\x1b[6Gbypass\x1b[13Gpermissions\x1b[25Gon\x1b[28G(shift+tab"
        "\x1b[39Gto\x1b[42Gcycle)\x1b[49G·\x1b[51G←\x1b[53Gfor\x1b[57Gagents"
    )
    screen = Screen(120, 50)
    screen.feed(data.replace(old.encode(), new.encode()))
    lines = screen.lines()
    assert any(line.startswith(BYPASS_FOOTER) for line in lines)
    assert not any("? for shortcuts" in line for line in lines)
    assert classify(lines).kind == "ready"


@pytest.mark.parametrize(
    "footer",
    [
        "  ⏵⏵ accept edits on (shift+tab to cycle)",
        "  ⏸ plan mode on (shift+tab to cycle)",
        "  ⏵⏵ don't ask on (shift+tab to cycle)",
    ],
)
def test_ready_in_other_permission_modes(footer: str) -> None:
    lines = capture("ready.bin")
    lines[footer_index(lines)] = footer
    assert classify(lines).kind == "ready"


# Measured on 2.1.197 with a status line set (an empty command too): the default mode's
# footer is "← for agents" alone, the other modes keep theirs; 2.1.203 and later keep
# "? for shortcuts" (bisected).
STATUS_LINE_FOOTERS_2_1_197 = [
    "  ← for agents" + " " * 150 + "● high · /effort",
    "  ⏵⏵ accept edits on (shift+tab to cycle) · ← for agents",
    "  ⏸ plan mode on (shift+tab to cycle) · ← for agents",
]


@pytest.mark.parametrize("footer", STATUS_LINE_FOOTERS_2_1_197)
def test_ready_with_a_status_line_up_to_2_1_202(footer: str) -> None:
    lines = capture("ready.bin")
    lines[footer_index(lines)] = footer
    assert is_ready(lines)
    assert classify(lines).kind == "ready"


def test_for_agents_above_the_box_is_not_the_footer() -> None:
    """An answer that says "← for agents" above the input box makes nothing ready."""
    lines = capture("ready.bin")
    index = footer_index(lines)
    lines[index] = ""
    lines[2] = "  ← for agents"
    assert not is_ready(lines)


@pytest.mark.parametrize(
    "typed",
    ["? for shortcuts", "← for agents", "⏵⏵ accept edits on (shift+tab to cycle)"],
)
@pytest.mark.parametrize("where", ["caret line", "wrapped line"])
def test_footer_words_inside_the_input_box_are_not_the_footer(typed: str, where: str) -> None:
    """A prompt in the box that says the footer's words (on its caret line, or a line
    it wraps onto before the closing rule) makes nothing ready while a turn runs (the
    footer under the box says "esc to interrupt")."""
    lines = capture("ready.bin")
    footer = footer_index(lines)
    caret = lines.index(CARET)
    lines[footer] = "  esc to interrupt"
    if where == "caret line":
        lines[caret] = f"{CARET} {typed}"
    else:
        lines[caret] = f"{CARET} say this:"
        lines.insert(caret + 1, f"  {typed}")
    assert screens.input_box_text(lines) is not None  # the box is still drawn
    assert not is_ready(lines)
    assert classify(lines).kind != "ready"


def test_not_ready_without_a_footer() -> None:
    lines = capture("ready.bin")
    lines[footer_index(lines)] = "  esc to interrupt"
    assert not is_ready(lines)
    assert classify(lines).kind == "other"


def test_not_ready_without_the_input_box() -> None:
    lines = capture("ready.bin")
    caret = lines.index(CARET)
    assert not is_ready([*lines[: caret - 1], *lines[caret + 2 :]])  # box and rules gone
    no_rules = [line if line != RULE else "" for line in lines]
    assert not is_ready(no_rules)


def test_caret_in_a_menu_is_not_an_input_box() -> None:
    assert not is_ready(capture("trust.bin"))


def test_answer_then_exit_is_not_ready() -> None:
    lines = capture("answer_exit.bin")
    assert classify(lines).kind == "other"


def test_transient_footer_hint_is_not_ready() -> None:
    """scrolled.bin: the box is drawn, but the footer shows a hint ("paste again to
    expand"), not a mode line: nothing claude-print would type into."""
    lines = capture("scrolled.bin")
    assert CARET in lines
    assert not is_ready(lines)


# ------------------------------------------------------- other screens


def dialog(*body: str, choices: List[str], selected: int) -> List[str]:
    lines = [RULE, *body, ""]
    for n, label in enumerate(choices):
        lines.append(f"  {CARET if n == selected else ' '} {n + 1}. {label}")
    return [*lines, "", "  Enter to confirm · Esc to cancel"]


def test_api_key_screen() -> None:
    lines = dialog(
        "  Detected a custom API key in your environment",
        "  ANTHROPIC_API_KEY: sk-ant-...0123456789abcdefghij",
        "  Do you want to use this API key?",
        choices=["Yes", "No (recommended)"],
        selected=1,
    )
    state = classify(lines)
    assert (state.kind, state.choices, state.selected) == (
        "api_key",
        ["Yes", "No (recommended)"],
        1,
    )
    assert "api_key" in screens.BLOCKING_ADVICE


def test_bypass_screen() -> None:
    lines = dialog(
        "  WARNING: Claude Code running in Bypass Permissions mode",
        choices=["No, exit", "Yes, I accept"],
        selected=0,
    )
    state = classify(lines)
    assert (state.kind, state.selected) == ("bypass", 0)
    assert next_key(state, contract.BYPASS_ACCEPT) == contract.KEY_DOWN


def test_markers_match_across_wrapped_lines() -> None:
    lines = dialog(
        "  WARNING: Claude Code running in Bypass",
        "  Permissions mode",
        choices=["No, exit", "Yes, I accept"],
        selected=0,
    )
    assert classify(lines).kind == "bypass"


def test_offline_welcome_is_connectivity_not_onboarding() -> None:
    lines = [
        "Welcome to Claude Code v2.1.197",
        "." * 58,
        "",
        " Unable to connect to Anthropic services",
        "",
        " Failed to connect to api.anthropic.com: ENOTFOUND",
    ]
    assert classify(lines).kind == "connectivity"


def test_welcome_with_login_choices_needs_a_login() -> None:
    lines = [
        "Welcome to Claude Code v2.1.197",
        " Select login method:",
        f" {CARET} 1. Claude account with subscription",
        "   2. Anthropic Console account",
    ]
    assert classify(lines).kind == "login"


def test_bare_welcome_is_onboarding() -> None:
    assert classify(["Welcome to Claude Code v2.1.197", "", " Let's get started."]).kind == (
        "onboarding"
    )


def test_advice_has_no_final_period() -> None:
    """The runner appends ". Screen:" (or "."): the advice must not end with one."""
    for advice in screens.BLOCKING_ADVICE.values():
        assert not advice.endswith("."), advice


def test_unknown_dialog_is_a_choice() -> None:
    lines = dialog("  A brand-new dialog", choices=["Continue", "Something else"], selected=0)
    state = classify(lines)
    assert (state.kind, state.choices, state.selected) == (
        "choice",
        ["Continue", "Something else"],
        0,
    )


def test_numbered_text_without_caret_is_other() -> None:
    lines = ["● Steps:", "  1. do this", "  2. do that"]
    assert classify(lines).kind == "other"
    assert classify([]).kind == "other"


def test_parse_choices_takes_the_last_list() -> None:
    lines = [
        f"{CARET} 1. old first",
        "  2. old second",
        "",
        "  1. new first",
        f"{CARET} 2. new second",
        "  3. new third",
        "  5. not in sequence",
    ]
    state = parse_choices(lines)
    assert state.choices == ["new first", "new second", "new third"]
    assert state.selected == 1


def test_screen_excerpt() -> None:
    lines = ["", "  first  ", "x" * 300, "", *[f"line {n}" for n in range(30)]]
    excerpt = screens.screen_excerpt(lines).splitlines()
    assert len(excerpt) == 20
    assert excerpt[-1] == "  | line 29"
    excerpt = screens.screen_excerpt(lines, limit=40).splitlines()
    assert excerpt[0] == "  |   first"
    assert excerpt[1] == "  | " + "x" * 100


def test_version_on_screen() -> None:
    assert screens.claude_version_on_screen(["╭─── Claude Code v2.1.263 ───╮"]) == "2.1.263"
    assert screens.claude_version_on_screen(capture("trust.bin")) is None


@pytest.mark.parametrize("name", ["ready.bin", "cc-2.1.248-ready.bin", "cc-2.1.330-ready.bin"])
def test_a_banner_read_in_pieces_never_names_another_release(name: str) -> None:
    """The TUI's output fed a byte at a time, as reads can split it: the version is read
    whole or not yet (2.1.330's banner line ends with its number; every banner's "v2.1.3"
    once stood for 2.1.3 under load, and the run took that release's facts)."""
    data = (SCREENS / name).read_bytes()
    whole = screens.claude_version_on_screen(capture(name))
    assert whole is not None
    screen = Screen(120, 50)
    seen = set()
    for i in range(len(data)):
        screen.feed(data[i : i + 1])
        seen.add(screens.claude_version_on_screen(screen.lines()))
    assert seen == {None, whole}


# ------------------------------------------------------- the input box


def test_input_box_is_empty_when_ready() -> None:
    assert screens.input_box_text(capture("ready.bin")) == ""


@pytest.mark.parametrize(
    "box, footer, text",
    [
        # measured on 2.1.197: the footer changes with what the box holds
        ([CARET + "\u00a0hello world"], "", "hello world"),
        ([CARET + "\u00a0first line", "  second line"], "", "first line\n  second line"),
        (
            [CARET + "\u00a0[Pasted text #1 +2986 lines]"],
            "  paste again to expand",
            "[Pasted text #1 +2986 lines]",
        ),
    ],
    ids=["short", "multi-line", "placeholder"],
)
def test_input_box_shows_a_paste_whatever_the_footer(
    box: List[str], footer: str, text: str
) -> None:
    lines = capture("ready.bin")
    caret = lines.index(CARET)
    lines = [*lines[:caret], *box, *lines[caret + 1 :]]
    lines[footer_index(lines)] = footer
    assert screens.input_box_text(lines) == text
    # With text in the box the shortcuts footer is gone: not a screen to start a turn on.
    assert not is_ready(lines)


def test_the_input_box_is_the_lowest_one_drawn() -> None:
    """A box drawn higher up (an earlier frame's left in the scrollback, or an answer
    that draws a rule over a caret line) is not the input box: the box is the lowest
    caret line under a rule, and its footer is read under its own closing rule only."""
    lines = capture("ready.bin")
    caret = lines.index(CARET)
    earlier = [RULE, f"{CARET} an old prompt", RULE, "  ⏵⏵ accept edits on (shift+tab to cycle)"]
    lines = [*lines[: caret - 1], *earlier, "", *lines[caret - 1 :]]
    assert lines.index(f"{CARET} an old prompt") < lines.index(CARET)
    assert screens.input_box_text(lines) == ""
    footer = screens.footer_lines(lines)
    assert any("? for shortcuts" in line for line in footer)
    assert not any("accept edits" in line or CARET in line for line in footer)
    assert classify(lines).kind == "ready"
    # The other side: the same earlier box with text in the lowest one reads that text.
    lines[lines.index(CARET)] = f"{CARET}\u00a0new words"
    assert screens.input_box_text(lines) == "new words"


def test_no_input_box_on_a_menu_or_without_rules() -> None:
    assert screens.input_box_text(capture("trust.bin")) is None
    lines = capture("ready.bin")
    assert screens.input_box_text([line if line != RULE else "" for line in lines]) is None


# 2.1.330's dialog for --add-dir with a directory it has not seen (2.1.197 and 2.1.270
# add it without asking, as claude -p does).
ADD_DIR_DIALOG = [
    "\u2500" * 90,
    " Adding a new directory:",
    " /tmp/sb/extra",
    " This session hasn't worked here before. Is this a directory you created or one you trust?",
    " Security guide",
    f" {CARET} No, exit",
    "   Yes, add it",
    " Enter to confirm \u00b7 Esc to cancel",
]


def test_add_dir_dialog_is_answered_yes() -> None:
    from claude_print.errors import ClaudePrintError
    from claude_print.tui.boot import StartupScreens

    def fail(what: str, lines: List[str]) -> ClaudePrintError:
        return ClaudePrintError(what)

    boot = StartupScreens(False, fail, lambda _: None)
    assert classify(ADD_DIR_DIALOG).kind == "add_dir_trust"
    assert boot.step(ADD_DIR_DIALOG, 10.0, 9.0, 9.0) == contract.KEY_DOWN
    moved = [
        line.replace(f"{CARET} No", "  No").replace("  Yes", f"{CARET} Yes")
        for line in ADD_DIR_DIALOG
    ]
    assert boot.step(moved, 11.0, 10.0, 10.0) == contract.KEY_ENTER
    # Drawn before its caret (seen on 2.1.330): no key and no error until the caret shows.
    fresh = StartupScreens(False, fail, lambda _: None)
    no_caret = [line.replace(CARET, " ") for line in ADD_DIR_DIALOG]
    assert fresh.step(no_caret, 10.0, 9.0, 9.0) is None
    assert fresh.step(ADD_DIR_DIALOG, 10.5, 10.4, 9.0) == contract.KEY_DOWN
    with pytest.raises(ClaudePrintError, match="cannot find 'Yes, add it'"):
        for now in (20.0, 25.0):
            fresh.step(no_caret, now, 19.0, 19.0)


# A pool keeper's screen on 2.1.270 under load (its `.failed` file; the first line cut at
# 100 columns there): an earlier TUI in the same HOME was killed within 10 s of its first
# frame, so this one fell back to the classic renderer and offered the fullscreen one.
RENDERER_UPSELL = [
    "Claude Code's fullscreen renderer didn't finish starting last time on this machine, "
    "so this launch i",
    "ic renderer.",
    " ▐▛███▜▌   Claude Code v2.1.270",
    "▝▜█████▛▘  Opus 5 (1M context) · API Usage Billing",
    "  ▘▘ ▝▝    /tmp/pytest-of-root/pytest-466/test_runs_that_start_together_0/project",
    "\u2500" * 120,
    "  Try the new fullscreen renderer?",
    "  · Flicker-free output — fixes the flashing you see during long responses",
    "  · Mouse support — click to move your cursor or expand results",
    "  · Selected text auto-copies to your clipboard",
    f"  {CARET} 1. Yes, try it",
    "    2. Not now",
    "  Enter to confirm · Esc to cancel",
]


def test_fullscreen_renderer_offer_is_declined() -> None:
    from claude_print.errors import ClaudePrintError
    from claude_print.tui.boot import StartupScreens

    def fail(what: str, lines: List[str]) -> ClaudePrintError:
        return ClaudePrintError(what)

    boot = StartupScreens(False, fail, lambda _: None)
    state = classify(RENDERER_UPSELL)
    assert (state.kind, state.choices, state.selected) == (
        "renderer_upsell",
        ["Yes, try it", "Not now"],
        0,
    )
    # Still for longer than an unknown screen may stay: a key, never a failure; and never
    # Enter on "Yes, try it" (a restart into the other renderer, `tui` in the settings).
    assert boot.step(RENDERER_UPSELL, 10.0, 5.0, 5.0) == contract.KEY_DOWN
    moved = [
        line.replace(f"{CARET} 1.", "  1.").replace("  2. Not", f"{CARET} 2. Not")
        for line in RENDERER_UPSELL
    ]
    assert boot.step(moved, 11.0, 10.0, 10.0) == contract.KEY_ENTER
    # The tip in the REPL's footer area names the renderer too: that is no dialog.
    tip = "  ✻ Tip: Try the new fullscreen renderer — flicker-free output · /tui fullscreen"
    assert classify([*capture("ready.bin"), tip]).kind == "ready"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "ANTHROPIC_API_KEY: sk-ant-...0123456789abcdefghij",
            "ANTHROPIC_API_KEY: sk-ant-...[redacted]",
        ),
        ("token sk-ant-fake-key-0123456789abcdefghij end", "token [redacted] end"),
        ("short pieces 0123456 stay", "short pieces 0123456 stay"),
        ("unrelated words-that-are-long stay", "unrelated words-that-are-long stay"),
    ],
)
def test_secrets_never_show_in_a_screen_excerpt(text: str, shown: str) -> None:
    secrets = ["sk-ant-fake-key-0123456789abcdefghij", "", "short"]
    assert screens.screen_excerpt([text], secrets=secrets) == "  | " + shown


# 2.1.332, its TUI stopped for 0.4 s around the trust dialog while 8 runs shared a HOME
# (measured with SIGSTOP; the same screens under load in CI): after our Enter on "Yes",
# the dialog's top rows stay drawn, "No, exit" is left with no caret, and nothing is
# drawn for seconds while another run renews the login.
TRUST_TOP = [
    "\u2500" * 100,
    " Accessing workspace:",
    " /tmp/sb/project",
    " Quick safety check: Is this a project you created or one you trust? (Like your own "
    "code, a well-kno",
    " folder first.",
    " Claude Code'll be able to read, edit, and execute files here.",
    " Security guide",
]
TRUST_GOING = [*TRUST_TOP, "   No, exit"]
TRUST_ON_YES = [
    *TRUST_TOP,
    "   No, exit",
    f" {CARET} Yes, I trust this folder",
    " Enter to confirm \u00b7 Esc to cancel",
]
# ...and once the REPL is up, those top rows are still above its banner and input box.
TRUST_LEFT_ABOVE_THE_BOX = [
    *TRUST_TOP,
    " \u2590\u259b\u2588\u2588\u2588\u259b\u2588   Claude Code v2.1.332",
    "\u259d\u259c\u2588\u2588\u2588\u2588\u2588\u2588\u2580  Opus 5.5 \u00b7 Claude Max",
    " \u259d\u259d   \u259d\u259d   /tmp/sb/project",
    f"{CARET} What is 2+2?",
    "\u25cf Bloviating\u2026",
    "\u2500" * 100,
    f"{CARET} ",
    "\u2500" * 100,
    "  \u23f8 manual mode on",
]


def test_a_dialog_going_away_after_our_enter_is_waited_for() -> None:
    from claude_print.errors import ClaudePrintError
    from claude_print.tui.boot import StartupScreens

    def fail(what: str, lines: List[str]) -> ClaudePrintError:
        return ClaudePrintError(what)

    boot = StartupScreens(False, fail, lambda _: None)
    assert boot.step(TRUST_ON_YES, 10.0, 9.0, 9.0) == contract.KEY_ENTER
    for now in (11.0, 15.0, 40.0):  # silent for half a minute: still no key, no failure
        assert boot.step(TRUST_GOING, now, 10.5, 10.5) is None
    # Never answered, the same half-drawn dialog is one we misread: a clear failure.
    fresh = StartupScreens(False, fail, lambda _: None)
    with pytest.raises(ClaudePrintError, match="cannot find 'Yes, I trust this folder'"):
        for now in (20.0, 25.0):
            fresh.step(TRUST_GOING, now, 19.0, 19.0)


def test_dialog_rows_left_above_the_input_box_are_no_dialog() -> None:
    assert classify(TRUST_LEFT_ABOVE_THE_BOX).kind == "ready"
    # The box above a dialog (a dialog drawn under the REPL) is still that dialog.
    assert classify([*TRUST_LEFT_ABOVE_THE_BOX[7:], *TRUST_ON_YES]).kind == "trust"


TRUST_ON_NO = [*TRUST_TOP, f" {CARET} No, exit", "   Yes, I trust this folder", TRUST_ON_YES[-1]]


def test_an_arrow_is_pressed_again_only_when_lost_and_enter_waits_for_a_late_one() -> None:
    """2.1.332's lists wrap: a Down the starved TUI reads late, after a second one went
    in, takes the caret to "Yes" and back to "No, exit"; an Enter sent on the frame in
    between exits Claude Code (CI under load)."""
    from claude_print.errors import ClaudePrintError
    from claude_print.tui.boot import StartupScreens

    def fail(what: str, lines: List[str]) -> ClaudePrintError:
        return ClaudePrintError(what)

    boot = StartupScreens(False, fail, lambda _: None)
    assert boot.step(TRUST_ON_NO, 10.0, 9.0, 9.0) == contract.KEY_DOWN
    for now in (10.4, 11.0, 11.9):  # not moved yet: late, not lost
        assert boot.step(TRUST_ON_NO, now, 9.0, 10.0) is None
    assert boot.step(TRUST_ON_NO, 12.1, 9.0, 10.0) == contract.KEY_DOWN  # lost: again
    # The caret on "Yes": one of the two Downs has landed; the other may still come.
    assert boot.step(TRUST_ON_YES, 12.5, 12.2, 12.2) is None
    assert boot.step(TRUST_ON_YES, 13.1, 12.2, 12.2) is None
    assert boot.step(TRUST_ON_YES, 13.3, 12.2, 12.2) == contract.KEY_ENTER
    # One Down that landed at once: Enter after the dialog's usual quiet, no hold.
    once = StartupScreens(False, fail, lambda _: None)
    assert once.step(TRUST_ON_NO, 10.0, 9.0, 9.0) == contract.KEY_DOWN
    assert once.step(TRUST_ON_YES, 10.5, 10.1, 10.1) == contract.KEY_ENTER
