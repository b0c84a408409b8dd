"""Answers to the terminal queries Claude Code writes to its terminal.

A real terminal answers queries such as "where is the cursor?" by writing to
the program's input. Inside our pseudo-terminal nobody would, so this module
plays the terminal: it watches the child's output and says what to write back.
Replies describe a plain, modest xterm-like terminal so the TUI picks its
most conservative code paths.

XTVERSION is answered (``claude-print(VERSION)``). Claude Code 2.1.197 then
also asks DECRQM ?2026 (synchronised output), which is answered "not
recognised", so it keeps drawing without synchronised updates, the same as
with no XTVERSION reply. Answering is the honest choice: the name matches
none of the terminals Claude Code special-cases (xterm.js, ghostty, kitty...),
and it was measured to reach the ready screen and finish a turn either way.
Claude Code puts the name in its terminal-probe telemetry event (when
nonessential traffic is allowed), so runs show up as claude-print there.
Pass ``answer_xtversion=False`` to behave like a terminal that ignores it.

The kitty keyboard query ``ESC[?u`` gets no reply on purpose: silence means
"no kitty keyboard protocol", and the DA1 that follows it is the sentinel.
"""

from __future__ import annotations

import re
from typing import Callable, List, Optional, Tuple

from claude_print import __version__

__all__ = ["ProbeResponder"]

_CSI = re.compile(rb"\x1b\[([0-?]*)([ -/]*)([@-~])")
_CSI_PART = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*)?")
# OSC / DCS / APC / PM / SOS, terminated by BEL or ST. ESC inside the payload
# is not allowed, so a stray ESC ends the match and the scan moves on.
_STRING = re.compile(rb"\x1b([\]P_^X])([^\x07\x1b]*)(?:\x07|\x1b\\)")
_STRING_PART = re.compile(rb"\x1b[\]P_^X][^\x07\x1b]*\x1b?")

# The longest partial sequence carried over to the next chunk. Queries are a
# few bytes long; anything longer is some other string and can be dropped.
_MAX_TAIL = 64
# Unknown queries remembered for --verbose; beyond this they are only counted.
_MAX_UNANSWERED = 32

_ST = b"\x1b\\"
# XTWINOPS reports (CSI Ps t) that are queries rather than window commands.
_WINOPS_QUERIES = frozenset({b"11", b"13", b"14", b"15", b"16", b"18", b"19", b"20", b"21"})

Cursor = Callable[[], Tuple[int, int]]


def _origin() -> Tuple[int, int]:
    return (0, 0)


class ProbeResponder:
    """Feed it the child's output; it returns the bytes to write back.

    ``cursor`` returns the current (row, col), 0-based, for cursor position
    reports; ``rows``/``cols`` are the pseudo-terminal's size.
    """

    def __init__(
        self,
        rows: int = 50,
        cols: int = 120,
        cursor: Optional[Cursor] = None,
        answer_xtversion: bool = True,
    ) -> None:
        self.rows = rows
        self.cols = cols
        self.answer_xtversion = answer_xtversion
        self.unanswered: List[bytes] = []
        self.unanswered_count = 0
        self._cursor: Cursor = cursor if cursor is not None else _origin
        self._tail = b""

    def feed(self, data: bytes) -> List[bytes]:
        """Scan a chunk of output; returns replies in the order the queries came."""
        buf = self._tail + data if self._tail else data
        self._tail = b""
        replies: List[bytes] = []
        n = len(buf)
        pos = buf.find(b"\x1b")
        while pos != -1:
            nxt = pos + 1
            m = _CSI.match(buf, pos)
            if m is not None:
                self._csi(m.group(1), m.group(2), m.group(3), m.group(0), replies)
                nxt = m.end()
            else:
                s = _STRING.match(buf, pos)
                if s is not None:
                    self._string(s.group(1), s.group(2), s.group(0), replies)
                    nxt = s.end()
                elif self._keep_tail(buf, pos, n):
                    break
            pos = buf.find(b"\x1b", nxt)
        return replies

    # ---------------------------------------------------------------- helpers

    def _keep_tail(self, buf: bytes, pos: int, n: int) -> bool:
        """Keep an unfinished sequence that runs to the end of the chunk."""
        if n - pos > _MAX_TAIL:
            return False
        for part in (_CSI_PART, _STRING_PART):
            m = part.match(buf, pos)
            if m is not None and m.end() == n:
                self._tail = buf[pos:]
                return True
        return False

    def _unknown(self, seq: bytes) -> None:
        self.unanswered_count += 1
        if len(self.unanswered) < _MAX_UNANSWERED:
            self.unanswered.append(seq[:_MAX_TAIL])

    def _csi(self, params: bytes, inter: bytes, final: bytes, seq: bytes, out: List[bytes]) -> None:
        if final == b"c" and not inter:
            if params in (b"", b"0"):  # DA1: a VT102, no optional features
                out.append(b"\x1b[?6c")
            elif params in (b">", b">0"):  # DA2: VT100-class, "version 10"
                out.append(b"\x1b[>0;10;1c")
            elif not params.startswith(b"?"):  # ESC[?...c is a reply (ours, echoed)
                self._unknown(seq)
        elif final == b"n" and not inter:
            if params == b"5":  # DSR: "terminal OK"
                out.append(b"\x1b[0n")
            elif params == b"6":  # CPR, 1-based
                row, col = self._cursor()
                out.append(b"\x1b[%d;%dR" % (row + 1, col + 1))
            elif params == b"?6":  # DECXCPR, page 1
                row, col = self._cursor()
                out.append(b"\x1b[?%d;%d;1R" % (row + 1, col + 1))
            elif params not in (b"0", b"3") and not params.startswith(b"?997;"):
                self._unknown(seq)  # (those are status reports, not queries)
        elif final == b"q" and not inter and params[:1] == b">":
            if params in (b">", b">0"):
                if self.answer_xtversion:
                    name = f"claude-print({__version__})".encode("ascii")
                    out.append(b"\x1bP>|" + name + _ST)
            else:
                self._unknown(seq)
        elif final == b"t" and not inter:
            op = params.split(b";", 1)[0]
            if params == b"18":  # text area in characters
                out.append(b"\x1b[8;%d;%dt" % (self.rows, self.cols))
            elif params == b"14":  # text area in pixels, for an 8x16 cell
                out.append(b"\x1b[4;%d;%dt" % (self.rows * 16, self.cols * 8))
            elif op in _WINOPS_QUERIES:
                self._unknown(seq)
        elif final == b"p" and inter == b"$":
            # DECRQM: 0 = "mode not recognised", the one answer that promises nothing.
            if params[:1] == b"?" and params[1:].isdigit():
                out.append(b"\x1b[?%s;0$y" % params[1:])
            elif params.isdigit():
                out.append(b"\x1b[%s;0$y" % params)
            else:
                self._unknown(seq)
        elif final == b"u" and not inter and params == b"?":
            pass  # kitty keyboard query: silence means "not supported"
        elif final == b"m" and not inter and params[:1] == b"?":
            self._unknown(seq)  # XTQMODKEYS

    def _string(self, kind: bytes, payload: bytes, seq: bytes, out: List[bytes]) -> None:
        if kind == b"]":
            if payload == b"10;?":
                out.append(b"\x1b]10;rgb:ffff/ffff/ffff" + _ST)
            elif payload == b"11;?":
                out.append(b"\x1b]11;rgb:0000/0000/0000" + _ST)
            elif payload.endswith(b";?"):  # other colours, clipboard...
                self._unknown(seq)
        elif kind == b"P" and payload.startswith((b"$q", b"+q")):
            self._unknown(seq)  # DECRQSS / XTGETTCAP
