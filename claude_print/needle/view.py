"""NEEDLE's view of claude-print: where it reads adapters and whether it would use ours.

NEEDLE (github jedarden/NEEDLE, Rust) is the fleet runner claude-print was made for.
What follows is from the source of its main branch at commit 8f5eba4 (2026-05-05;
Cargo.toml version 0.2.0: tag v0.2.0 of 2026-04-27 plus 14 commits, none in these parts):
src/config/mod.rs, src/dispatch/mod.rs, src/worker/mod.rs, src/cli/mod.rs, and
serde_yaml 0.9 (its Cargo.toml; 0.9.34 is the last 0.9 release).

- `needle run` resolves its config in layers: built-in defaults, the global
  `$HOME/.config/needle/config.yaml` (no XDG_CONFIG_HOME; /tmp without HOME), the
  workspace's `.needle.yaml`, `NEEDLE_*` variables (`NEEDLE_AGENT__DEFAULT`, the part
  after `NEEDLE_` in any letter case), then `--agent`. The workspace is `--workspace`, else the
  global `workspace.default`, else the directory `needle run` starts in; NEEDLE reads
  `.needle.yaml` there only (no parent directories). A workspace file may set
  `agent.default` and `agent.timeout`, not `agent.adapters_dir`. A config file that does
  not deserialize (bad YAML, or a wrong type in a field NEEDLE reads) stops `needle run`
  with an error;
- it loads adapters only from `agent.adapters_dir`, default
  `$HOME/.config/needle/adapters` (a path taken as written: no `~` expansion), every
  file whose extension is `yaml` or `yml`, each into its AgentAdapter struct. One file
  that cannot be read or does not deserialize (bad YAML, a missing field, a wrong type in
  any field, nested ones included) fails the whole load, and the worker then runs with
  its built-in adapters only. A missing or empty folder gives the built-ins too;
- `agent.default` (default `claude`) names the adapter it runs; an adapter it does not
  have means its built-in `claude-sonnet`, that is `claude --print`: the case
  claude-print exists to avoid, and NEEDLE only logs a warning;
- serde_yaml 0.9 resolves anchors and aliases but applies no merge keys: `<<` is an
  ordinary key, which a struct ignores, so what it would merge is missing. A `String`
  field takes any scalar (`1`, `true`, `~` as text), an integer field only an unquoted
  number. `input_method` and `token_extraction` are internally tagged enums, read through
  serde's buffered content: there `flag: 1` is no string and `input_group: "1"` no number.

`claude-print --check` calls `check()` when NEEDLE is set up on the machine; it reads the
`.needle.yaml` of the workspace NEEDLE would use when run from the current directory. Of
the config files it checks the types of the fields that decide which adapter runs (and
`pricing`), not every section. This module also holds a small YAML reader (the standard
library has none) for the subset NEEDLE's files use, anchors and aliases included; what
it cannot read it says so, instead of guessing.
"""

from __future__ import annotations

import math
import os
import re
import shutil
from typing import Any, Dict, List, Mapping, Optional, Tuple

ADAPTER_NAME = "claude-print"
CONFIG_RELATIVE = os.path.join(".config", "needle", "config.yaml")
ADAPTERS_RELATIVE = os.path.join(".config", "needle", "adapters")
WORKSPACE_FILE = ".needle.yaml"
DEFAULT_AGENT = "claude"
# NEEDLE's default `pricing:` table (src/cost/mod.rs); a `pricing:` key replaces it.
DEFAULT_PRICED_MODELS = ("claude-sonnet-4-6", "claude-opus-4-6", "gpt-4")


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
_NULLS = ("~", "null", "Null", "NULL")
_U64_MAX = (1 << 64) - 1
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
    if text == "" or text in _NULLS:
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


# --- serde's view of the nodes ---------------------------------------------------------------
#
# A schema names what serde_yaml 0.9 deserializes a field into: "str" (String, PathBuf),
# "opt_str", "u64", "opt_u64", "f64", "str_map" (HashMap<String, String>), "str_list"
# (Vec<String>), ("struct", fields, required), ("opt_struct", fields, required),
# ("map_of", schema) and ("enum", variants) for a `#[serde(tag = "method")]` enum, whose
# fields are read from serde's buffered content: "c_str" and "c_usize" there.

INPUT_METHOD = (
    "enum",
    {"stdin": {}, "file": {"path_template": "c_str"}, "args": {"flag": "c_str"}},
)
TOKEN_EXTRACTION = (
    "enum",
    {
        "json_field": {"input_path": "c_str", "output_path": "c_str"},
        "regex": {"pattern": "c_str", "input_group": "c_usize", "output_group": "c_usize"},
        "none": {},
    },
)
# NEEDLE's AgentAdapter (src/dispatch/mod.rs); serde ignores any other key.
ADAPTER_SCHEMA: Dict[str, Any] = {
    "name": "str",
    "description": "opt_str",
    "agent_cli": "str",
    "version_command": "opt_str",
    "input_method": INPUT_METHOD,
    "invoke_template": "str",
    "environment": "str_map",
    "timeout_secs": "u64",
    "provider": "opt_str",
    "model": "opt_str",
    "token_extraction": TOKEN_EXTRACTION,
    "output_transform": "opt_str",
}
ADAPTER_REQUIRED = ("name", "agent_cli", "invoke_template")
# The parts of Config (src/config/mod.rs, src/cost/mod.rs) that decide what runs.
CONFIG_SCHEMA = (
    "struct",
    {
        "agent": (
            "struct",
            {"default": "str", "args": "str_list", "timeout": "u64", "adapters_dir": "str"},
            (),
        ),
        "workspace": ("struct", {"default": "str", "home": "str", "labels": "str_list"}, ()),
        "pricing": (
            "map_of",
            (
                "struct",
                {"input_per_million": "f64", "output_per_million": "f64"},
                ("input_per_million", "output_per_million"),
            ),
        ),
    },
    (),
)
# WorkspaceOverrides (src/config/mod.rs), without `prompt`, `gates` and `strands`.
WORKSPACE_SCHEMA = (
    "struct",
    {
        "agent": ("opt_struct", {"default": "opt_str", "timeout": "opt_u64"}, ()),
        "workspace": ("opt_struct", {"labels": "str_list"}, ()),
        "verification": "opt_str_list",
    },
    (),
)


def _is_empty(node: Any) -> bool:
    """An empty plain scalar, which serde_yaml reads as an empty map or list."""
    return isinstance(node, Scalar) and node.plain and node.text == ""


def _is_null(node: Any) -> bool:
    return isinstance(node, Scalar) and node.plain and (node.text == "" or node.text in _NULLS)


def _text(node: Any) -> Optional[str]:
    """The text serde gives a String field, or None when `node` is no scalar."""
    return node.text if isinstance(node, Scalar) else None


def _opt_text(node: Any) -> Optional[str]:
    """The text of an Option<String>: None for null."""
    return None if _is_null(node) else _text(node)


def _problems(schema: Any, node: Any, path: str) -> List[str]:
    """Why serde_yaml would refuse `node` as `schema` (empty: it would not)."""
    if isinstance(schema, tuple):
        kind = schema[0]
        if kind == "enum":
            return _tagged_problems(node, path, schema[1])
        if kind == "map_of":
            if _is_empty(node):
                return []
            if not isinstance(node, dict):
                return [f"{path} must be a mapping"]
            return [p for k, v in node.items() for p in _problems(schema[1], v, f"{path}.{k}")]
        if kind == "opt_struct" and _is_null(node):
            return []
        fields, required = schema[1], schema[2]
        if _is_empty(node):
            node = {}
        if not isinstance(node, dict):
            return [f"{path or 'the top level'} must be a mapping"]
        where = f"{path}." if path else ""
        problems = [f"missing {where}{key}" for key in required if key not in node]
        for key, sub in fields.items():
            if key in node:
                problems += _problems(sub, node[key], f"{where}{key}")
        if problems and "<<" in node and any(p.startswith("missing") for p in problems):
            problems.append(f"serde_yaml 0.9 merges no `{where}<<` (it is a plain key)")
        return problems
    if schema in ("str", "opt_str"):
        return [] if isinstance(node, Scalar) else [f"{path} must be a string"]
    if schema in ("u64", "opt_u64"):
        if schema == "opt_u64" and _is_null(node):
            return []
        value = parse_unsigned(node.text) if isinstance(node, Scalar) and node.plain else None
        if value is None or value > _U64_MAX:
            return [f"{path} must be a whole number (unquoted)"]
        return []
    if schema == "f64":
        ok = isinstance(node, Scalar) and node.plain and parse_float(node.text) is not None
        return [] if ok else [f"{path} must be a number (unquoted)"]
    if schema == "str_map":
        if _is_empty(node) or (
            isinstance(node, dict) and all(isinstance(v, Scalar) for v in node.values())
        ):
            return []
        return [f"{path} must map names to strings"]
    if schema == "opt_str_list" and _is_null(node):
        return []
    if _is_empty(node) or (isinstance(node, list) and all(isinstance(v, Scalar) for v in node)):
        return []
    return [f"{path} must be a list of strings"]


def _tagged_problems(node: Any, path: str, variants: Dict[str, Dict[str, str]]) -> List[str]:
    """An internally tagged enum (`method:` names the variant)."""
    if isinstance(node, list):
        raise YamlError(f"{path}: its list form is not checked here")
    if not isinstance(node, dict):
        return [f"{path} must be a mapping with `method:`"]
    names = ", ".join(sorted(variants))
    tag = node.get("method")
    if tag is None:
        return [f"{path}.method is missing (one of {names})"]
    if not isinstance(tag, Scalar) or tag.text not in variants:
        return [f"{path}.method must be one of {names}"]
    problems = []
    for field, kind in variants[tag.text].items():
        if field not in node:
            problems.append(f"{path} ({tag.text}) needs {field}")
            continue
        value = resolve(node[field]) if isinstance(node[field], Scalar) else None
        if kind == "c_str" and not isinstance(value, str):
            problems.append(f"{path}.{field} must be a string (quote it)")
        elif kind == "c_usize" and not (type(value) is int and 0 <= value <= _U64_MAX):
            problems.append(f"{path}.{field} must be a whole number (unquoted)")
    return problems


def adapter_problems(node: Any) -> List[str]:
    """Why serde_yaml would refuse `node` (from parse_yaml) as NEEDLE's AgentAdapter.

    Raises YamlError for what this module does not check."""
    return _problems(("struct", ADAPTER_SCHEMA, ADAPTER_REQUIRED), node, "")


# --- NEEDLE's rules -------------------------------------------------------------------------


def config_path(environ: Mapping[str, str]) -> str:
    """NEEDLE's global config (`dirs_or_home`: $HOME, else /tmp)."""
    return os.path.join(environ.get("HOME") or "/tmp", CONFIG_RELATIVE)


def default_adapters_dir(environ: Mapping[str, str]) -> str:
    return os.path.join(environ.get("HOME") or "/tmp", ADAPTERS_RELATIVE)


def _field(node: Any, *keys: str) -> Any:
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node


class NeedleConfig:
    """The parts of NEEDLE's config that decide whether it runs claude-print."""

    def __init__(self, environ: Mapping[str, str], cwd: Optional[str] = None) -> None:
        if cwd is None:
            try:
                cwd = os.getcwd()
            except OSError:
                cwd = "."
        self.path = config_path(environ)
        self.problems: List[str] = []  # why `needle run` would stop, or may
        doc = self._load(self.path, CONFIG_SCHEMA, "its config")
        default = _text(_field(doc, "agent", "default"))
        self.agent_default = DEFAULT_AGENT if default is None else default
        self.agent_default_from = "NEEDLE's default" if default is None else self.path
        self.agent_default_file = self.path  # where to set it
        self.cwd = cwd
        workspace = _text(_field(doc, "workspace", "default"))
        self.workspace = os.path.join(cwd, workspace) if workspace else cwd
        self.workspace_file = os.path.join(self.workspace, WORKSPACE_FILE)
        if os.path.exists(self.workspace_file):
            local = self._load(self.workspace_file, WORKSPACE_SCHEMA, "the workspace config")
            default = _opt_text(_field(local, "agent", "default"))
            if default is not None:
                self.agent_default, self.agent_default_from = default, self.workspace_file
                self.agent_default_file = self.workspace_file
        for key, value in environ.items():  # apply_env_overrides: the last one wins
            if key.startswith("NEEDLE_") and key[7:].lower().replace("__", ".") == "agent.default":
                self.agent_default, self.agent_default_from = value, key
        adapters = _text(_field(doc, "agent", "adapters_dir"))
        self.adapters_dir = adapters or default_adapters_dir(environ)
        pricing = _field(doc, "pricing")
        self.priced_models: Tuple[str, ...] = DEFAULT_PRICED_MODELS
        if isinstance(pricing, dict):
            self.priced_models = tuple(pricing)
        elif _is_empty(pricing):
            self.priced_models = ()

    def _load(self, path: str, schema: Any, what: str) -> Any:
        if not os.path.exists(path):
            return None
        try:
            doc = parse_yaml_file(path)
        except FileUnreadable as exc:
            self.problems.append(f"NEEDLE cannot load {path} ({what}): {exc}; `needle run` stops")
            return None
        except YamlError as exc:
            self.problems.append(
                f"cannot read {path} ({what}): {exc}; claude-print reads a YAML subset, "
                "and if NEEDLE cannot parse it either, `needle run` stops with an error"
            )
            return None
        problems = _problems(schema, doc, "")
        if problems:
            self.problems.append(
                f"NEEDLE cannot load {path} ({what}): {'; '.join(problems)}; "
                "`needle run` stops with an error"
            )
        return doc


def is_adapter_file(name: str) -> bool:
    """NEEDLE's test: Rust's `Path::extension()` is `yaml` or `yml` (`.yaml` alone has none)."""
    stem, dot, extension = name.rpartition(".")
    return bool(dot and stem) and extension in ("yaml", "yml")


def is_set_up(environ: Mapping[str, str]) -> bool:
    """NEEDLE is installed or configured here: its config dir, or `needle` on PATH."""
    home = environ.get("HOME") or ""
    return bool(
        (home and os.path.isdir(os.path.join(home, ".config", "needle")))
        or shutil.which("needle", path=environ.get("PATH"))
    )


def check(environ: Mapping[str, str], cwd: Optional[str] = None) -> List[Tuple[str, str]]:
    """(status, detail) lines for `--check`: "ok" or "warn"."""
    config = NeedleConfig(environ, cwd)
    lines: List[Tuple[str, str]] = [("warn", problem) for problem in config.problems]
    directory = config.adapters_dir
    where = f"{directory} (NEEDLE's agent.adapters_dir)"
    ours: List[str] = []
    broken: List[str] = []  # NEEDLE fails on these
    unreadable: List[str] = []  # this module cannot tell
    names: List[str] = []
    full = os.path.join(config.cwd, directory)  # a relative one: from NEEDLE's cwd
    missing = not os.path.isdir(full)
    if missing:
        lines.append(
            (
                "warn",
                f"{where} does not exist: NEEDLE cannot load claude-print "
                "(run install.sh, or copy claude-print.yaml there)",
            )
        )
    else:
        try:
            names = sorted(n for n in os.listdir(full) if is_adapter_file(n))
        except OSError as exc:
            broken.append(f"cannot list it ({exc})")
    for name in names:
        try:
            doc = parse_yaml_file(os.path.join(full, name))
            problems = adapter_problems(doc)
        except FileUnreadable as exc:
            broken.append(f"{name}: {exc}")
            continue
        except YamlError as exc:
            unreadable.append(f"{name}: {exc}")
            continue
        if problems:
            broken.append(f"{name}: {'; '.join(problems)}")
        elif _text(doc["name"]) == ADAPTER_NAME:
            ours.append(name)
            model = _opt_text(doc.get("model"))
            if model not in config.priced_models:
                lines.append(
                    (
                        "warn",
                        f"{name}: model {model!r} has no entry in "
                        "NEEDLE's pricing table, so NEEDLE does not cost its runs (add "
                        "one under `pricing:` in its config)",
                    )
                )
    if broken:
        lines.append(
            (
                "warn",
                f"NEEDLE loads no adapter from {directory} while a file there "
                f"does not parse as one (it then runs its built-ins only, so `claude "
                f"--print`): {' | '.join(broken)}",
            )
        )
    elif unreadable:
        lines.append(
            (
                "warn",
                f"NEEDLE loads no adapter from {directory} if a file there does not parse "
                f"as one, and claude-print's YAML reader cannot tell for: "
                f"{' | '.join(unreadable)}",
            )
        )
    elif not missing and not ours:  # an empty folder too
        lines.append(
            (
                "warn",
                f"no adapter named {ADAPTER_NAME} in {where}: copy "
                "claude-print.yaml there (install.sh does)",
            )
        )
    if config.agent_default != ADAPTER_NAME:
        if config.agent_default_from.startswith("NEEDLE_"):
            fix = f"set {config.agent_default_from}={ADAPTER_NAME} or unset it"
        else:
            fix = f"set `agent.default: {ADAPTER_NAME}` in {config.agent_default_file}"
            if config.agent_default_file == config.workspace_file:
                fix += f" (it overrides {config.path})"
        lines.append(
            (
                "warn",
                f"NEEDLE's agent.default is {config.agent_default!r} "
                f"({config.agent_default_from}): NEEDLE runs `claude --print`, not "
                f"claude-print; {fix}, or run NEEDLE with --agent {ADAPTER_NAME}",
            )
        )
    if not lines:
        lines.append(
            (
                "ok",
                f"NEEDLE runs claude-print ({', '.join(ours)} in {directory}, "
                f"agent.default from {config.agent_default_from})",
            )
        )
    return lines


def main(argv: List[str]) -> int:
    """`python -m claude_print.needle adapters-dir`: where NEEDLE reads adapters (install.sh)."""
    if argv[1:] == ["adapters-dir"]:
        print(NeedleConfig(os.environ).adapters_dir)
        return 0
    return 2


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv))
