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
`pricing`), not every section, with serde's rules (`schema`) over a small YAML reader
for the subset NEEDLE's files use (`yaml_reader`).
"""

from __future__ import annotations

import os
import shutil
from typing import Any, List, Mapping, Optional, Tuple

from claude_print.needle.schema import (
    CONFIG_SCHEMA,
    WORKSPACE_SCHEMA,
    adapter_problems,
    is_empty,
    node_problems,
    opt_text_of,
    text_of,
)
from claude_print.needle.yaml_reader import FileUnreadable, YamlError, parse_yaml_file

ADAPTER_NAME = "claude-print"
CONFIG_RELATIVE = os.path.join(".config", "needle", "config.yaml")
ADAPTERS_RELATIVE = os.path.join(".config", "needle", "adapters")
WORKSPACE_FILE = ".needle.yaml"
DEFAULT_AGENT = "claude"
# NEEDLE's default `pricing:` table (src/cost/mod.rs); a `pricing:` key replaces it.
DEFAULT_PRICED_MODELS = ("claude-sonnet-4-6", "claude-opus-4-6", "gpt-4")


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
        default = text_of(_field(doc, "agent", "default"))
        self.agent_default = DEFAULT_AGENT if default is None else default
        self.agent_default_from = "NEEDLE's default" if default is None else self.path
        self.agent_default_file = self.path  # where to set it
        self.cwd = cwd
        workspace = text_of(_field(doc, "workspace", "default"))
        self.workspace = os.path.join(cwd, workspace) if workspace else cwd
        self.workspace_file = os.path.join(self.workspace, WORKSPACE_FILE)
        if os.path.exists(self.workspace_file):
            local = self._load(self.workspace_file, WORKSPACE_SCHEMA, "the workspace config")
            default = opt_text_of(_field(local, "agent", "default"))
            if default is not None:
                self.agent_default, self.agent_default_from = default, self.workspace_file
                self.agent_default_file = self.workspace_file
        for key, value in environ.items():  # apply_env_overrides: the last one wins
            if key.startswith("NEEDLE_") and key[7:].lower().replace("__", ".") == "agent.default":
                self.agent_default, self.agent_default_from = value, key
        adapters = text_of(_field(doc, "agent", "adapters_dir"))
        self.adapters_dir = adapters or default_adapters_dir(environ)
        pricing = _field(doc, "pricing")
        self.priced_models: Tuple[str, ...] = DEFAULT_PRICED_MODELS
        if isinstance(pricing, dict):
            self.priced_models = tuple(pricing)
        elif is_empty(pricing):
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
        problems = node_problems(schema, doc, "")
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
        elif text_of(doc["name"]) == ADAPTER_NAME:
            ours.append(name)
            model = opt_text_of(doc.get("model"))
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
