"""ProbeResponder: one test per query, split chunks, bounded memory, real capture."""

from __future__ import annotations

from typing import Callable, List, Optional, Tuple

import pytest
from harness import TESTS

from claude_print import __version__
from claude_print.tui.probes import ProbeResponder
from claude_print.tui.terminal import Screen

SCREENS = TESTS / "data" / "screens"
XTVERSION_REPLY = b"\x1bP>|claude-print(" + __version__.encode() + b")\x1b\\"


def replies(
    data: bytes,
    rows: int = 50,
    cols: int = 120,
    cursor: Optional[Callable[[], Tuple[int, int]]] = None,
    answer_xtversion: bool = True,
) -> List[bytes]:
    responder = ProbeResponder(rows, cols, cursor=cursor, answer_xtversion=answer_xtversion)
    return responder.feed(data)


def bytewise(responder: ProbeResponder, data: bytes) -> List[bytes]:
    out: List[bytes] = []
    for i in range(len(data)):
        out.extend(responder.feed(data[i : i + 1]))
    return out


# ------------------------------------------------------------ each query


@pytest.mark.parametrize("query", [b"\x1b[c", b"\x1b[0c"])
def test_da1(query: bytes) -> None:
    assert replies(query) == [b"\x1b[?6c"]


@pytest.mark.parametrize("query", [b"\x1b[>c", b"\x1b[>0c"])
def test_da2(query: bytes) -> None:
    assert replies(query) == [b"\x1b[>0;10;1c"]


def test_dsr_status() -> None:
    assert replies(b"\x1b[5n") == [b"\x1b[0n"]


def test_cpr_uses_the_cursor_callback_one_based() -> None:
    assert replies(b"\x1b[6n", cursor=lambda: (4, 9)) == [b"\x1b[5;10R"]
    assert replies(b"\x1b[?6n", cursor=lambda: (4, 9)) == [b"\x1b[?5;10;1R"]


def test_cpr_default_cursor_is_home() -> None:
    assert replies(b"\x1b[6n") == [b"\x1b[1;1R"]


def test_cpr_follows_a_screen() -> None:
    screen = Screen(120, 50)
    responder = ProbeResponder(rows=50, cols=120, cursor=lambda: screen.cursor)
    data = b"\x1b[3;7Hxy"
    screen.feed(data)
    assert responder.feed(data) == []
    screen.feed(b"\x1b[6n")
    assert responder.feed(b"\x1b[6n") == [b"\x1b[3;9R"]


@pytest.mark.parametrize("query", [b"\x1b[>0q", b"\x1b[>q"])
def test_xtversion(query: bytes) -> None:
    assert replies(query) == [XTVERSION_REPLY]
    assert replies(query, answer_xtversion=False) == []


def test_xtversion_reply_is_a_dcs_string() -> None:
    (reply,) = replies(b"\x1b[>0q")
    assert reply.startswith(b"\x1bP>|") and reply.endswith(b"\x1b\\")
    assert b"\x1b" not in reply[2:-2]


def test_window_size_in_characters() -> None:
    assert replies(b"\x1b[18t", rows=50, cols=120) == [b"\x1b[8;50;120t"]
    assert replies(b"\x1b[18t", rows=24, cols=80) == [b"\x1b[8;24;80t"]


def test_window_size_in_pixels() -> None:
    assert replies(b"\x1b[14t", rows=50, cols=120) == [b"\x1b[4;800;960t"]


@pytest.mark.parametrize(
    "query, reply",
    [
        (b"\x1b[?2026$p", b"\x1b[?2026;0$y"),
        (b"\x1b[?2004$p", b"\x1b[?2004;0$y"),
        (b"\x1b[4$p", b"\x1b[4;0$y"),
    ],
)
def test_decrqm_says_not_recognised(query: bytes, reply: bytes) -> None:
    assert replies(query) == [reply]


@pytest.mark.parametrize("end", [b"\x07", b"\x1b\\"])
def test_osc_colour_queries(end: bytes) -> None:
    assert replies(b"\x1b]11;?" + end) == [b"\x1b]11;rgb:0000/0000/0000\x1b\\"]
    assert replies(b"\x1b]10;?" + end) == [b"\x1b]10;rgb:ffff/ffff/ffff\x1b\\"]


def test_kitty_keyboard_query_gets_silence() -> None:
    responder = ProbeResponder()
    assert responder.feed(b"\x1b[?u") == []
    assert responder.unanswered == []


# ---------------------------------------------------------- not answered


@pytest.mark.parametrize(
    "query",
    [
        b"\x1b[=c",  # DA3
        b"\x1b[19t",  # screen size in characters
        b"\x1b[16t",  # cell size in pixels
        b"\x1b[?4m",  # XTQMODKEYS
        b"\x1b[>1q",
        b"\x1b[7n",
        b"\x1b]12;?\x07",  # cursor colour
        b"\x1b]4;1;?\x1b\\",  # palette
        b"\x1b]52;c;?\x07",  # clipboard
        b"\x1bP$qm\x1b\\",  # DECRQSS
        b"\x1bP+q544e\x1b\\",  # XTGETTCAP
    ],
)
def test_unknown_queries_are_recorded(query: bytes) -> None:
    responder = ProbeResponder()
    assert responder.feed(b"a" + query + b"b") == []
    assert responder.unanswered == [query]
    assert responder.unanswered_count == 1


def test_unanswered_list_is_capped_but_counted() -> None:
    responder = ProbeResponder()
    responder.feed(b"\x1b[=c" * 100)
    assert len(responder.unanswered) == 32
    assert responder.unanswered_count == 100


@pytest.mark.parametrize(
    "data",
    [
        b"plain text with [c and [6n but no ESC",
        b"\x1b[31mred\x1b[0m\x1b[2K\x1b[5G\x1b[3A",
        b"\x1b[?25l\x1b[?2004h\x1b[?1004h\x1b[?2031h\x1b[?1049h",
        b"\x1b[>4;1m\x1b[>1u\x1b[<u\x1b[=1;1u",
        b"\x1b[ q\x1b[2 q\x1b[0q",  # cursor style, LEDs
        b"\x1b[8;50;120t\x1b[22;0t\x1b[23;0t",  # window commands, not reports
        b"\x1b]0;\xe2\x9c\xb3 Claude Code\x07\x1b]8;;http://x\x1b\\",
        b"\x1bP>|xterm(390)\x1b\\",  # a reply echoed back must not loop
        b"\x1b[?6c\x1b[0n\x1b[1;1R\x1b[?2026;0$y",
        "\u276f ─ 你好 \x9b c".encode(),  # UTF-8 continuation bytes are not C1 CSI
    ],
)
def test_non_queries_get_no_reply(data: bytes) -> None:
    responder = ProbeResponder()
    assert responder.feed(data) == []
    assert responder.unanswered == []


# ------------------------------------------------------ streams and splits

STREAM = (
    b"\x1b[?2004h\x1b[31mhello\x1b[>0q\x1b[c text \x1b]11;?\x1b\\"
    b"\x1b[?2026$p\x1b[6n\x1b]10;?\x07\x1b[18t\x1b[>c\x1b[5n\x1b[?u\x1b[14t\x1b[c"
)
STREAM_REPLIES = [
    XTVERSION_REPLY,
    b"\x1b[?6c",
    b"\x1b]11;rgb:0000/0000/0000\x1b\\",
    b"\x1b[?2026;0$y",
    b"\x1b[3;4R",
    b"\x1b]10;rgb:ffff/ffff/ffff\x1b\\",
    b"\x1b[8;50;120t",
    b"\x1b[>0;10;1c",
    b"\x1b[0n",
    b"\x1b[4;800;960t",
    b"\x1b[?6c",
]


def make() -> ProbeResponder:
    return ProbeResponder(rows=50, cols=120, cursor=lambda: (2, 3))


def test_replies_come_in_query_order() -> None:
    assert make().feed(STREAM) == STREAM_REPLIES


def test_byte_by_byte_equals_whole() -> None:
    assert bytewise(make(), STREAM) == STREAM_REPLIES


def test_every_two_way_split_equals_whole() -> None:
    for cut in range(len(STREAM) + 1):
        responder = make()
        got = responder.feed(STREAM[:cut]) + responder.feed(STREAM[cut:])
        assert got == STREAM_REPLIES, cut


def test_osc_query_split_inside_the_terminator() -> None:
    responder = ProbeResponder()
    assert responder.feed(b"x\x1b]11;?\x1b") == []
    assert responder.feed(b"\\y") == [b"\x1b]11;rgb:0000/0000/0000\x1b\\"]


def test_query_after_many_plain_chunks() -> None:
    responder = ProbeResponder()
    for _ in range(1000):
        assert responder.feed(b"abc \xe2\x94\x80" * 100) == []
    assert responder.feed(b"\x1b") == []
    assert responder.feed(b"[") == []
    assert responder.feed(b"c") == [b"\x1b[?6c"]


def test_tail_buffer_stays_bounded() -> None:
    responder = ProbeResponder()
    responder.feed(b"\x1b]0;" + b"t" * 100_000)  # a title that never ends
    assert len(responder._tail) <= 64
    responder.feed(b"\x1b[" + b"1;" * 50_000)  # a CSI that never ends
    assert len(responder._tail) <= 64
    assert responder.feed(b"\x07\x1b[5n") == [b"\x1b[0n"]


def test_one_megabyte_stream() -> None:
    chunk = b"\x1b[31mword\x1b[5G\xe2\x94\x80" * 20 + b"\x1b[c"
    count = 1_000_000 // len(chunk) + 1
    data = chunk * count
    responder = ProbeResponder()
    got: List[bytes] = []
    for i in range(0, len(data), 4093):
        got.extend(responder.feed(data[i : i + 4093]))
    assert got == [b"\x1b[?6c"] * count
    assert responder.unanswered == []


# ------------------------------------------------------------ real capture


def test_real_startup_queries() -> None:
    # Claude Code 2.1.197 asks XTVERSION and DA1 right after its first frame.
    data = (SCREENS / "trust.bin").read_bytes()
    expected = [XTVERSION_REPLY, b"\x1b[?6c"]
    assert ProbeResponder().feed(data) == expected
    assert bytewise(ProbeResponder(), data) == expected


@pytest.mark.parametrize("name", ["ready.bin", "answer_exit.bin", "scrolled.bin"])
def test_real_sessions_ask_nothing_unknown(name: str) -> None:
    data = (SCREENS / name).read_bytes()
    responder = ProbeResponder()
    whole = responder.feed(data)
    assert whole[:2] == [XTVERSION_REPLY, b"\x1b[?6c"]
    assert responder.unanswered == []
    assert bytewise(ProbeResponder(), data) == whole


@pytest.mark.parametrize("rows, cols", [(50, 120), (24, 80)])
def test_sizes_are_reported_as_given(rows: int, cols: int) -> None:
    responder = ProbeResponder(rows=rows, cols=cols)
    assert responder.feed(b"\x1b[18t\x1b[14t") == [
        b"\x1b[8;%d;%dt" % (rows, cols),
        b"\x1b[4;%d;%dt" % (rows * 16, cols * 8),
    ]
