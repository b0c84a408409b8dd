"""A small screen model, just enough to read what Claude Code's Ink TUI draws.

Ink never prints the spaces between words: it moves the cursor instead
(``ESC[5G``, ``ESC[2C``, ``\\r\\n``...). Recognising a screen therefore needs
the bytes replayed onto a grid of cells, not a substring search on raw output.

Deliberately not a full terminal: colours and attributes are dropped, scroll
regions are ignored, and anything unknown is skipped rather than raised.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from typing import Callable, Dict, List, Optional, Tuple

__all__ = ["Screen"]

# One regex alternation per token kind; every character matches some branch,
# so the scanner always advances. The order matters: complete sequences first,
# then partial ones (which may be completed by the next chunk).
_TOKEN = re.compile(
    r"([^\x00-\x1f\x7f-\x9f]+)"  # 1: printable text
    r"|\x1b\[[0-9;:]*m"  # SGR, the commonest sequence: no group, skipped cheaply
    r"|\x1b\[([0-?]*)([ -/]*)([@-~])"  # 2-4: CSI params, intermediates, final
    r"|([\x00-\x1a\x1c-\x1f\x7f-\x9f])"  # 5: C0/C1 control other than ESC
    r"|\x1b([\]P_^X])"  # 6: start of OSC/DCS/SOS/PM/APC string
    r"|(\x1b\[[0-?]*[ -/]*)"  # 7: partial (or malformed) CSI
    r"|\x1b([ -/]*)([0-~])"  # 8-9: other ESC sequences (ESC 7, ESC ( B...)
    r"|(\x1b[ -/]*)"  # 10: lone ESC: partial, or followed by junk
)
# Group numbers, as reported by Match.lastindex (SGR has no group: None).
_TEXT = 1
_CSI_FINAL = 4
_CTRL = 5
_STRING = 6
_ESC_FINAL = 9

# A partial sequence at the end of a chunk is kept for the next feed; past
# this length it cannot be a sane sequence, so it is dropped.
_MAX_PENDING = 256
# Only the start of an OSC/DCS payload is kept (enough for a window title).
_MAX_STRING = 1024

# Zero-width code points that unicodedata does not classify as combining.
_ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u200e\u200f\u2060\ufeff")
_WIDTHS: Dict[str, int] = {}
_MAX_WIDTH_CACHE = 8192


def _char_width(ch: str) -> int:
    """Cells taken by one code point: 0 (combining), 1, or 2 (East Asian wide)."""
    w = _WIDTHS.get(ch)
    if w is not None:
        return w
    if (
        ch in _ZERO_WIDTH
        or "\ufe00" <= ch <= "\ufe0f"
        or unicodedata.combining(ch)
        or unicodedata.category(ch) in ("Mn", "Me", "Cf")
    ):
        w = 0
    elif unicodedata.east_asian_width(ch) in ("W", "F"):
        w = 2
    else:
        w = 1
    if len(_WIDTHS) < _MAX_WIDTH_CACHE:
        _WIDTHS[ch] = w
    return w


def _all_narrow(s: str) -> bool:
    return all(_char_width(ch) == 1 for ch in set(s))


def _int_params(params: str) -> List[int]:
    """CSI parameters as ints; empty or malformed ones become 0 (= default)."""
    if not params:
        return []
    if params.isdigit():  # the common case: a single number
        return [int(params)]
    out: List[int] = []
    for p in params.split(";"):
        # Sub-parameters (``38:5:1``) only occur in SGR, which is ignored anyway.
        head = p.split(":", 1)[0]
        out.append(int(head) if head.isdigit() else 0)
    return out


class Screen:
    """Grid of character cells fed with a terminal byte stream.

    Wide (East Asian) characters take two cells: the second holds ``""`` so
    rows still join into readable text while later columns line up with the
    terminal's. Combining marks are appended to the previous cell.
    """

    def __init__(self, cols: int = 120, rows: int = 50) -> None:
        if cols < 1 or rows < 1:
            raise ValueError("screen needs at least one row and one column")
        self.cols = cols
        self.rows = rows
        self.title = ""
        self.generation = 0
        self._grid: List[List[str]] = [self._blank_row() for _ in range(rows)]
        self._row = 0
        self._col = 0
        # xterm's "pending wrap": after writing the last column the cursor
        # stays put; only the next printable character wraps. Ink draws
        # full-width rules followed by \r\n and relies on this.
        self._wrap_pending = False
        self._saved: Tuple[int, int] = (0, 0)
        self._alt_saved: Optional[Tuple[List[List[str]], int, int]] = None
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""
        # Kind of the OSC/DCS/APC/PM/SOS string being skipped ("" = none).
        self._string_kind = ""
        self._string_buf: List[str] = []
        self._string_len = 0
        self._dirty = False
        self._lines: List[str] = [""] * rows
        self._csi: Dict[str, Callable[[List[int]], None]] = {
            "A": self._cuu,
            "B": self._cud,
            "e": self._cud,
            "C": self._cuf,
            "a": self._cuf,
            "D": self._cub,
            "E": self._cnl,
            "F": self._cpl,
            "G": self._cha,
            "`": self._cha,
            "H": self._cup,
            "f": self._cup,
            "d": self._vpa,
            "K": self._el,
            "J": self._ed,
            "X": self._ech,
            "P": self._dch,
            "@": self._ich,
            "L": self._il,
            "M": self._dl,
            "S": self._su,
            "T": self._sd,
            "r": self._decstbm,
            "s": self._scosc,
            "u": self._scorc,
        }

    # ----------------------------------------------------------------- public

    @property
    def cursor(self) -> Tuple[int, int]:
        """(row, col), 0-based."""
        return (self._row, self._col)

    def feed(self, data: bytes) -> None:
        """Apply a chunk of output; chunks may split sequences anywhere."""
        text = self._decoder.decode(data)
        if self._pending:
            text = self._pending + text
            self._pending = ""
        pos = 0
        n = len(text)
        if self._string_kind:
            pos = self._skip_string(text, 0)
        match = _TOKEN.match
        while pos < n:
            m = match(text, pos)
            if m is None:  # unreachable: every character matches a branch
                pos += 1
                continue
            kind = m.lastindex
            end = m.end()
            if kind == _TEXT:
                self._write(m.group(1))
            elif kind is None:
                pass  # SGR
            elif kind == _CSI_FINAL:
                params, inter, final = m.group(2, 3, 4)
                if not inter:
                    self._dispatch_csi(params, final)
            elif kind == _CTRL:
                self._control(m.group(5))
            elif kind == _STRING:
                self._string_kind = m.group(6)
                self._string_buf = []
                self._string_len = 0
                end = self._skip_string(text, end)
            elif kind == _ESC_FINAL:
                if not m.group(8):
                    self._esc(m.group(9))
            elif end == n and n - pos <= _MAX_PENDING:
                # Partial CSI/ESC at the end: maybe completed by the next chunk.
                self._pending = text[pos:]
            # else: malformed sequence, skipped
            pos = end
        if self._dirty:
            self._dirty = False
            lines = self._render()
            if lines != self._lines:
                self._lines = lines
                self.generation += 1

    def lines(self) -> List[str]:
        """Rows as text, right-stripped; NBSP (Ink's padding) reads as a space."""
        return list(self._lines)

    def text(self) -> str:
        """All rows joined with newlines, without the trailing blank rows."""
        lines = self._lines
        end = len(lines)
        while end and not lines[end - 1]:
            end -= 1
        return "\n".join(lines[:end])

    # ---------------------------------------------------------------- helpers

    def _blank_row(self) -> List[str]:
        return [" "] * self.cols

    def _render(self) -> List[str]:
        return ["".join(row).replace("\xa0", " ").rstrip() for row in self._grid]

    def _skip_string(self, text: str, pos: int) -> int:
        """Consume an OSC/DCS/... payload up to BEL or ST; returns the new position."""
        n = len(text)
        bel = text.find("\x07", pos)
        esc = text.find("\x1b", pos)
        if esc != -1 and (bel == -1 or esc < bel):
            if esc + 1 == n:  # ESC of a split ST: decide on the next chunk
                self._collect_string(text[pos:esc])
                self._pending = "\x1b"
                return n
            self._collect_string(text[pos:esc])
            self._end_string()
            # ESC \ is the terminator; any other ESC aborts the string and
            # starts a new sequence, as in xterm.
            return esc + 2 if text[esc + 1] == "\\" else esc
        if bel != -1:
            self._collect_string(text[pos:bel])
            self._end_string()
            return bel + 1
        self._collect_string(text[pos:])
        return n

    def _collect_string(self, s: str) -> None:
        room = _MAX_STRING - self._string_len
        if s and room > 0:
            s = s[:room]
            self._string_buf.append(s)
            self._string_len += len(s)

    def _end_string(self) -> None:
        if self._string_kind == "]":
            payload = "".join(self._string_buf)
            code, _, value = payload.partition(";")
            if code in ("0", "2"):
                self.title = value
        self._string_kind = ""
        self._string_buf = []
        self._string_len = 0

    # ------------------------------------------------------------------ text

    def _write(self, s: str) -> None:
        self._dirty = True
        if s.isascii() or _all_narrow(s):
            self._write_narrow(s)
        else:
            for ch in s:
                self._write_char(ch)

    def _write_narrow(self, s: str) -> None:
        cols = self.cols
        i = 0
        n = len(s)
        while i < n:
            if self._wrap_pending:
                self._wrap()
            row = self._grid[self._row]
            c = self._col
            k = min(cols - c, n - i)
            if row[c] == "" and c > 0:  # overwriting the right half of a wide char
                row[c - 1] = " "
            row[c : c + k] = s[i : i + k]
            if c + k < cols and row[c + k] == "":
                row[c + k] = " "
            i += k
            if c + k >= cols:
                self._col = cols - 1
                self._wrap_pending = True
            else:
                self._col = c + k

    def _write_char(self, ch: str) -> None:
        w = _char_width(ch)
        cols = self.cols
        if w == 0:
            row = self._grid[self._row]
            c = self._col if self._wrap_pending else self._col - 1
            while c > 0 and row[c] == "":
                c -= 1
            if c >= 0:
                row[c] += ch
            return
        if w == 2 and cols < 2:
            w = 1
        if self._wrap_pending:
            self._wrap()
        if w == 2 and self._col == cols - 1:
            # No room for both halves: the terminal wraps early.
            self._grid[self._row][self._col] = " "
            self._wrap()
        row = self._grid[self._row]
        c = self._col
        if row[c] == "" and c > 0:
            row[c - 1] = " "
        row[c] = ch
        if w == 2:
            row[c + 1] = ""
        if c + w < cols and row[c + w] == "":
            row[c + w] = " "
        if c + w >= cols:
            self._col = cols - 1
            self._wrap_pending = True
        else:
            self._col = c + w

    def _wrap(self) -> None:
        self._wrap_pending = False
        self._col = 0
        self._linefeed()

    def _linefeed(self) -> None:
        if self._row >= self.rows - 1:
            self._scroll_up(1)
        else:
            self._row += 1

    def _scroll_up(self, n: int) -> None:
        n = min(n, self.rows)
        del self._grid[:n]
        self._grid.extend(self._blank_row() for _ in range(n))
        self._dirty = True

    def _scroll_down(self, n: int) -> None:
        n = min(n, self.rows)
        del self._grid[self.rows - n :]
        self._grid[0:0] = [self._blank_row() for _ in range(n)]
        self._dirty = True

    def _erase(self, row: int, start: int, end: int) -> None:
        """Blank cells [start, end) of a row, not leaving half a wide char."""
        cells = self._grid[row]
        if start >= end:
            return
        if cells[start] == "" and start > 0:
            cells[start - 1] = " "
        cells[start:end] = [" "] * (end - start)
        if end < self.cols and cells[end] == "":
            cells[end] = " "
        self._dirty = True

    # -------------------------------------------------------------- controls

    def _control(self, ch: str) -> None:
        if ch == "\n" or ch == "\x0b" or ch == "\x0c":
            self._wrap_pending = False
            self._linefeed()
        elif ch == "\r":
            self._wrap_pending = False
            self._col = 0
        elif ch == "\b":
            self._wrap_pending = False
            if self._col > 0:
                self._col -= 1
        elif ch == "\t":
            self._wrap_pending = False
            self._col = min(self.cols - 1, (self._col // 8 + 1) * 8)
        # BEL, SO/SI, NUL, C1 controls...: nothing to draw.

    def _esc(self, final: str) -> None:
        if final == "7":
            self._saved = (self._row, self._col)
        elif final == "8":
            self._goto(*self._saved)
        elif final == "D":
            self._wrap_pending = False
            self._linefeed()
        elif final == "E":
            self._wrap_pending = False
            self._col = 0
            self._linefeed()
        elif final == "M":
            self._wrap_pending = False
            if self._row == 0:
                self._scroll_down(1)
            else:
                self._row -= 1
        elif final == "c":
            self._grid = [self._blank_row() for _ in range(self.rows)]
            self._goto(0, 0)
            self._alt_saved = None
            self._dirty = True
        # Charset selection (ESC ( B) and the rest: ignored.

    def _goto(self, row: int, col: int) -> None:
        self._wrap_pending = False
        self._row = min(max(row, 0), self.rows - 1)
        self._col = min(max(col, 0), self.cols - 1)

    # ------------------------------------------------------------------- CSI

    def _dispatch_csi(self, params: str, final: str) -> None:
        if final == "m":  # SGR with unusual parameters; ignored
            return
        if params[:1] in ("?", ">", "<", "="):
            if params[0] == "?" and final in "hl":
                self._private_mode(params[1:], final == "h")
            return  # queries and other private sequences: not screen content
        handler = self._csi.get(final)
        if handler is not None:
            handler(_int_params(params))

    def _private_mode(self, params: str, enable: bool) -> None:
        for mode in params.split(";"):
            if mode in ("1049", "1047", "47"):
                self._alt_screen(enable)

    def _alt_screen(self, enable: bool) -> None:
        if enable and self._alt_saved is None:
            self._alt_saved = (self._grid, self._row, self._col)
            self._grid = [self._blank_row() for _ in range(self.rows)]
            self._dirty = True
        elif not enable and self._alt_saved is not None:
            self._grid, row, col = self._alt_saved
            self._alt_saved = None
            self._goto(row, col)
            self._dirty = True

    @staticmethod
    def _count(p: List[int]) -> int:
        """First parameter as a count: missing or 0 means 1."""
        return p[0] if p and p[0] > 0 else 1

    def _cuu(self, p: List[int]) -> None:
        self._goto(self._row - self._count(p), self._col)

    def _cud(self, p: List[int]) -> None:
        self._goto(self._row + self._count(p), self._col)

    def _cuf(self, p: List[int]) -> None:
        self._goto(self._row, self._col + self._count(p))

    def _cub(self, p: List[int]) -> None:
        self._goto(self._row, self._col - self._count(p))

    def _cnl(self, p: List[int]) -> None:
        self._goto(self._row + self._count(p), 0)

    def _cpl(self, p: List[int]) -> None:
        self._goto(self._row - self._count(p), 0)

    def _cha(self, p: List[int]) -> None:
        self._goto(self._row, self._count(p) - 1)

    def _vpa(self, p: List[int]) -> None:
        self._goto(self._count(p) - 1, self._col)

    def _cup(self, p: List[int]) -> None:
        row = p[0] if p and p[0] > 0 else 1
        col = p[1] if len(p) > 1 and p[1] > 0 else 1
        self._goto(row - 1, col - 1)

    def _el(self, p: List[int]) -> None:
        mode = p[0] if p else 0
        if mode == 0:
            self._erase(self._row, self._col, self.cols)
        elif mode == 1:
            self._erase(self._row, 0, self._col + 1)
        elif mode == 2:
            self._erase(self._row, 0, self.cols)

    def _ed(self, p: List[int]) -> None:
        mode = p[0] if p else 0
        if mode == 0:
            self._erase(self._row, self._col, self.cols)
            for r in range(self._row + 1, self.rows):
                self._erase(r, 0, self.cols)
        elif mode == 1:
            for r in range(self._row):
                self._erase(r, 0, self.cols)
            self._erase(self._row, 0, self._col + 1)
        elif mode == 2:
            for r in range(self.rows):
                self._erase(r, 0, self.cols)
        # 3 erases the scrollback only, which this model does not keep.

    def _ech(self, p: List[int]) -> None:
        self._erase(self._row, self._col, min(self.cols, self._col + self._count(p)))

    def _dch(self, p: List[int]) -> None:
        n = min(self._count(p), self.cols - self._col)
        row = self._grid[self._row]
        del row[self._col : self._col + n]
        row.extend([" "] * n)
        self._dirty = True

    def _ich(self, p: List[int]) -> None:
        n = min(self._count(p), self.cols - self._col)
        row = self._grid[self._row]
        row[self._col : self._col] = [" "] * n
        del row[self.cols :]
        self._dirty = True

    def _il(self, p: List[int]) -> None:
        n = min(self._count(p), self.rows - self._row)
        del self._grid[self.rows - n :]
        self._grid[self._row : self._row] = [self._blank_row() for _ in range(n)]
        self._col = 0
        self._dirty = True

    def _dl(self, p: List[int]) -> None:
        n = min(self._count(p), self.rows - self._row)
        del self._grid[self._row : self._row + n]
        self._grid.extend(self._blank_row() for _ in range(n))
        self._col = 0
        self._dirty = True

    def _su(self, p: List[int]) -> None:
        self._scroll_up(self._count(p))

    def _sd(self, p: List[int]) -> None:
        self._scroll_down(self._count(p))

    def _decstbm(self, p: List[int]) -> None:
        # Scroll regions are not modelled; like xterm, setting one homes the cursor.
        self._goto(0, 0)

    def _scosc(self, p: List[int]) -> None:
        if not p:
            self._saved = (self._row, self._col)

    def _scorc(self, p: List[int]) -> None:
        if not p:
            self._goto(*self._saved)
