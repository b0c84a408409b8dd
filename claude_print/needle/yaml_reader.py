"""A small YAML reader for the subset NEEDLE's files use (the standard library has none),
anchors and aliases included, with serde_yaml 0.9's scalar rules; what it cannot read it
says so (`YamlError`), instead of guessing.
"""

from __future__ import annotations

import math
import re
from typing import Any, Dict, List, Optional, Tuple


class YamlError(ValueError):
    """A file this reader cannot read: bad YAML, or YAML outside its subset."""


class FileUnreadable(YamlError):
    """The file itself cannot be read (missing, a directory, not UTF-8): NEEDLE fails too."""


class Scalar:
    """A YAML scalar as written: its text (quotes removed) and whether it was plain."""

    __slots__ = ("plain", "text")

    def __init__(self, text: str, plain: bool = True) -> None:
        self.text = text
        self.plain = plain

    def __repr__(self) -> str:
        return f"Scalar({self.text!r}, plain={self.plain})"


# --- a YAML subset reader ----------------------------------------------------------------
#
# parse_yaml() gives nodes: Scalar, dict (key text -> node) and list. An alias is the very
# node its anchor names, as serde_yaml replays the anchored events. `<<` is a plain key.

_KEY_LINE = re.compile(
    r"""(?P<key>"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#'"{}\[\],:][^:#]*?)\s*:(?:\s+(?P<rest>.*))?$"""
)
_ANCHOR = re.compile(r"&([^\s,\[\]{}]+)(?:\s+(.*))?$")
_ALIAS = re.compile(r"\*([^\s,\[\]{}]+)$")
_PENDING = object()  # an anchor whose node is still being read
NULLS = ("~", "null", "Null", "NULL")
U64_MAX = (1 << 64) - 1
_RADIXES = (("0x", 16, "[0-9a-fA-F]+"), ("0o", 8, "[0-7]+"), ("0b", 2, "[01]+"))


def _strip_comment(text: str) -> str:
    """`text` without a trailing ` # comment` (quotes respected)."""
    quote = ""
    for i, c in enumerate(text):
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i].rstrip()
    return text.rstrip()


def _unquote(text: str, line: int) -> str:
    if len(text) < 2 or not text.endswith(text[0]):
        raise YamlError(f"line {line}: unterminated string")
    if text[0] == "'":
        return text[1:-1].replace("''", "'")
    return re.sub(
        r"\\(u[0-9a-fA-F]{4}|.)",
        lambda m: (
            chr(int(m.group(1)[1:], 16))
            if m.group(1)[0] == "u"
            else {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}.get(m.group(1), m.group(1))
        ),
        text[1:-1],
    )


def _split_anchor(text: str, line: int) -> Tuple[str, str]:
    match = _ANCHOR.match(text)
    if match is None:
        raise YamlError(f"line {line}: a bad anchor")
    return match.group(1), match.group(2) or ""


def _inline(text: str, line: int, lines: _Lines) -> Any:
    """A value written on one line: a scalar, a flow collection, an alias, anchored or not."""
    text = text.strip()
    anchor: Optional[str] = None
    if text.startswith("&"):
        anchor, text = _split_anchor(text, line)
        lines.anchors[anchor] = _PENDING
    if text.startswith("*"):
        match = _ALIAS.match(text)
        if match is None or anchor is not None:
            raise YamlError(f"line {line}: a bad alias")
        return lines.alias(match.group(1), line)
    if text.startswith(('"', "'")):
        node: Any = Scalar(_unquote(text, line), plain=False)
    elif text.startswith(("[", "{")):
        node = _flow(text, line, lines)
    elif text.startswith(("&", "!", "|", ">", "%", "@", "`")):
        raise YamlError(f"line {line}: {text[:1]!r} is not supported here")
    else:
        node = Scalar(text)
    if anchor is not None:
        lines.anchors[anchor] = node
    return node


def _key(text: str, line: int) -> str:
    if text.startswith(('"', "'")):
        return _unquote(text, line)
    if text.startswith(("&", "*", "!", "|", ">", "%", "@", "`")):
        raise YamlError(f"line {line}: a key starting with {text[:1]!r} is not supported")
    return text


def _flow(text: str, line: int, lines: _Lines) -> Any:
    """`[]`, `{}`, and flat flow collections of scalars or aliases: `[a, *b]`, `{a: 1}`."""
    close = "]" if text[0] == "[" else "}"
    if not text.endswith(close):
        raise YamlError(f"line {line}: a flow collection must end on its line")
    inner = text[1:-1].strip()
    if re.search(r"[\[\]{}]", inner):
        raise YamlError(f"line {line}: nested flow collections are not supported")
    items = [part.strip() for part in inner.split(",")] if inner else []
    if items and items[-1] == "":
        items.pop()
    if close == "]":
        return [_inline(item, line, lines) for item in items]
    mapping: Dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition(":")
        if not sep:
            raise YamlError(f"line {line}: expected `key: value` in a flow mapping")
        key = _key(key.strip(), line)
        if key in mapping:
            raise YamlError(f"line {line}: duplicate key {key!r}")
        mapping[key] = _inline(value, line, lines)
    return mapping


class _Lines:
    def __init__(self, text: str) -> None:
        self.raw = text.splitlines()
        self.items: List[Tuple[int, int, str]] = []  # (line number, indent, content)
        self.anchors: Dict[str, Any] = {}
        for number, line in enumerate(self.raw, 1):
            if "\t" in line[: len(line) - len(line.lstrip())]:
                raise YamlError(f"line {number}: a tab in the indentation")
            content = _strip_comment(line.strip()) if not line.lstrip().startswith("#") else ""
            if not content or (not self.items and content == "---"):
                continue
            if content.startswith(("---", "...")) and len(line) - len(line.lstrip()) == 0:
                raise YamlError(f"line {number}: only one document is supported")
            self.items.append((number, len(line) - len(line.lstrip()), content))
        self.pos = 0

    def peek(self) -> Optional[Tuple[int, int, str]]:
        return self.items[self.pos] if self.pos < len(self.items) else None

    def alias(self, name: str, line: int) -> Any:
        node = self.anchors.get(name)
        if node is None:
            raise YamlError(f"line {line}: alias *{name} has no anchor before it")
        if node is _PENDING:
            raise YamlError(f"line {line}: alias *{name} is inside its own anchor")
        return node


def _is_item(content: str) -> bool:
    return content == "-" or content.startswith("- ")


def _block_scalar(lines: _Lines, header: str, number: int, parent_indent: int) -> str:
    style, chomp = header[0], header[1:]
    if chomp not in ("", "-", "+"):
        raise YamlError(f"line {number}: block scalar indicator {header!r} is not supported")
    body: List[str] = []
    indent: Optional[int] = None
    raw_index = number  # raw line index after the header (0-based index == number)
    while raw_index < len(lines.raw):
        raw = lines.raw[raw_index]
        stripped = raw.strip()
        this_indent = len(raw) - len(raw.lstrip())
        if stripped and this_indent <= parent_indent:
            break
        if stripped and indent is None:
            indent = this_indent
        body.append(raw[indent:] if (stripped and indent is not None) else "")
        raw_index += 1
    while lines.pos < len(lines.items) and lines.items[lines.pos][0] <= raw_index:
        lines.pos += 1
    trailing = 0
    while trailing < len(body) and body[len(body) - 1 - trailing] == "":
        trailing += 1
    core = body[: len(body) - trailing]
    joined = "\n".join(core)
    text = joined if style == "|" else re.sub(r"(?<!\n)\n(?!\n)", " ", joined)
    if chomp == "-":
        return text
    if chomp == "+":
        return text + "\n" * (trailing + 1)
    return text + "\n" if core else ""


def _node(lines: _Lines, indent: int) -> Any:
    first = lines.peek()
    if first is None or first[1] < indent:
        return Scalar("")
    if _is_item(first[2]):
        return _sequence(lines, first[1])
    return _mapping(lines, first[1])


def _value_after(lines: _Lines, rest: Optional[str], number: int, indent: int) -> Any:
    anchor: Optional[str] = None
    if rest is not None and rest.startswith("&"):
        anchor, rest = _split_anchor(rest, number)
        lines.anchors[anchor] = _PENDING
    if not rest:
        nxt = lines.peek()
        if nxt is not None and (nxt[1] > indent or (nxt[1] == indent and _is_item(nxt[2]))):
            node = _node(lines, nxt[1])
        else:
            node = Scalar("")
    elif rest[:1] in ("|", ">"):
        node = Scalar(_block_scalar(lines, rest, number, indent), plain=False)
    elif anchor is not None and rest.startswith("*"):
        raise YamlError(f"line {number}: an alias cannot have an anchor")
    else:
        node = _inline(rest, number, lines)
    if anchor is not None:
        lines.anchors[anchor] = node
    return node


def _mapping(lines: _Lines, indent: int) -> Dict[str, Any]:
    result: Dict[str, Any] = {}
    while True:
        item = lines.peek()
        if item is None or item[1] < indent:
            return result
        number, this_indent, content = item
        if this_indent > indent:
            raise YamlError(f"line {number}: unexpected indentation")
        match = _KEY_LINE.match(content)
        if match is None:
            raise YamlError(f"line {number}: expected `key: value`")
        lines.pos += 1
        key = _key(match.group("key"), number)
        if key in result:
            raise YamlError(f"line {number}: duplicate key {key!r}")
        result[key] = _value_after(lines, match.group("rest"), number, indent)


def _sequence(lines: _Lines, indent: int) -> List[Any]:
    result: List[Any] = []
    while True:
        item = lines.peek()
        if item is None or item[1] < indent:
            return result
        number, this_indent, content = item
        if this_indent > indent or not _is_item(content):
            if this_indent == indent:
                return result  # a mapping key at the same indent ends the sequence
            raise YamlError(f"line {number}: unexpected indentation")
        rest = content[1:].lstrip()
        inner_indent = this_indent + (len(content) - len(rest))
        if not rest:
            lines.pos += 1
            result.append(_value_after(lines, None, number, this_indent))
        elif _KEY_LINE.match(rest) and not rest.startswith(("'", '"', "[", "{")):
            # `- key: value`: a mapping whose first key sits after the dash.
            lines.items[lines.pos] = (number, inner_indent, rest)
            result.append(_mapping(lines, inner_indent))
        else:
            lines.pos += 1
            result.append(_value_after(lines, rest, number, this_indent))


def parse_yaml(text: str) -> Any:
    """One YAML document of the subset NEEDLE's files use, as nodes (see above)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = _Lines(text)
    first = lines.peek()
    if first is None:
        return Scalar("")
    if not (_is_item(first[2]) or _KEY_LINE.match(first[2])):
        node = _inline(first[2], first[0], lines)
        if len(lines.items) > 1:
            raise YamlError(f"line {lines.items[1][0]}: more than one value at the top")
        return node
    node = _node(lines, first[1])
    leftover = lines.peek()
    if leftover is not None:
        raise YamlError(f"line {leftover[0]}: unexpected indentation")
    return node


def parse_yaml_file(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise FileUnreadable(f"cannot read it ({exc})") from None
    return parse_yaml(text)


def parse_unsigned(text: str) -> Optional[int]:
    """serde_yaml's unsigned integer: `12`, `+12`, `0x1f`, `0o17`, `0b101`; not `012`."""
    rest = text[1:] if text.startswith("+") else text
    for prefix, base, digits in _RADIXES:
        if rest.startswith(prefix) and re.fullmatch(digits, rest[2:]):
            return int(rest[2:], base)
    if _digits_but_not_number(text) or not re.fullmatch("[0-9]+", rest):
        return None
    return int(rest)


def _digits_but_not_number(text: str) -> bool:
    """A leading zero followed by digits is a string (YAML 1.2, as serde_yaml reads it)."""
    digits = text[1:] if text.startswith(("+", "-")) else text
    return len(digits) > 1 and digits[0] == "0" and bool(re.fullmatch("[0-9]+", digits))


def _parse_int(text: str) -> Optional[int]:
    value = parse_unsigned(text)
    if value is not None:
        return value if value < 1 << 128 else None
    if not text.startswith("-"):
        return None
    for prefix, base, digits in _RADIXES:
        if text[1:].startswith(prefix) and re.fullmatch(digits, text[3:]):
            value = -int(text[3:], base)
            return value if value >= -(1 << 127) else None
    if _digits_but_not_number(text) or not re.fullmatch("-[0-9]+", text):
        return None
    value = int(text)
    return value if value >= -(1 << 127) else None


def parse_float(text: str) -> Optional[float]:
    """serde_yaml's float: Rust's f64 syntax (finite), or `.inf`, `-.inf`, `.nan`."""
    rest = text
    if text.startswith("+"):
        rest = text[1:]
        if rest.startswith(("+", "-")):
            return None
    if rest in (".inf", ".Inf", ".INF"):
        return math.inf
    if text in ("-.inf", "-.Inf", "-.INF"):
        return -math.inf
    if text in (".nan", ".NaN", ".NAN"):
        return math.nan
    if re.fullmatch(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", rest):
        value = float(rest)
        if math.isfinite(value):
            return value
    return None


def resolve(node: Any) -> Any:
    """Plain Python values: a plain scalar typed as serde_yaml types one it is free to
    (null, bool, int, float, else text); a quoted or block scalar is text."""
    if isinstance(node, dict):
        return {key: resolve(value) for key, value in node.items()}
    if isinstance(node, list):
        return [resolve(value) for value in node]
    assert isinstance(node, Scalar)
    text = node.text
    if not node.plain:
        return text
    if text == "" or text in NULLS:
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    value = _parse_int(text)
    if value is not None:
        return value
    if not _digits_but_not_number(text):
        number = parse_float(text)
        if number is not None:
            return number
    return text


def load_yaml(text: str) -> Any:
    """Read one YAML document in the subset NEEDLE's config and adapters use."""
    return resolve(parse_yaml(text))


def load_yaml_file(path: str) -> Any:
    return resolve(parse_yaml_file(path))
