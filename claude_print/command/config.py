"""User defaults from ``$XDG_CONFIG_HOME/claude-print/config.toml``.

The file is optional and only ever read (never created or written)::

    # ~/.config/claude-print/config.toml
    [defaults]
    model = "sonnet"
    max_turns = 8
    timeout_secs = 900      # integer or float
    inherit_hooks = false
    claude_binary = "/opt/claude/bin/claude"
    warm = true             # the warm start (--warm) for every run
    warm_idle_secs = 60     # how long a warm TUI waits for its run
    warm_pool = 1           # how many warm TUIs wait per key (runs that start together)

On Python 3.11+ the file is parsed with :mod:`tomllib`. Older interpreters use a
small parser for the flat subset above: comments, ``[section]`` headers,
``key = value`` with basic ("...") or literal ('...') strings, integers, floats
and booleans. Any error (bad syntax, unknown section or key, wrong type) raises
:class:`ClaudePrintError` with exit code 2, naming the file and the line.
"""

from __future__ import annotations

import os
import re
import sys
from types import ModuleType
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

from claude_print.errors import EXIT_USAGE, ClaudePrintError

SECTION = "defaults"


class Defaults(NamedTuple):
    """Values from the config file; None where the file does not set one."""

    model: Optional[str] = None
    max_turns: Optional[int] = None
    timeout_secs: Optional[float] = None  # an int or a float, as written
    inherit_hooks: Optional[bool] = None
    claude_binary: Optional[str] = None
    warm: Optional[bool] = None
    warm_idle_secs: Optional[float] = None
    warm_pool: Optional[int] = None


def config_path(environ: Mapping[str, str]) -> Optional[str]:
    """Where the config file would be, or None when neither XDG_CONFIG_HOME nor HOME is set.

    A relative XDG_CONFIG_HOME is ignored, as the XDG Base Directory spec says.
    """
    xdg = environ.get("XDG_CONFIG_HOME", "")
    if xdg and os.path.isabs(xdg):
        base = xdg
    else:
        home = environ.get("HOME", "")
        if not home:
            return None
        base = os.path.join(home, ".config")
    return os.path.join(base, "claude-print", "config.toml")


def load_defaults(environ: Mapping[str, str]) -> Defaults:
    """Read the config file; all None when there is none."""
    path = config_path(environ)
    if path is None:
        return Defaults()
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return Defaults()
    except OSError as e:
        raise ClaudePrintError(
            f"cannot read config file {path}: {e.strerror or e}", EXIT_USAGE
        ) from None
    return parse_defaults(raw, path)


def parse_defaults(raw: bytes, path: str) -> Defaults:
    """Parse and check the bytes of a config file (``path`` is only for messages)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise _error(path, line, "not valid UTF-8") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    toml = _tomllib()
    if toml is not None:
        tables = _parse_with_tomllib(toml, text, path)
    else:
        tables = _parse_subset(text, path)
    return _build(tables, path)


def _tomllib() -> Optional[ModuleType]:
    """tomllib where the Python has it; imported only when a config file exists."""
    if sys.version_info >= (3, 11):
        import tomllib  # novermin

        return tomllib
    return None


# One parsed file: {section ("" = top level): {key: (value, line or None)}}, plus each
# section's header line under the key "".
_Tables = Dict[str, Dict[str, Tuple[Any, Optional[int]]]]

_FIELDS: Dict[str, str] = {  # key: what its value must be
    "model": "a string",
    "max_turns": "an integer",
    "timeout_secs": "a number",
    "inherit_hooks": "true or false",
    "claude_binary": "a string",
    "warm": "true or false",
    "warm_idle_secs": "a number",
    "warm_pool": "an integer",
}


def _type_ok(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return key in ("inherit_hooks", "warm")
    if key in ("max_turns", "warm_pool"):
        return isinstance(value, int)
    if key in ("timeout_secs", "warm_idle_secs"):
        return isinstance(value, (int, float))
    if key in ("inherit_hooks", "warm"):
        return False
    return isinstance(value, str)


def _error(path: str, line: Optional[int], message: str) -> ClaudePrintError:
    where = f"{path}, line {line}" if line is not None else path
    return ClaudePrintError(f"config file {where}: {message}", EXIT_USAGE)


def _build(tables: _Tables, path: str) -> Defaults:
    for section, entries in tables.items():
        if section == "" and entries:
            key, (_, line) = next(iter(entries.items()))
            raise _error(path, line, f"{key!r} must be set inside a [{SECTION}] section")
        if section not in ("", SECTION):
            raise _error(
                path,
                entries.get("", (None, None))[1],
                f"unknown section [{section}] (the only section is [{SECTION}])",
            )
    values: Dict[str, Any] = {}
    for key, (value, line) in tables.get(SECTION, {}).items():
        if key == "":
            continue
        if key not in _FIELDS:
            known = ", ".join(sorted(_FIELDS))
            raise _error(path, line, f"unknown key {key!r} in [{SECTION}] (known keys: {known})")
        if not _type_ok(key, value):
            raise _error(path, line, f"{key} must be {_FIELDS[key]}, not {_toml_type(value)}")
        if isinstance(value, str) and not value.strip():
            raise _error(path, line, f"{key} must not be empty")
        if key in ("max_turns", "timeout_secs", "warm_idle_secs", "warm_pool") and not value > 0:
            raise _error(path, line, f"{key} must be greater than 0, not {value!r}")
        values[key] = value
    return Defaults(**values)


def _toml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"  # dates and times


# --- tomllib (Python 3.11+) -------------------------------------------------------------

_TOMLLIB_LINE = re.compile(r"\(at line (\d+), column \d+\)")


def _parse_with_tomllib(toml: ModuleType, text: str, path: str) -> _Tables:
    try:
        doc: Dict[str, Any] = toml.loads(text)
    except toml.TOMLDecodeError as e:
        message = str(e)
        m = _TOMLLIB_LINE.search(message)
        line: Optional[int] = getattr(e, "lineno", None)  # Python 3.14+
        if m:
            line = int(m.group(1))
            message = message[: m.start()].rstrip()
        elif line is not None:
            message = getattr(e, "msg", message)
        elif "end of document" in message:
            line = text.count("\n") + (0 if text.endswith("\n") else 1)
            message = message.replace("(at end of document)", "").rstrip()
        else:
            line = _subset_error_line(text, path)
        raise _error(path, line, f"invalid TOML: {message}") from None
    tables: _Tables = {}
    for name, value in doc.items():
        if isinstance(value, dict):
            entries: Dict[str, Tuple[Any, Optional[int]]] = {"": (None, _locate(text, name, None))}
            for key, item in value.items():
                entries[key] = (item, _locate(text, name, key))
            tables[name] = entries
        else:
            tables.setdefault("", {})[name] = (value, _locate(text, "", name))
    return tables


def _subset_error_line(text: str, path: str) -> Optional[int]:
    try:
        _parse_subset(text, path)
    except ClaudePrintError as e:
        m = re.search(r", line (\d+):", e.message)
        return int(m.group(1)) if m else None
    return None


_HEADER_RE = re.compile(r"\s*\[\s*([^\[\]]*?)\s*\]")
_KEY_RE = re.compile(r"\s*([\"']?)([A-Za-z0-9_.-]+)\1\s*=")


def _locate(text: str, section: str, key: Optional[str]) -> Optional[int]:
    """The line of ``[section]`` (key None) or of ``key = ...`` inside it, best effort."""
    current = ""
    for number, line in enumerate(text.splitlines(), 1):
        header = _HEADER_RE.match(line)
        if header and not line.lstrip().startswith("[["):
            current = header.group(1).strip("\"'")
            if key is None and current == section:
                return number
            continue
        m = _KEY_RE.match(line)
        if key is not None and m and current == section and m.group(2) == key:
            return number
    return None


# --- the fallback parser (Python 3.8 - 3.10) --------------------------------------------

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_DEC = r"(?:0|[1-9](?:_?[0-9])*)"
_DIGITS = r"[0-9](?:_?[0-9])*"
_INTEGER = re.compile(
    rf"[+-]?{_DEC}|0x[0-9A-Fa-f](?:_?[0-9A-Fa-f])*|0o[0-7](?:_?[0-7])*|0b[01](?:_?[01])*"
)
_FLOAT = re.compile(
    rf"[+-]?{_DEC}(?:\.{_DIGITS}(?:[eE][+-]?{_DIGITS})?|[eE][+-]?{_DIGITS})|[+-]?(?:inf|nan)"
)
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _parse_subset(text: str, path: str) -> _Tables:
    tables: _Tables = {"": {}}
    current = ""
    for number, line in enumerate(text.split("\n"), 1):
        if line.endswith("\r"):
            line = line[:-1]
        if _CONTROL.search(line):
            raise _error(path, number, "invalid TOML: control character")
        stripped = line.strip(" \t")
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("["):
            current = _parse_header(stripped, path, number)
            if current in tables:
                raise _error(path, number, f"invalid TOML: table [{current}] defined twice")
            tables[current] = {"": (None, number)}
            continue
        key, sep, rest = stripped.partition("=")
        key = key.strip(" \t")
        if not sep or not _BARE_KEY.fullmatch(key):
            raise _error(path, number, "invalid TOML: expected `key = value` or `[section]`")
        value, rest = _parse_value(rest.lstrip(" \t"), path, number)
        _expect_end(rest, path, number)
        if key in tables[current]:
            raise _error(path, number, f"invalid TOML: key {key!r} set twice")
        tables[current][key] = (value, number)
    if not tables[""]:
        del tables[""]
    return tables


def _parse_header(stripped: str, path: str, number: int) -> str:
    if stripped.startswith("[["):
        raise _error(path, number, _unsupported("arrays of tables"))
    end = stripped.find("]")
    name = stripped[1:end].strip(" \t") if end > 0 else ""
    if not _BARE_KEY.fullmatch(name):
        raise _error(path, number, "invalid TOML: expected a section name like [defaults]")
    _expect_end(stripped[end + 1 :], path, number)
    return name


def _expect_end(rest: str, path: str, number: int) -> None:
    rest = rest.strip(" \t")
    if rest and not rest.startswith("#"):
        raise _error(path, number, f"invalid TOML: unexpected {rest[:20]!r} after the value")


def _parse_value(s: str, path: str, number: int) -> Tuple[Any, str]:
    """One value at the start of ``s``; returns it and what follows."""
    if s.startswith(('"""', "'''")):
        raise _error(path, number, _unsupported("multi-line strings"))
    if s.startswith('"'):
        return _parse_basic_string(s, path, number)
    if s.startswith("'"):
        end = s.find("'", 1)
        if end < 0:
            raise _error(path, number, "invalid TOML: unterminated string")
        return s[1:end], s[end + 1 :]
    if s.startswith(("[", "{")):
        raise _error(path, number, _unsupported("arrays and inline tables"))
    token_match = re.match(r"[^\s#]+", s)
    token = token_match.group(0) if token_match else ""
    rest = s[len(token) :]
    if token in ("true", "false"):
        return token == "true", rest
    if _INTEGER.fullmatch(token):
        body = token.replace("_", "")
        if body[:2] in ("0x", "0o", "0b"):
            return int(body, 0), rest
        return int(body), rest
    if _FLOAT.fullmatch(token):
        return float(token.replace("_", "")), rest
    if re.match(r"\d{4}-\d{2}-\d{2}|\d{2}:\d{2}", token):
        raise _error(path, number, _unsupported("dates and times"))
    raise _error(path, number, "invalid TOML: expected a string, a number, true or false")


def _parse_basic_string(s: str, path: str, number: int) -> Tuple[str, str]:
    out: List[str] = []
    i = 1
    while i < len(s):
        c = s[i]
        if c == '"':
            return "".join(out), s[i + 1 :]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        esc = s[i + 1 : i + 2]
        if esc in _ESCAPES:
            out.append(_ESCAPES[esc])
            i += 2
        elif esc in ("u", "U"):
            width = 4 if esc == "u" else 8
            digits = s[i + 2 : i + 2 + width]
            if len(digits) != width or not re.fullmatch(r"[0-9A-Fa-f]+", digits):
                raise _error(path, number, "invalid TOML: bad \\u escape")
            code = int(digits, 16)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                raise _error(path, number, "invalid TOML: escape is not a Unicode scalar value")
            out.append(chr(code))
            i += 2 + width
        else:
            raise _error(path, number, f"invalid TOML: unknown escape \\{esc}")
    raise _error(path, number, "invalid TOML: unterminated string")


def _unsupported(what: str) -> str:
    return (
        f"{what} are not supported by claude-print's TOML reader on Python "
        f"{sys.version_info[0]}.{sys.version_info[1]} (Python 3.11+ reads full TOML)"
    )
