"""claude-print.yaml as NEEDLE uses it, and `--check`'s view of NEEDLE (claude_print.needle).

The dispatcher here does what NEEDLE's does (github jedarden/NEEDLE, main at 8f5eba4 of
2026-05-05, version 0.2.0: src/dispatch/mod.rs; src/types/mod.rs for Outcome::classify;
src/cost/mod.rs; src/bin/needle_transform_claude.rs): the prompt in
`$TMPDIR/needle/prompt-<bead>-<pid>.md`, plain text replacement of `{workspace}`,
`{prompt_file}`, `{bead_id}` and `{model}` (`default` without a model), `bash -c` in
NEEDLE's own process group, SIGKILL to that child only and exit 124 once `timeout_secs`
of wall-clock time have passed, a signal death as -1, token extraction on
`stdout + "\\n" + stderr`, and the output transform's events for each stdout line.
`group=True` models a later NEEDLE (not on main at 8f5eba4): `bash -c` in a process group
of its own, and SIGKILL to the whole group. `claude-print` on PATH is a shim that runs
this checkout against mock_claude.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest
from fake_api import FAKE_KEY, seed_home
from harness import MOCK_CLAUDE, ROOT

from claude_print.hooks import leftovers
from claude_print.needle import schema, view, yaml_reader

ADAPTER_FILE = ROOT / "claude-print.yaml"
# NEEDLE 0.2.0's AgentAdapter fields (src/dispatch/mod.rs); serde ignores any other key.
ADAPTER_FIELDS = {
    "name", "description", "agent_cli", "version_command", "input_method", "invoke_template",
    "environment", "timeout_secs", "provider", "model", "token_extraction", "output_transform",
}  # fmt: skip
PRICING = {"claude-sonnet-4-6": (3.0, 15.0), "claude-opus-4-6": (15.0, 75.0), "gpt-4": (30.0, 60.0)}


def adapter() -> Dict[str, Any]:
    doc = yaml_reader.load_yaml_file(str(ADAPTER_FILE))
    assert isinstance(doc, dict)
    return doc


# --- NEEDLE, as far as a run goes ----------------------------------------------------------


def classify(code: int) -> str:
    """Outcome::classify (src/types/mod.rs), was_interrupted = false."""
    if code == 0:
        return "success"
    if code == 124:
        return "timeout"
    if code == 127:
        return "agent_not_found"
    if code > 128 or code < 0:
        return "crash"
    return "failure"  # 1, 2..=123, 125..=128


def render(template: str, workspace: Path, prompt_file: Path, bead_id: str, model: str) -> str:
    """render_template: plain replacement, nothing quoted."""
    return (
        template.replace("{workspace}", str(workspace))
        .replace("{prompt_file}", str(prompt_file))
        .replace("{bead_id}", bead_id)
        .replace("{model}", model)
    )


def extract_tokens(spec: Dict[str, Any], stdout: str, stderr: str) -> Tuple[Optional[int], ...]:
    if spec.get("method") == "json_field":
        try:
            obj = json.loads(stdout)
        except ValueError:
            return (None, None)

        def path(p: str) -> Optional[int]:
            cur: Any = obj
            for key in p.split("."):
                cur = cur.get(key) if isinstance(cur, dict) else None
            return cur if isinstance(cur, int) else None

        return (path(spec["input_path"]), path(spec["output_path"]))
    if spec.get("method") == "regex":
        m = re.search(spec["pattern"], f"{stdout}\n{stderr}")
        if m is None:
            return (None, None)
        grab = (m.group(spec["input_group"]), m.group(spec["output_group"]))
        return tuple(int(g.replace(",", "")) if g is not None else None for g in grab)
    return (None, None)


def estimate_cost(tokens: Tuple[Optional[int], ...], model: str) -> Optional[float]:
    if model not in PRICING:
        return None
    inp, out = (t or 0 for t in tokens)
    if inp == 0 and out == 0:
        return None
    return (inp * PRICING[model][0] + out * PRICING[model][1]) / 1_000_000


def transform(stdout: str) -> List[Tuple[Any, ...]]:
    """needle-transform-claude's process_line for each stdout line (payload kinds only)."""
    events: List[Tuple[Any, ...]] = []
    names: Dict[str, str] = {}
    for line in (raw.strip() for raw in stdout.splitlines()):
        if not line:
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        kind = value.get("type")
        if kind == "assistant":
            message = value.get("message") or {}
            for block in message.get("content") or []:
                if block.get("type") == "tool_use":
                    names[block.get("id", "")] = block.get("name", "unknown")
                    events.append(("tool_call", block.get("name")))
                elif block.get("type") == "text" and block.get("text"):
                    events.append(("agent_message", block["text"]))
            usage = message.get("usage")
            if usage and (usage.get("input_tokens", 0) or usage.get("output_tokens", 0)):
                events.append(("tokens", usage.get("input_tokens"), usage.get("output_tokens")))
        elif kind == "user":
            for block in (value.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    tool = names.get(block.get("tool_use_id", ""), "unknown")
                    events.append(("tool_result", tool, not block.get("is_error", False)))
        elif kind == "result":
            subtype = value.get("subtype") or ""
            if value.get("is_error") or subtype.startswith("error"):
                events.append(("error", subtype))
    return events


@dataclass
class Needle:
    """One machine with NEEDLE's dispatcher and claude-print (the shim) on PATH."""

    base: Path
    env: Dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.home = self.base / "home"
        self.tmp = self.base / "tmp"
        self.bin = self.base / "bin"
        for d in (self.home, self.tmp, self.bin):
            d.mkdir()
        shim = self.bin / "claude-print"
        shim.write_text(
            f'#!/bin/sh\nexec "{sys.executable}" -m claude_print '
            f'--claude-binary "{MOCK_CLAUDE}" "$@"\n'
        )
        shim.chmod(0o755)
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("CLAUDE_CODE_", "ANTHROPIC_", "MOCK_CLAUDE_", "CLAUDE_PRINT_"))
            and k != "CLAUDECODE"
        }
        self.env.update(
            HOME=str(self.home),
            TMPDIR=str(self.tmp),
            PYTHONPATH=str(ROOT),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            PATH=f"{self.bin}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        )

    def workspace(self, name: str) -> Path:
        path = self.base / name
        path.mkdir()
        seed_home(self.home, trusted=[path])
        return path

    def dispatch(
        self,
        spec: Dict[str, Any],
        workspace: Path,
        prompt: str,
        bead_id: str = "nd-1a2",
        scenario: str = "ok",
        group: bool = False,
        times_out_once: Optional[Callable[[int], bool]] = None,
    ) -> Result:
        """One run as NEEDLE makes it. `times_out_once`: NEEDLE's timeout fires as soon as
        this holds (given the process's pid), not at a wall-clock time that a loaded
        machine may not have reached the moment the test is about (`timeout_secs` then
        bounds the wait and fails the test)."""
        prompt_dir = self.tmp / "needle"
        prompt_dir.mkdir(exist_ok=True)
        prompt_file = prompt_dir / f"prompt-{bead_id}-{os.getpid()}.md"
        prompt_file.write_text(prompt)
        model = spec.get("model") or "default"
        rendered = render(spec["invoke_template"], workspace, prompt_file, bead_id, model)
        env = {**self.env, **(spec.get("environment") or {}), "MOCK_CLAUDE_SCENARIO": scenario}
        started = time.monotonic()
        proc = subprocess.Popen(
            ["bash", "-c", rendered],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            preexec_fn=os.setpgrp if group else None,  # a later NEEDLE: setpgid(0, 0)
        )
        try:
            if times_out_once is not None:
                limit = time.monotonic() + (spec.get("timeout_secs") or 3600)
                while not times_out_once(proc.pid):
                    assert proc.poll() is None, "the run ended before its timeout fired"
                    assert time.monotonic() < limit, "the run never got to its timeout"
                    time.sleep(0.02)
                raise subprocess.TimeoutExpired(rendered, 0)
            out, err = proc.communicate(timeout=spec.get("timeout_secs") or 3600)
            code = proc.returncode if proc.returncode >= 0 else -1
        except subprocess.TimeoutExpired:
            if group:
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                proc.kill()  # NEEDLE 0.2.0: child.start_kill(), SIGKILL to `bash -c` only
            out, err = proc.communicate()
            code = 124
        finally:
            prompt_file.unlink()
        stdout, stderr = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
        tokens = extract_tokens(spec.get("token_extraction") or {}, stdout, stderr)
        return Result(rendered, proc.pid, code, stdout, stderr, tokens, time.monotonic() - started)


@dataclass
class Result:
    command: str
    pid: int
    code: int
    stdout: str
    stderr: str
    tokens: Tuple[Optional[int], ...]
    elapsed: float

    @property
    def outcome(self) -> str:
        return classify(self.code)

    def events(self) -> List[Dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]

    def result_event(self) -> Dict[str, Any]:
        found = [e for e in self.events() if e.get("type") == "result"]
        assert len(found) == 1, self.stdout + self.stderr
        return found[0]


@pytest.fixture
def machine(tmp_path: Path) -> Needle:
    return Needle(tmp_path)


# --- the adapter file ----------------------------------------------------------------------


def test_the_adapter_parses_as_needles_agent_adapter() -> None:
    spec = adapter()
    assert schema.adapter_problems(yaml_reader.parse_yaml_file(str(ADAPTER_FILE))) == []
    assert set(schema.ADAPTER_SCHEMA) == ADAPTER_FIELDS
    assert set(spec) <= ADAPTER_FIELDS, set(spec) - ADAPTER_FIELDS  # no key NEEDLE ignores
    assert spec["name"] == view.ADAPTER_NAME
    assert spec["input_method"] == {"method": "stdin"}
    assert spec["model"] in view.DEFAULT_PRICED_MODELS  # NEEDLE can cost its runs
    assert spec["output_transform"] == "needle-transform-claude"  # as its built-in claude ones
    for placeholder in ("{workspace}", "{prompt_file}", "{model}"):
        assert placeholder in spec["invoke_template"]
    assert "exec claude-print " in spec["invoke_template"]


def test_the_token_pattern_finds_the_turns_total_in_every_captured_release() -> None:
    """claude-print prints the installed release's `claude -p` stream-json shapes:
    the pattern must find the result's usage in each, never a single message's."""
    pattern = re.compile(adapter()["token_extraction"]["pattern"])
    checked = 0
    for path in sorted((ROOT / "tests" / "data").glob("cc-*/p_*.stream.jsonl")):
        lines = path.read_text().splitlines()
        result = json.loads(next(line for line in lines if '"type":"result"' in line))
        match = pattern.search("\n".join(lines) + "\n")
        usage = result.get("usage") or {}
        total = (usage.get("input_tokens", 0), usage.get("output_tokens", 0))
        if match is None:
            assert total == (0, 0), path  # nothing to count (an API error's empty usage)
            continue
        assert (int(match.group(1)), int(match.group(2))) == total, path
        checked += 1
    assert checked >= 14 * 5


# --- NEEDLE runs it --------------------------------------------------------------------------


def test_a_normal_answer(machine: Needle) -> None:
    workspace = machine.workspace("ws")
    prompt = "Summarise the bead [[tool:Bash:ls]]\n"
    run = machine.dispatch(adapter(), workspace, prompt)
    assert run.outcome == "success", run.stderr
    assert "'" + str(workspace) + "'" in run.command
    final = run.result_event()
    assert final["is_error"] is False and final["result"] == "Tool turn done."
    assert run.events()[0]["cwd"] == str(workspace)
    assert run.tokens == (final["usage"]["input_tokens"], final["usage"]["output_tokens"])
    assert run.tokens[0] and run.tokens[1]
    assert estimate_cost(run.tokens, adapter()["model"]) is not None
    events = transform(run.stdout)
    kinds = [e[0] for e in events]
    assert kinds == ["tool_call", "tokens", "tool_result", "agent_message", "tokens"], events
    assert list(machine.tmp.glob("claude-print-*")) == []
    assert list((machine.tmp / "needle").iterdir()) == []


def test_an_api_error_is_a_failure(machine: Needle) -> None:
    run = machine.dispatch(adapter(), machine.workspace("ws"), "hi", scenario="api_error")
    assert run.code == 1 and run.outcome == "failure", run.stderr
    final = run.result_event()
    assert final["is_error"] is True
    assert ("error", final["subtype"]) in transform(run.stdout)


def test_claude_prints_own_timeout_is_needles_timeout(machine: Needle) -> None:
    spec = adapter()
    # The same template with a 3 s deadline instead of 3300 s.
    assert "--timeout 3300 " in spec["invoke_template"]
    spec["invoke_template"] = spec["invoke_template"].replace("--timeout 3300 ", "--timeout 3 ")
    run = machine.dispatch(spec, machine.workspace("ws"), "hi", scenario="hang")
    assert run.code == 124 and run.outcome == "timeout", run.stderr
    assert run.result_event()["subtype"] == "error_timeout"
    assert list(machine.tmp.glob("claude-print-*")) == []  # it cleaned up itself


def processes_naming(text: str) -> List[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and text in (entry / "cmdline").read_text(errors="replace"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("group", [False, True], ids=["needle-0.2.0", "process-group"])
def test_needles_own_timeout_kills_and_leaves_nothing(machine: Needle, group: bool) -> None:
    spec = {**adapter(), "timeout_secs": 60}
    workspace = machine.workspace("ws")

    def hanging(pid: int) -> bool:
        """claude-print has its relay dir and its (mock) TUI runs, hanging."""
        dirs = list(machine.tmp.glob(f"claude-print-{pid}-*"))
        return bool(dirs) and bool(processes_naming(str(dirs[0])))

    run = machine.dispatch(
        spec, workspace, "hi", scenario="hang", group=group, times_out_once=hanging
    )
    assert run.code == 124 and run.outcome == "timeout"
    assert run.stdout == ""  # SIGKILL: claude-print had no chance to print
    # NEEDLE 0.2.0 kills claude-print alone (`exec`), or its process group: its TUI, in a
    # session of its own on the PTY, gets SIGHUP when the PTY closes, and the relay dir's
    # watchdog (a process group of its own) removes the dir: nothing is left for a sweep.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (
        list(machine.tmp.glob(f"claude-print-{run.pid}-*"))
        or processes_naming(f"claude-print-{run.pid}-")
    ):
        time.sleep(0.1)  # another process's end has no event to wait on here
    assert list(machine.tmp.glob(f"claude-print-{run.pid}-*")) == []
    assert processes_naming(f"claude-print-{run.pid}-") == []
    assert leftovers.sweep(str(machine.tmp)) == []


def test_a_workspace_with_a_space(machine: Needle) -> None:
    workspace = machine.workspace("my work space")
    run = machine.dispatch(adapter(), workspace, "What is 2+2?")
    assert run.outcome == "success", run.stderr
    assert run.result_event()["result"] == "The answer is 4."
    assert run.events()[0]["cwd"] == str(workspace)
    # NEEDLE does not quote {workspace}: its built-in style `cd {workspace}` fails there.
    spec = adapter()
    spec["invoke_template"] = spec["invoke_template"].replace("'{workspace}'", "{workspace}")
    bare = machine.dispatch(spec, workspace, "What is 2+2?")
    assert bare.outcome == "failure" and "cd: too many arguments" in bare.stderr


# --- --check: NEEDLE's configuration ---------------------------------------------------------


def needle_home(
    tmp_path: Path, config: Optional[str], adapter_text: Optional[str] = None
) -> Dict[str, str]:
    home = tmp_path / "home"
    (home / ".config" / "needle" / "adapters").mkdir(parents=True)
    if config is not None:
        (home / ".config" / "needle" / "config.yaml").write_text(config)
    if adapter_text is not None:
        (home / ".config" / "needle" / "adapters" / "claude-print.yaml").write_text(adapter_text)
    return {"HOME": str(home), "PATH": "/usr/bin:/bin"}


def warnings(env: Dict[str, str], cwd: Optional[Path] = None) -> List[str]:
    """`--check`'s NEEDLE warnings, run from `cwd` (by default the folder holding HOME)."""
    where = cwd or Path(env["HOME"]).parent
    return [detail for status, detail in view.check(env, str(where)) if status == "warn"]


def test_check_is_happy_with_a_working_setup(tmp_path: Path) -> None:
    env = needle_home(tmp_path, "agent:\n  default: claude-print\n", ADAPTER_FILE.read_text())
    [(status, detail)] = view.check(env)
    assert status == "ok" and detail.startswith("NEEDLE runs claude-print (claude-print.yaml in")


def test_check_warns_when_needle_would_run_claude_print_mode(tmp_path: Path) -> None:
    env = needle_home(tmp_path, None, ADAPTER_FILE.read_text())  # NEEDLE's default: claude
    found = warnings(env)
    assert len(found) == 1 and "NEEDLE runs `claude --print`" in found[0], found
    assert "agent.default: claude-print" in found[0]
    env["NEEDLE_AGENT__DEFAULT"] = "claude-print"
    assert warnings(env) == []


def test_check_warns_when_the_adapter_is_not_where_needle_reads(tmp_path: Path) -> None:
    env = needle_home(tmp_path, "agent:\n  default: claude-print\n")
    legacy = Path(env["HOME"]) / ".needle" / "agents"
    legacy.mkdir(parents=True)
    (legacy / "claude-print.yaml").write_text(ADAPTER_FILE.read_text())  # the old shell NEEDLE's
    (Path(env["HOME"]) / ".config" / "needle" / "adapters" / "other.yaml").write_text(
        "name: other\nagent_cli: x\ninvoke_template: x\n"
    )
    found = warnings(env)
    assert any("no adapter named claude-print" in w for w in found), found


def test_check_follows_adapters_dir_and_warns_when_it_is_missing(tmp_path: Path) -> None:
    custom = tmp_path / "my adapters"
    env = needle_home(tmp_path, f"agent:\n  default: claude-print\n  adapters_dir: {custom}\n")
    assert any(f"{custom} (NEEDLE's agent.adapters_dir) does not exist" in w for w in warnings(env))
    custom.mkdir()
    (custom / "claude-print.yml").write_text(ADAPTER_FILE.read_text())
    assert warnings(env) == []


MINIMAL = "name: x\nagent_cli: x\ninvoke_template: x\n"


@pytest.mark.parametrize(
    ("name", "text", "says"),
    [
        ("claude-print.yaml", "name: claude-print\nagent_cli: c\n", "missing invoke_template"),
        ("other.yaml", "name: [unclosed\n", "flow collection"),
        ("other.yaml", MINIMAL + "timeout_secs: -1\n", "timeout_secs"),
        ("other.yml", MINIMAL + "input_method:\n  method: pipe\n", "input_method.method"),
    ],
)
def test_check_warns_when_an_adapter_file_does_not_parse(
    tmp_path: Path, name: str, text: str, says: str
) -> None:
    env = needle_home(tmp_path, "agent:\n  default: claude-print\n", ADAPTER_FILE.read_text())
    (Path(env["HOME"]) / ".config" / "needle" / "adapters" / name).write_text(text)
    found = warnings(env)
    assert len(found) == 1 and "NEEDLE loads no adapter from" in found[0], found
    assert says in found[0]


def test_check_warns_with_an_empty_adapters_folder(tmp_path: Path) -> None:
    """NEEDLE then has only its built-ins, and runs `claude --print` for claude-print."""
    env = needle_home(tmp_path, "agent:\n  default: claude-print\n")  # the folder, empty
    [found] = warnings(env)
    assert found.startswith("no adapter named claude-print in "), found
    adapters = Path(env["HOME"]) / ".config" / "needle" / "adapters"
    (adapters / ".yaml").write_text(ADAPTER_FILE.read_text())  # no extension for NEEDLE
    (adapters / "claude-print.YAML").write_text(ADAPTER_FILE.read_text())  # nor this one
    assert warnings(env) == [found]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("input_method:\n  method: args\n  flag: 5\n", "input_method.flag must be a string"),
        (
            "token_extraction:\n  method: regex\n  pattern: x\n  input_group: '1'\n"
            "  output_group: 2\n",
            "token_extraction.input_group must be a whole number",
        ),
        ("token_extraction:\n", "token_extraction must be a mapping"),
        ("input_method: stdin\n", "input_method must be a mapping"),
        ("environment:\n  PATH: [/bin]\n", "environment must map names to strings"),
        ("environment: ~\n", "environment must map names to strings"),
        ("timeout_secs: '600'\n", "timeout_secs must be a whole number"),
        ("description:\n  text: x\n", "description must be a string"),
    ],
)
def test_check_warns_when_a_neighbour_has_a_wrong_type_in_a_nested_field(
    tmp_path: Path, text: str, says: str
) -> None:
    """serde fails on the whole adapter folder, and NEEDLE runs its built-ins only."""
    env = needle_home(tmp_path, "agent:\n  default: claude-print\n", ADAPTER_FILE.read_text())
    (Path(env["HOME"]) / ".config" / "needle" / "adapters" / "other.yaml").write_text(
        MINIMAL + text
    )
    [found] = warnings(env)
    assert "NEEDLE loads no adapter from" in found and f"other.yaml: {says}" in found, found


def test_check_takes_what_serde_takes_in_a_neighbour(tmp_path: Path) -> None:
    env = needle_home(tmp_path, "agent:\n  default: claude-print\n", ADAPTER_FILE.read_text())
    (Path(env["HOME"]) / ".config" / "needle" / "adapters" / "other.yaml").write_text(
        "name: 7\nagent_cli: true\ninvoke_template: ~\ndescription:\nmodel: 1.5\n"
        "environment:\n  N: 1\n  E:\ntimeout_secs: 0x10\nharness: [any, thing]\n"
        "input_method:\n  method: file\n  path_template: '7'\n  extra: [ignored]\n"
        "token_extraction:\n  method: regex\n  pattern: 'in (\\d+)'\n  input_group: 1\n"
        "  output_group: +2\n"
    )
    assert warnings(env) == []


def test_check_reads_the_workspace_needle_yaml(tmp_path: Path) -> None:
    """`needle run` in a folder whose .needle.yaml sets agent.default runs that adapter."""
    env = needle_home(tmp_path, "agent:\n  default: claude-print\n", ADAPTER_FILE.read_text())
    workspace = tmp_path / "repo"
    workspace.mkdir()
    (workspace / ".needle.yaml").write_text("agent:\n  default: claude-sonnet\n")
    assert warnings(env) == []  # another folder: not NEEDLE's workspace from there
    [found] = warnings(env, workspace)
    assert f"NEEDLE's agent.default is 'claude-sonnet' ({workspace}/.needle.yaml)" in found
    assert "NEEDLE runs `claude --print`" in found
    assert f"set `agent.default: claude-print` in {workspace}/.needle.yaml" in found
    assert warnings({**env, "NEEDLE_AGENT__DEFAULT": "claude-print"}, workspace) == []
    # The global config's workspace.default is the workspace when run from elsewhere.
    config = Path(env["HOME"]) / ".config" / "needle" / "config.yaml"
    config.write_text(f"agent:\n  default: claude-print\nworkspace:\n  default: {workspace}\n")
    assert len(warnings(env)) == 1
    # A workspace file can also be what sets claude-print.
    config.write_text("worker:\n  max_workers: 2\n")
    (workspace / ".needle.yaml").write_text("agent:\n  default: claude-print\n  timeout: 900\n")
    [(status, detail)] = view.check(env, str(workspace))
    assert status == "ok" and f"agent.default from {workspace}/.needle.yaml" in detail
    # One that does not deserialize stops `needle run` altogether.
    (workspace / ".needle.yaml").write_text("agent:\n  default: claude-print\n  timeout: '900'\n")
    [found] = warnings(env, workspace)
    assert "agent.timeout must be a whole number" in found and "`needle run` stops" in found


NEIGHBOUR_WITH_ANCHORS = """\
name: claude-opus-fleet
agent_cli: &cli claude
version_command: claude --version
invoke_template: &run "cd {workspace} && claude --print < {prompt_file}"
environment: &env
  ANTHROPIC_MODEL: &model claude-opus-4-6
  EXTRA: *model
model: *model
description: *run
input_method: &stdin {method: stdin}
token_extraction:
  method: json_field
  input_path: &in result.usage.input_tokens
  output_path: *in
x-shared: &shared
  provider: anthropic
x-more:
  <<: *shared
  list: [*cli, *model]
"""


def test_check_reads_a_neighbour_with_anchors_and_aliases(tmp_path: Path) -> None:
    env = needle_home(tmp_path, "agent:\n  default: claude-print\n", ADAPTER_FILE.read_text())
    other = Path(env["HOME"]) / ".config" / "needle" / "adapters" / "opus.yaml"
    other.write_text(NEIGHBOUR_WITH_ANCHORS)
    assert warnings(env) == []
    # serde_yaml 0.9 merges nothing: `<<` is a key, and the struct ignores it.
    other.write_text("base: &base\n  agent_cli: claude\n  invoke_template: x\nname: o\n<<: *base\n")
    [found] = warnings(env)
    assert "opus.yaml: missing agent_cli; missing invoke_template" in found, found
    # An alias with no anchor is no YAML: claude-print says it cannot read the file.
    other.write_text(MINIMAL + "model: *nowhere\n")
    [found] = warnings(env)
    assert "NEEDLE loads no adapter from" in found and "cannot tell" in found
    assert "alias *nowhere has no anchor before it" in found


def test_the_yaml_reader_resolves_aliases_and_types_scalars_as_serde_yaml() -> None:
    doc = yaml_reader.load_yaml(NEIGHBOUR_WITH_ANCHORS)
    assert doc["agent_cli"] == "claude" and doc["description"] == doc["invoke_template"]
    assert doc["environment"] == {"ANTHROPIC_MODEL": "claude-opus-4-6", "EXTRA": "claude-opus-4-6"}
    assert doc["x-more"] == {"<<": {"provider": "anthropic"}, "list": ["claude", "claude-opus-4-6"]}
    text = "a: 012\nb: 0x1f\nc: +7\nd: 1_000\ne: 1e3\nf: ~\ng:\nh: 'null'\n"
    scalars = yaml_reader.load_yaml(text)
    assert scalars == {"a": "012", "b": 31, "c": 7, "d": "1_000", "e": 1000.0, "f": None,
                       "g": None, "h": "null"}  # fmt: skip
    for text in ("a: &x [*x]\n", "a: *x\nb: &x 1\n"):
        with pytest.raises(yaml_reader.YamlError, match="alias"):
            yaml_reader.load_yaml(text)


def test_check_warns_when_needle_cannot_price_the_model(tmp_path: Path) -> None:
    text = ADAPTER_FILE.read_text().replace("model: claude-sonnet-4-6", "model: sonnet")
    env = needle_home(tmp_path, "agent:\n  default: claude-print\n", text)
    assert any("model 'sonnet' has no entry in NEEDLE's pricing" in w for w in warnings(env))
    config = Path(env["HOME"]) / ".config" / "needle" / "config.yaml"
    priced = "agent:\n  default: claude-print\npricing:\n  sonnet:\n    input_per_million: 3.0\n"
    config.write_text(priced)  # ModelPricing has no default for output_per_million
    [found] = warnings(env)
    assert "missing pricing.sonnet.output_per_million" in found and "`needle run` stops" in found
    config.write_text(priced + "    output_per_million: 15\n")
    assert warnings(env) == []


def test_no_needle_no_needle_line(tmp_path: Path) -> None:
    assert not view.is_set_up({"HOME": str(tmp_path), "PATH": str(tmp_path)})


def test_check_with_a_config_file_and_needle(tmp_path: Path) -> None:
    """`--check` works with claude-print's own config file, and reports on NEEDLE."""
    env = needle_home(tmp_path, "agent:\n  default: claude-print\n", ADAPTER_FILE.read_text())
    config = Path(env["HOME"]) / ".config" / "claude-print" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[defaults]\nmodel = "sonnet"\nmax_turns = 8\n')
    (tmp_path / "tmp").mkdir()
    full = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "NEEDLE_"))}
    seed_home(Path(env["HOME"]))  # a Claude Code set up with an approved key
    full.update(
        HOME=env["HOME"],
        ANTHROPIC_API_KEY=FAKE_KEY,
        TMPDIR=str(tmp_path / "tmp"),
        PYTHONPATH=str(ROOT),
        XDG_CONFIG_HOME=str(Path(env["HOME"]) / ".config"),
    )
    proc = subprocess.run(
        [sys.executable, "-m", "claude_print", "--check", "--claude-binary", str(MOCK_CLAUDE)],
        capture_output=True,
        text=True,
        env=full,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok   config: " in proc.stdout and "model='sonnet'" in proc.stdout
    assert "ok   needle: NEEDLE runs claude-print" in proc.stdout


def test_adapters_dir_for_install_sh(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop("NEEDLE_AGENT__DEFAULT", None)
    out = subprocess.run(
        [sys.executable, "-m", "claude_print.needle", "adapters-dir"],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert out == f"{tmp_path}/.config/needle/adapters\n"
    (tmp_path / ".config" / "needle").mkdir(parents=True)
    (tmp_path / ".config" / "needle" / "config.yaml").write_text(
        "worker:\n  max_workers: 2\nagent:\n  adapters_dir: '/srv/needle adapters'\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "claude_print.needle", "adapters-dir"],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert out == "/srv/needle adapters\n"
