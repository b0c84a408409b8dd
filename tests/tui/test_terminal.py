"""Screen model: real Claude Code 2.1.197 captures, then one test per feature."""

from __future__ import annotations

import random
from typing import List, Optional, Tuple

import pytest
from harness import TESTS

from claude_print.tui.terminal import Screen

SCREENS = TESTS / "data" / "screens"
FIXTURES = ["trust.bin", "ready.bin", "answer_exit.bin", "scrolled.bin"]
RULE = "─" * 120
CARET = "\u276f"  # the caret of menus and of the input box


def render(data: bytes, chunk: Optional[int] = None, cols: int = 120, rows: int = 50) -> Screen:
    screen = Screen(cols, rows)
    step = chunk or max(len(data), 1)
    for i in range(0, len(data), step):
        screen.feed(data[i : i + step])
    return screen


def state(screen: Screen) -> Tuple[List[str], Tuple[int, int], str]:
    return screen.lines(), screen.cursor, screen.title


def fixture(name: str) -> bytes:
    return (SCREENS / name).read_bytes()


# --------------------------------------------------------- real captures


def test_fixtures_stay_small() -> None:
    for name in FIXTURES:
        assert len(fixture(name)) < 20_000


def test_trust_screen() -> None:
    screen = render(fixture("trust.bin"))
    lines = screen.lines()
    text = screen.text()
    assert "Quick safety check: Is this a project you created or one you trust?" in text
    carets = [line.strip() for line in lines if CARET in line]
    assert carets == [f"{CARET} 1. Yes, I trust this folder"]
    assert "   2. No, exit" in lines
    assert " Enter to confirm · Esc to cancel" in lines
    assert lines[1] == RULE
    assert screen.cursor == (13, 1)


def test_ready_screen() -> None:
    screen = render(fixture("ready.bin"))
    lines = screen.lines()
    caret = lines.index(CARET)  # the caret, NBSP, and a reverse-video cursor cell
    assert lines[caret - 1] == RULE
    assert lines[caret + 1] == RULE
    footer = lines[caret + 2]
    # Ink moves the cursor between words: the spaces exist only on the screen.
    assert footer.startswith("  ? for shortcuts · ← for agents ")
    assert footer.split("·")[0].strip() == "? for shortcuts"
    assert footer.endswith("● high · /effort")
    assert lines[0].startswith("╭─── Claude Code v2.1.197 ───")
    assert lines[0].endswith("╮")
    assert lines[2] == "│" + " " * 17 + "Welcome back!" + " " * 17 + "│" + (
        " Ask Claude to create a new app or clone a repository │"
    )
    assert screen.cursor == (caret, 2)
    assert screen.title == "✳ Claude Code"


def test_answer_then_exit_screen() -> None:
    screen = render(fixture("answer_exit.bin"))
    lines = screen.lines()
    assert f"{CARET} Say hi [[reply:Hello there 你好 wide 🤖 ok]]" in lines
    assert "● Hello there 你好 wide 🤖 ok" in lines
    assert "/exit                         Exit the CLI" in lines
    assert lines[-3:] == [
        "Resume this session with:",
        "claude --resume 293ef706-0f7d-4682-9f11-268542ad0eca",
        "",
    ]
    # The exit sequence clears the title and pops the kitty keyboard mode
    # with ESC[<u, which must not print a stray "u".
    assert screen.title == ""
    assert "u" not in lines
    assert screen.cursor == (49, 0)


def test_scrolled_screen_drops_the_top() -> None:
    screen = render(fixture("scrolled.bin"))
    lines = screen.lines()
    assert lines[0] == "  row 03 of the answer"
    assert lines[41] == "  row 44 of the answer"
    assert not any("Welcome back!" in line for line in lines)
    assert lines[46] == CARET
    assert lines[48].startswith("  paste again to expand ")
    assert screen.title == "✳ Fake title"


@pytest.mark.parametrize("name", FIXTURES)
def test_split_feeds_match_whole_feed(name: str) -> None:
    data = fixture(name)
    whole = state(render(data))
    assert state(render(data, chunk=1)) == whole
    assert state(render(data, chunk=7)) == whole
    rng = random.Random(name)
    screen = Screen()
    i = 0
    while i < len(data):
        n = rng.randint(1, 300)
        screen.feed(data[i : i + n])
        i += n
    assert state(screen) == whole


# ------------------------------------------------------------ text, controls


def test_text_cr_lf_backspace_tab() -> None:
    screen = render(b"hello\r\nworld\rW\nx\bY\tZ", cols=20, rows=4)
    # A bare \n keeps the column, as with a terminal whose ONLCR is off.
    assert screen.lines() == ["hello", "World", " Y      Z", ""]
    assert screen.cursor == (2, 9)


def test_tab_stops_at_last_column() -> None:
    screen = render(b"\t\t\tx", cols=10, rows=2)
    assert screen.lines()[0] == " " * 9 + "x"


def test_text_joins_without_trailing_blank_rows() -> None:
    screen = render(b"a\r\n\r\nb\r\n\r\n", cols=10, rows=6)
    assert screen.text() == "a\n\nb"
    assert render(b"").text() == ""


def test_nbsp_reads_as_space() -> None:
    screen = render(f"{CARET}\xa0go\xa0".encode())
    assert screen.lines()[0] == f"{CARET} go"


def test_pending_wrap_at_last_column() -> None:
    # A full-width rule then \r\n must not leave an empty line (Ink relies on it).
    screen = render(b"abcde\r\nxy", cols=5, rows=3)
    assert screen.lines() == ["abcde", "xy", ""]
    screen = render(b"abcdefg", cols=5, rows=3)
    assert screen.lines() == ["abcde", "fg", ""]
    screen = render(b"abcde", cols=5, rows=3)
    assert screen.cursor == (0, 4)
    screen = render(b"abcde\x1b[Dz", cols=5, rows=3)  # a move cancels the wrap
    assert screen.lines()[0] == "abcze"


def test_scrolls_past_last_row() -> None:
    screen = render(b"1\r\n2\r\n3\r\n4", cols=5, rows=3)
    assert screen.lines() == ["2", "3", "4"]
    screen = render(b"abcdefghij", cols=3, rows=2)  # by wrapping too
    assert screen.lines() == ["ghi", "j"]


def test_utf8_split_across_chunks() -> None:
    line = f"{CARET} 1. Yes ─ 你好 🤖"
    assert render(line.encode(), chunk=1).lines()[0] == line


def test_invalid_utf8_does_not_crash() -> None:
    screen = render(b"a\xff\xfeb\xe2\x94")
    assert screen.lines()[0] == "a\ufffd\ufffdb"


def test_wide_chars_take_two_cells() -> None:
    screen = render("你好".encode() + b"\x1b[6Gx")
    assert screen.lines()[0] == "你好 x"
    screen = render("你好".encode())
    assert screen.cursor == (0, 4)
    # Overwriting half of a wide char blanks the other half.
    screen = render("你好".encode() + b"\x1b[2Gx")
    assert screen.lines()[0] == " x好"
    screen = render("你好".encode() + b"\x1b[3Gx")
    assert screen.lines()[0] == "你x"
    # A wide char that does not fit in the last column wraps early.
    screen = render("abcd你".encode(), cols=5, rows=2)
    assert screen.lines() == ["abcd", "你"]


def test_combining_mark_joins_previous_cell() -> None:
    screen = render("e\u0301x".encode())
    assert screen.lines()[0] == "e\u0301x"
    assert screen.cursor == (0, 2)


# -------------------------------------------------------------------- CSI


@pytest.mark.parametrize(
    "seq, cursor",
    [
        (b"\x1b[A", (4, 5)),
        (b"\x1b[2A", (3, 5)),
        (b"\x1b[0A", (4, 5)),
        (b"\x1b[99A", (0, 5)),
        (b"\x1b[B", (6, 5)),
        (b"\x1b[3B", (8, 5)),
        (b"\x1b[99B", (9, 5)),
        (b"\x1b[C", (5, 6)),
        (b"\x1b[4C", (5, 9)),
        (b"\x1b[99C", (5, 19)),
        (b"\x1b[D", (5, 4)),
        (b"\x1b[99D", (5, 0)),
        (b"\x1b[E", (6, 0)),
        (b"\x1b[2E", (7, 0)),
        (b"\x1b[F", (4, 0)),
        (b"\x1b[2F", (3, 0)),
        (b"\x1b[G", (5, 0)),
        (b"\x1b[9G", (5, 8)),
        (b"\x1b[H", (0, 0)),
        (b"\x1b[3H", (2, 0)),
        (b"\x1b[3;4H", (2, 3)),
        (b"\x1b[;4H", (0, 3)),
        (b"\x1b[99;99H", (9, 19)),
        (b"\x1b[2;3f", (1, 2)),
        (b"\x1b[d", (0, 5)),
        (b"\x1b[4d", (3, 5)),
        (b"\x1b[5`", (5, 4)),
    ],
)
def test_cursor_moves(seq: bytes, cursor: Tuple[int, int]) -> None:
    screen = render(b"\x1b[6;6H" + seq, cols=20, rows=10)
    assert screen.cursor == cursor


def test_words_placed_by_cursor_moves_read_with_spaces() -> None:
    screen = render(b"\x1b[3G?\x1b[5Gfor\x1b[9Gshortcuts\r\r\n\x1b[2Cx\x1b[1A\x1b[Dy")
    assert screen.lines()[:2] == ["  y for shortcuts", "  x"]
    screen = render(b"ab\x1b[1Ay")  # already on row 0: clamped
    assert screen.lines()[0] == "aby"


@pytest.mark.parametrize(
    "seq, line",
    [
        (b"\x1b[K", "abc"),
        (b"\x1b[0K", "abc"),
        (b"\x1b[1K", "    ef"),
        (b"\x1b[2K", ""),
    ],
)
def test_erase_in_line(seq: bytes, line: str) -> None:
    screen = render(b"abcdef\x1b[4G" + seq)
    assert screen.lines()[0] == line
    assert screen.cursor == (0, 3)


@pytest.mark.parametrize(
    "seq, lines",
    [
        (b"\x1b[J", ["aaa", "b", "", ""]),
        (b"\x1b[0J", ["aaa", "b", "", ""]),
        (b"\x1b[1J", ["", "  b", "ccc", "ddd"]),
        (b"\x1b[2J", ["", "", "", ""]),
        (b"\x1b[3J", ["aaa", "bbb", "ccc", "ddd"]),  # scrollback only
        (b"\x1b[2J\x1b[3J", ["", "", "", ""]),
    ],
)
def test_erase_in_display(seq: bytes, lines: List[str]) -> None:
    screen = render(b"aaa\r\nbbb\r\nccc\r\nddd\x1b[2;2H" + seq, cols=5, rows=4)
    assert screen.lines() == lines
    assert screen.cursor == (1, 1)


def test_insert_delete_chars_and_lines() -> None:
    assert render(b"abcdef\x1b[2G\x1b[2P").lines()[0] == "adef"
    assert render(b"abcdef\x1b[2G\x1b[2@").lines()[0] == "a  bcdef"
    assert render(b"abcdef\x1b[2G\x1b[2X").lines()[0] == "a  def"
    screen = render(b"1\r\n2\r\n3\x1b[2H\x1b[L", cols=5, rows=3)
    assert screen.lines() == ["1", "", "2"]
    screen = render(b"1\r\n2\r\n3\x1b[1H\x1b[M", cols=5, rows=3)
    assert screen.lines() == ["2", "3", ""]
    screen = render(b"1\r\n2\r\n3\x1b[S", cols=5, rows=3)
    assert screen.lines() == ["2", "3", ""]
    screen = render(b"1\r\n2\r\n3\x1b[T", cols=5, rows=3)
    assert screen.lines() == ["", "1", "2"]


def test_sgr_is_ignored() -> None:
    data = b"\x1b[1;31ma\x1b[38:2::10:20:30mb\x1b[0m\x1b[mc\x1b[38;5;196md"
    assert render(data).lines()[0] == "abcd"


def test_save_restore_cursor() -> None:
    screen = render(b"\x1b[3;4H\x1b7\x1b[10;10Hx\x1b8y")
    assert screen.cursor == (2, 4)
    assert screen.lines()[2] == "   y"
    screen = render(b"\x1b[3;4H\x1b[s\x1b[H\x1b[uz")
    assert screen.lines()[2] == "   z"


def test_scroll_region_is_ignored_but_homes() -> None:
    # What Claude Code sends first: save, reset the region, restore.
    screen = render(b"\x1b[5;5H\x1b7\x1b[r\x1b8x")
    assert screen.lines()[4] == "    x"
    screen = render(b"\x1b[5;5H\x1b[2;4rx")
    assert screen.lines()[0] == "x"


def test_private_modes_are_ignored() -> None:
    data = b"a\x1b[?25l\x1b[?2004h\x1b[?1004h\x1b[?2031h\x1b[?2026h\x1b[>4;1m\x1b[>1u\x1b[<ub"
    assert render(data).lines()[0] == "ab"


def test_alt_screen_switch_and_back() -> None:
    screen = render(b"main\x1b[?1049h")
    assert screen.lines()[0] == ""
    screen.feed(b"\x1b[Halt")
    assert screen.lines()[0] == "alt"
    screen.feed(b"\x1b[?1049l!")
    assert screen.lines()[0] == "main!"


def test_reverse_index_and_index() -> None:
    screen = render(b"1\r\n2\x1b[H\x1bMx", cols=5, rows=3)
    assert screen.lines() == ["x", "1", "2"]
    screen = render(b"a\x1bDb\x1bEc", cols=5, rows=3)
    assert screen.lines() == ["a", " b", "c"]


# ----------------------------------------------------------- strings, junk


def test_osc_title_bel_and_st() -> None:
    assert render(b"\x1b]0;\xe2\x9c\xb3 Claude Code\x07x").title == "✳ Claude Code"
    assert render(b"\x1b]2;two\x1b\\x").title == "two"
    screen = render(b"\x1b]0;one\x07\x1b]1;icon\x07\x1b]8;;http://x\x07\x1b]0;\x07")
    assert screen.title == ""
    screen = render(b"\x1b]0;t\x07a\x1b]2;u\x1b\\b")
    assert screen.lines()[0] == "ab"
    assert screen.title == "u"


def test_osc_split_anywhere() -> None:
    data = b"a\x1b]0;the title\x1b\\b\x1b]11;?\x07c"
    for cut in range(len(data) + 1):
        screen = Screen()
        screen.feed(data[:cut])
        screen.feed(data[cut:])
        assert screen.lines()[0] == "abc", cut
        assert screen.title == "the title", cut


def test_long_osc_is_capped_and_does_not_eat_the_screen() -> None:
    screen = Screen()
    screen.feed(b"\x1b]0;")
    for _ in range(100):
        screen.feed(b"t" * 10_000)
    screen.feed(b"\x07after")
    assert screen.lines()[0] == "after"
    assert 0 < len(screen.title) <= 1024


def test_dcs_apc_pm_sos_are_skipped() -> None:
    data = (
        b"a\x1bP>|xterm(1)\x1b\\b\x1b_Gi=1;AAAA\x1b\\c\x1b^pm\x1b\\d\x1bXsos\x1b\\e\x1bP+q544e\x07f"
    )
    assert render(data).lines()[0] == "abcdef"


def test_esc_inside_a_string_aborts_it() -> None:
    assert render(b"\x1b]0;abc\x1b[2Cx").lines()[0] == "  x"


def test_unknown_and_malformed_sequences_are_skipped() -> None:
    data = (
        b"a\x1b[?25$qb\x1b#8c\x1b(0d\x1b(Be\x1b[ qf\x1b[12;\nx"
        b"\x1b\x07y\x1b[99999999999999999999Cz\x1b[>0q\x1b[c\x1b[6n\x1b[=5u!"
    )
    screen = render(data)
    # ESC[12; cut by \n is dropped and the \n still applies; the huge count clamps.
    assert screen.lines()[:3] == ["abcdef", " " * 6 + "xy" + " " * 111 + "z", "!"]
    assert state(render(data, chunk=1)) == state(screen)


def test_incomplete_sequence_at_end_waits_for_more() -> None:
    screen = Screen()
    screen.feed(b"ab\x1b[")
    assert screen.lines()[0] == "ab"
    screen.feed(b"5")
    screen.feed(b"Gc")
    assert screen.lines()[0] == "ab  c"


def test_random_bytes_never_crash() -> None:
    rng = random.Random(1234)
    alphabet = b"\x1b[];?>0123456789;:$ Pq\x07\\\r\n\bmHJK\xe2\x94\x80\x9d\xaf\xffab"
    for _ in range(50):
        data = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 400)))
        screen = render(data, cols=13, rows=5)
        row, col = screen.cursor
        assert 0 <= row < 5 and 0 <= col < 13
        assert len(screen.lines()) == 5
        assert state(render(data, chunk=1, cols=13, rows=5)) == state(screen)


# ------------------------------------------------------------- generation


def test_generation_counts_content_changes_only() -> None:
    screen = Screen(20, 5)
    assert screen.generation == 0
    screen.feed(b"hello")
    assert screen.generation == 1
    screen.feed(b"\x1b[H\x1b[3;3H\x1b[31m")  # cursor moves and colours only
    assert screen.generation == 1
    screen.feed(b"\x1b[Hhello")  # same text again
    assert screen.generation == 1
    screen.feed(b"\x1b[2K")
    assert screen.generation == 2
    screen.feed(b"a")
    screen.feed(b"b")
    assert screen.generation == 4


def test_lines_returns_a_copy() -> None:
    screen = render(b"x")
    screen.lines()[0] = "changed"
    assert screen.lines()[0] == "x"


def test_rejects_empty_size() -> None:
    with pytest.raises(ValueError):
        Screen(0, 10)


# ------------------------------------------------------------------ volume


def test_one_megabyte_feed() -> None:
    # Ink-like frames: redraw, cursor-positioned words, colours, a rule, CJK.
    frames = []
    i = 0
    size = 0
    while size < 1_000_000:
        frame = (
            f"\x1b[H\x1b[2K\x1b[31mframe\x1b[39m\x1b[8G{i}\r\n"
            f"\x1b[2K{'─' * 40}\r\n\x1b[2K\x1b[3G?\x1b[5Gfor\x1b[9Gshortcuts\x1b[K"
            f"\r\n\x1b[2K你好 {i % 7}\x1b]0;title {i}\x07"
        ).encode()
        frames.append(frame)
        size += len(frame)
        i += 1
    data = b"".join(frames)
    last = i - 1
    expected = [f"frame  {last}", "─" * 40, "  ? for shortcuts", f"你好 {last % 7}", ""]
    whole = render(data, cols=60, rows=5)
    assert whole.lines() == expected
    assert whole.title == f"title {last}"
    assert state(render(data, chunk=4096, cols=60, rows=5)) == state(whole)
    assert state(render(data, chunk=4093, cols=60, rows=5)) == state(whole)


def test_one_megabyte_of_scrolling_text() -> None:
    data = b"".join(b"line %d\r\n" % n for n in range(120_000))
    assert len(data) > 1_000_000
    screen = render(data, chunk=65536, cols=40, rows=4)
    assert screen.lines() == ["line 119997", "line 119998", "line 119999", ""]
