"""NEEDLE's view of claude-print: where it reads adapters and whether it would use ours.

NEEDLE (github jedarden/NEEDLE, Rust) is the fleet runner claude-print was made for.
What it does, from its source (src/config/mod.rs, src/dispatch/mod.rs):

- its config is `$HOME/.config/needle/config.yaml` (no XDG_CONFIG_HOME), overridden by
  `NEEDLE_AGENT__DEFAULT` and the like;
- it loads adapters only from `agent.adapters_dir`, default
  `$HOME/.config/needle/adapters` (a path taken as written: no `~` expansion), every
  `*.yaml` / `*.yml` file there. One file that fails to parse makes the whole load fail,
  and NEEDLE then runs with its built-in adapters only;
- `agent.default` (default `claude`) names the adapter it runs; an adapter it does not
  have means its built-in `claude-sonnet`, that is `claude --print`: the case
  claude-print exists to avoid, and NEEDLE only logs a warning.

`claude-print --check` calls `check()` when NEEDLE is set up on the machine. This
module also holds a small YAML reader (the standard library has none) for the subset
NEEDLE's files use; what it cannot read it says so, instead of guessing.
"""

from __future__ import annotations

import os
import re
import shutil
from typing import Any, Dict, List, Mapping, Optional, Tuple

ADAPTER_NAME = "claude-print"
CONFIG_RELATIVE = os.path.join(".config", "needle", "config.yaml")
ADAPTERS_RELATIVE = os.path.join(".config", "needle", "adapters")
DEFAULT_AGENT = "claude"
# NEEDLE's default `pricing:` table (src/cost/mod.rs); a `pricing:` key replaces it.
DEFAULT_PRICED_MODELS = ("claude-sonnet-4-6", "claude-opus-4-6", "gpt-4")


class YamlError(ValueError):
    """A file this reader cannot read: bad YAML, or YAML outside its subset."""


# --- a YAML subset reader ----------------------------------------------------------------

_KEY_LINE = re.compile(
    r"""(?P<key>"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#'"{}\[\],:][^:#]*?)\s*:(?:\s+(?P<rest>.*))?$"""
)


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


def _scalar(text: str, line: int) -> Any:
    text = text.strip()
    if text.startswith('"'):
        if len(text) < 2 or not text.endswith('"'):
            raise YamlError(f"line {line}: unterminated string")
        body = text[1:-1]
        out = re.sub(
            r"\\(u[0-9a-fA-F]{4}|.)",
            lambda m: (
                chr(int(m.group(1)[1:], 16))
                if m.group(1)[0] == "u"
                else {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}.get(m.group(1), m.group(1))
            ),
            body,
        )
        return out
    if text.startswith("'"):
        if len(text) < 2 or not text.endswith("'"):
            raise YamlError(f"line {line}: unterminated string")
        return text[1:-1].replace("''", "'")
    if text.startswith(("[", "{")):
        return _flow(text, line)
    if text.startswith(("&", "*", "!", "|", ">", "%", "@", "`")):
        raise YamlError(f"line {line}: {text[:1]!r} is not supported here")
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if re.fullmatch(r"[-+]?[0-9]+", text):
        return int(text)
    if re.fullmatch(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?", text):
        return float(text)
    return text


def _flow(text: str, line: int) -> Any:
    """`[]`, `{}`, and flat flow collections of scalars: `[a, b]`, `{a: 1}`."""
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
        return [_scalar(item, line) for item in items]
    mapping: Dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition(":")
        if not sep:
            raise YamlError(f"line {line}: expected `key: value` in a flow mapping")
        mapping[str(_scalar(key, line))] = _scalar(value, line)
    return mapping


class _Lines:
    def __init__(self, text: str) -> None:
        self.raw = text.splitlines()
        self.items: List[Tuple[int, int, str]] = []  # (line number, indent, content)
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
        return None
    if first[2] == "-" or first[2].startswith("- "):
        return _sequence(lines, first[1])
    return _mapping(lines, first[1])


def _value_after(lines: _Lines, rest: Optional[str], number: int, indent: int) -> Any:
    if rest is None or rest == "":
        nxt = lines.peek()
        if nxt is not None and (
            nxt[1] > indent or (nxt[1] == indent and (nxt[2] == "-" or nxt[2].startswith("- ")))
        ):
            return _node(lines, nxt[1])
        return None
    if rest[:1] in ("|", ">"):
        return _block_scalar(lines, rest, number, indent)
    return _scalar(rest, number)


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
        key = _scalar(match.group("key"), number)
        key = "null" if key is None else str(key).lower() if isinstance(key, bool) else str(key)
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
        if this_indent > indent or not (content == "-" or content.startswith("- ")):
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


def load_yaml(text: str) -> Any:
    """Read one YAML document in the subset NEEDLE's config and adapters use."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = _Lines(text)
    if lines.peek() is None:
        return None
    first = lines.items[0]
    if not (first[2] == "-" or first[2].startswith("- ") or _KEY_LINE.match(first[2])):
        value = _scalar(first[2], first[0])
        if len(lines.items) > 1:
            raise YamlError(f"line {lines.items[1][0]}: more than one value at the top")
        return value
    value = _node(lines, first[1])
    leftover = lines.peek()
    if leftover is not None:
        raise YamlError(f"line {leftover[0]}: unexpected indentation")
    return value


def load_yaml_file(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise YamlError(f"cannot read it ({exc})") from None
    return load_yaml(text)


# --- NEEDLE's rules -------------------------------------------------------------------------


def config_path(environ: Mapping[str, str]) -> str:
    """NEEDLE's global config (`dirs_or_home`: $HOME, else /tmp)."""
    return os.path.join(environ.get("HOME") or "/tmp", CONFIG_RELATIVE)


def default_adapters_dir(environ: Mapping[str, str]) -> str:
    return os.path.join(environ.get("HOME") or "/tmp", ADAPTERS_RELATIVE)


class NeedleConfig:
    """The parts of NEEDLE's config that decide whether it runs claude-print."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.path = config_path(environ)
        self.exists = os.path.isfile(self.path)
        self.error: Optional[str] = None
        doc: Any = None
        if self.exists:
            try:
                doc = load_yaml_file(self.path)
            except YamlError as exc:
                self.error = str(exc)
        if doc is not None and not isinstance(doc, dict):
            self.error = "the top level is not a mapping"
            doc = None
        agent = (doc or {}).get("agent")
        agent = agent if isinstance(agent, dict) else {}
        default = agent.get("default")
        self.agent_default = default if isinstance(default, str) else DEFAULT_AGENT
        self.agent_default_from = self.path if isinstance(default, str) else "NEEDLE's default"
        env_default = environ.get("NEEDLE_AGENT__DEFAULT")
        if env_default is not None:
            self.agent_default, self.agent_default_from = env_default, "NEEDLE_AGENT__DEFAULT"
        adapters = agent.get("adapters_dir")
        self.adapters_dir = (
            adapters if isinstance(adapters, str) and adapters else default_adapters_dir(environ)
        )
        pricing = (doc or {}).get("pricing")
        self.priced_models: Tuple[str, ...] = (
            tuple(str(k) for k in pricing) if isinstance(pricing, dict) else DEFAULT_PRICED_MODELS
        )


def adapter_problems(doc: Any) -> List[str]:
    """Why serde would refuse `doc` as NEEDLE's AgentAdapter (src/dispatch/mod.rs)."""
    if not isinstance(doc, dict):
        return ["it is not a mapping"]
    problems = []
    for key in ("name", "agent_cli", "invoke_template"):
        if key not in doc:
            problems.append(f"missing {key}")
        elif not isinstance(doc[key], str):
            problems.append(f"{key} must be a string")
    for key in ("description", "version_command", "provider", "model", "output_transform"):
        if doc.get(key) is not None and not isinstance(doc[key], str):
            problems.append(f"{key} must be a string")
    for key in ("timeout_secs", "idle_timeout_secs", "hard_timeout_secs"):
        value = doc.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            problems.append(f"{key} must be a whole number of seconds")
    env = doc.get("environment", {})
    if env is not None and not (
        isinstance(env, dict) and all(isinstance(v, str) for v in env.values())
    ):
        problems.append("environment must map names to strings")
    problems += _tagged(
        doc.get("input_method"),
        "input_method",
        {"stdin": (), "file": ("path_template",), "args": ("flag",)},
    )
    problems += _tagged(
        doc.get("token_extraction"),
        "token_extraction",
        {
            "json_field": ("input_path", "output_path"),
            "regex": ("pattern", "input_group", "output_group"),
            "none": (),
        },
    )
    timeouts = [doc.get(k) for k in ("timeout_secs", "idle_timeout_secs", "hard_timeout_secs")]
    if all(isinstance(t, int) for t in timeouts if t is not None):
        legacy, idle, hard = (t or 0 for t in timeouts)
        if legacy and (idle or hard):
            problems.append("timeout_secs cannot be used with idle_timeout_secs/hard_timeout_secs")
    return problems


def _tagged(value: Any, key: str, variants: Dict[str, Tuple[str, ...]]) -> List[str]:
    if value is None:
        return []
    if not isinstance(value, dict) or value.get("method") not in variants:
        return [f"{key}.method must be one of {', '.join(sorted(variants))}"]
    return [
        f"{key} ({value['method']}) needs {field}"
        for field in variants[value["method"]]
        if field not in value
    ]


def is_set_up(environ: Mapping[str, str]) -> bool:
    """NEEDLE is installed or configured here: its config dir, or `needle` on PATH."""
    home = environ.get("HOME") or ""
    return bool(
        (home and os.path.isdir(os.path.join(home, ".config", "needle")))
        or shutil.which("needle", path=environ.get("PATH"))
    )


def check(environ: Mapping[str, str]) -> List[Tuple[str, str]]:
    """(status, detail) lines for `--check`: "ok" or "warn"."""
    config = NeedleConfig(environ)
    lines: List[Tuple[str, str]] = []
    if config.error is not None:
        lines.append(("warn", f"cannot read {config.path}: {config.error}"))
    directory = config.adapters_dir
    where = f"{directory} (NEEDLE's agent.adapters_dir)"
    ours: List[str] = []
    broken: List[str] = []
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        names = []
        lines.append(
            (
                "warn",
                f"{where} does not exist: NEEDLE cannot load claude-print "
                "(run install.sh, or copy claude-print.yaml there)",
            )
        )
    for name in names:
        if not name.endswith((".yaml", ".yml")):
            continue
        path = os.path.join(directory, name)
        try:
            doc = load_yaml_file(path)
        except YamlError as exc:
            broken.append(f"{name}: {exc}")
            continue
        problems = adapter_problems(doc)
        if problems:
            broken.append(f"{name}: {'; '.join(problems)}")
        elif doc.get("name") == ADAPTER_NAME:
            ours.append(name)
            if doc.get("model") not in config.priced_models:
                lines.append(
                    (
                        "warn",
                        f"{name}: model {doc.get('model')!r} has no entry in "
                        "NEEDLE's pricing table, so NEEDLE does not cost its runs (add "
                        "one under `pricing:` in its config)",
                    )
                )
    if broken:
        lines.append(
            (
                "warn",
                f"NEEDLE loads no adapter from {directory} while a file there "
                f"does not parse as one (it then runs its built-ins only): "
                f"{' | '.join(broken)}",
            )
        )
    elif names and not ours:
        lines.append(
            (
                "warn",
                f"no adapter named {ADAPTER_NAME} in {where}: copy "
                "claude-print.yaml there (install.sh does)",
            )
        )
    if config.agent_default != ADAPTER_NAME:
        lines.append(
            (
                "warn",
                f"NEEDLE's agent.default is {config.agent_default!r} "
                f"({config.agent_default_from}): NEEDLE runs `claude --print`, not "
                f"claude-print; set `agent.default: {ADAPTER_NAME}` in {config.path}, "
                f"or run NEEDLE with --agent {ADAPTER_NAME}",
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
