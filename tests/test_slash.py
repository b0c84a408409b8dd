"""Slash prompts by default-deny (issue 29): how a prompt is read, and what claude-print
does with every captured prompt of every captured release, against `claude -p`'s own
answers (tests/data/cc-*/slash.json, measured by scripts/capture-slash), not against
the table under test."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from conftest import MOCK_CLAUDE, ROOT, Sandbox, run_claude_print

from claude_print.turns import slash, slash_commands

CAPTURES = sorted((ROOT / "tests" / "data").glob("cc-*/slash.json"))
# claude -p's one answer that every release gives to its panel commands (written out).
UNAVAILABLE = re.compile(r"/[a-z][a-z0-9-]* isn't available in this environment\.")
EMPTY_HOME = {"HOME": "/nonexistent"}


SCRATCH = re.compile(r"/tmp/capture-slash-(?:ours-)?\w+")


def captured() -> List[Tuple[str, str, Dict[str, Any]]]:
    cases = []
    for path in CAPTURES:
        data = json.loads(path.read_text())
        for prompt, entry in data.get("claude_p", {}).items():
            tui = data.get("tui", {}).get(prompt)
            cases.append((data["version"], prompt, {**entry, "tui": tui}))
    return cases


def outcome(entry: Dict[str, Any]) -> Tuple[Any, ...]:
    """What a run did, its scratch dir's name aside (the fake API's `ACK <length>
    <sha256-12>` answer hashes the prompt, scratch path included)."""
    prompts = [SCRATCH.sub("$ROOT", p) for p in entry["model_prompts"]]
    result = re.sub(r"^(ACK \d+) [0-9a-f]{12}$", r"\1", str(entry.get("result")))
    keys = ("exit", "num_turns", "is_error", "side_effects")
    return (prompts, result, *[entry.get(k) for k in keys])


CASES = captured()


def test_every_ci_release_is_captured() -> None:
    """The CI matrix's releases all have a capture (scripts/capture-slash)."""
    matrix = (ROOT / "tests" / "matrix.txt").read_text().split("\n")
    releases = [line.split()[0] for line in matrix if line and not line.startswith("#")]
    have = {p.parent.name[3:] for p in CAPTURES}
    assert set(releases) <= have, f"no slash capture for {set(releases) - have}"


def test_the_generated_table_is_what_the_captures_give() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "update-slash"), "--check"], capture_output=True
    )
    assert proc.returncode == 0, "run scripts/update-slash: " + proc.stderr.decode()


@pytest.mark.parametrize(
    ("version", "prompt", "entry"),
    CASES,
    ids=[f"{v}-{json.dumps(p)[1:-1][:40]}" for v, p, _ in CASES],
)
def test_claude_print_gives_claude_p_s_answer_or_refuses(
    version: str, prompt: str, entry: Dict[str, Any]
) -> None:
    """Every built-in name x every form, per release: claude-print answers exactly as
    claude -p did, or refuses, or (a prompt command such as /init) lets the TUI have it
    where the TUI was measured to send the model the same and change the same files. A
    panel command's "isn't available" answer is always given."""
    decision = slash.decide(prompt, version, "/", EMPTY_HOME)
    if decision.kind == slash.TUI:
        assert entry["tui"] is not None, f"{prompt!r} would reach an unmeasured TUI"
        assert entry["model_prompts"] and outcome(entry["tui"]) == outcome(entry)
        return
    local = entry["exit"] == 0 and entry.get("num_turns") == 0 and not entry["model_prompts"]
    if decision.kind == slash.ANSWER:
        assert local and not entry["side_effects"], entry
        assert decision.text == entry["result"]
    elif local and not entry["side_effects"] and UNAVAILABLE.fullmatch(entry.get("result", "")):
        pytest.fail(f"refused where claude -p {version} answers {entry['result']!r}")


# --- how a prompt is read (Claude Code's own parse, written out) ---------------------


@pytest.mark.parametrize(
    ("prompt", "name"),
    [
        ("/help", "help"),
        ("/help  ", "help"),
        ("/help\n", "help"),
        ("  /help", None),  # claude -p sends it to the model (measured, 2.1.332)
        ("\n/help", None),
        ("/help now", "help"),
        ("/help\tnow", "help"),
        ("/help\nnow", "help"),
        ("/help\u00a0now", "help"),  # JS \s has NBSP
        ("/help\u3000now", "help"),
        ("\ufeff/help", None),
        ("/mcp__srv__do", "mcp__srv__do"),
        ("/plug:cmd x", "plug:cmd"),
        ("/_x", "_x"),
        ("/9lives", "9lives"),
        ("/etc/hosts what", None),
        ("/", None),
        ("/ help", None),
        ("/-x", None),
        ("/héllo", None),
        ("/help\x7f", None),
        ("/help\x1b[A", None),
        ("help", None),
        ("x /help", None),
        ("\x85/help", None),  # NEL is no JS whitespace
    ],
)
def test_the_command_name_is_read_as_claude_code_reads_it(prompt: str, name: str) -> None:
    assert slash.command_name(prompt) == name


@pytest.mark.parametrize(
    ("prompt", "name"),
    [("  /help", "help"), ("\t/help now", "help"), ("\x07/help", "help"), ("/he\x7flp", "help")],
)
def test_the_tui_reads_a_command_where_claude_p_reads_text(prompt: str, name: str) -> None:
    assert (slash.command_name(prompt), slash.tui_command_name(prompt)) == (None, name)
    assert slash.decide(prompt, slash_commands.NEWEST, "/", EMPTY_HOME).kind == slash.REFUSE


def tui_form(prompt: str) -> str:
    """The prompt as the TUI's input box holds it, written out plainly (the reference
    for slash.tui_command_name, which reads only the start)."""
    kept = [c for c in prompt if c in slash.JS_SPACE or unicodedata.category(c) not in ("Cc", "Cf")]
    return "".join(kept)


def test_the_tui_reads_the_command_of_the_prompt_s_tui_form() -> None:
    """Every mix of leading junk, name and tail from a set of pieces: the fast reader
    agrees with reading the whole TUI form."""
    heads = ["", " ", "\t", "\x07", "\u200b", "\x1b", "\ufeff", "\x85", "x"]
    names = ["/", "/help", "/he\x7flp", "/plug:cmd", "/etc/hosts", "/h\u00e9", "//x"]
    tails = ["", " now", "\x7f", "\nnow", "\u00a0x", "\x00"]
    for head, name, tail in itertools.product(heads, names, tails):
        prompt = head + name + tail
        expected = slash.command_name(slash.js_trim(tui_form(prompt)))
        assert slash.tui_command_name(prompt) == expected, repr(prompt)


@pytest.mark.parametrize(
    "prompt",
    [
        "/logout\x7f",
        "/logout\x7fnow",
        "/log\u200bout",
        "/export\x1b out.txt",
        "\x07/status",
        "  /logout  ",
    ],
)
def test_control_characters_that_make_a_command_in_the_tui_are_refused(prompt: str) -> None:
    """claude -p sends `/logout\\x7f` to the model as text (measured on 2.1.332); the TUI
    drops the DEL and logs out."""
    for version in [*slash_commands.CAPTURED, "9.9.9", ""]:
        assert slash.decide(prompt, version, "/", EMPTY_HOME).kind == slash.REFUSE


@pytest.mark.parametrize("prompt", ["what is 2+2", "/etc/hosts what is it", "/ x", "// x"])
def test_a_prompt_that_names_no_command_goes_to_the_tui(prompt: str) -> None:
    for version in [*slash_commands.CAPTURED, "9.9.9"]:
        assert slash.decide(prompt, version, "/", EMPTY_HOME).kind == slash.TUI


def make_custom(root: Path) -> Tuple[Path, Dict[str, str]]:
    home, project = root / "home", root / "a" / "b"
    (project / ".claude" / "commands").mkdir(parents=True)
    (project / ".claude" / "commands" / "hello.md").write_text("Say hello\n")
    (root / "a" / ".claude" / "skills" / "polish").mkdir(parents=True)
    skill = root / "a" / ".claude" / "skills" / "polish" / "SKILL.md"
    skill.write_text("---\nname: shine\ndescription: x\n---\nPolish it\n")
    (home / ".claude" / "commands").mkdir(parents=True)
    (home / ".claude" / "commands" / "mine.md").write_text("Mine\n")
    (home / ".claude" / "commands" / "status.md").write_text("a custom /status\n")
    return project, {"HOME": str(home)}


@pytest.mark.parametrize(
    ("prompt", "kind"),
    [
        ("/hello", slash.TUI),  # the work dir's commands
        ("/hello with args", slash.TUI),
        ("/polish", slash.TUI),  # a parent's skill folder
        ("/shine", slash.TUI),  # its front matter's name
        ("/mine", slash.TUI),  # the user's commands
        ("/status", slash.ANSWER),  # a custom file named as a built-in: the built-in rules
        ("/plugin-x:deploy now", slash.TUI),
        ("/mcp__server__prompt", slash.TUI),
        ("/hello\x7f", slash.REFUSE),
    ],
)
def test_custom_commands_reach_the_tui(tmp_path: Path, prompt: str, kind: str) -> None:
    project, env = make_custom(tmp_path)
    newest = slash_commands.NEWEST
    assert slash.decide(prompt, newest, str(project), env).kind == kind


def test_custom_commands_are_found_where_claude_code_looks(tmp_path: Path) -> None:
    project, env = make_custom(tmp_path)
    assert slash.custom_commands(str(project), env) >= {"hello", "polish", "shine", "mine"}
    config = tmp_path / "config"
    (config / "skills" / "elsewhere").mkdir(parents=True)
    env = {"HOME": env["HOME"], "CLAUDE_CONFIG_DIR": str(config)}
    found = slash.custom_commands(str(project), env)
    assert "elsewhere" in found and "mine" not in found


def test_a_release_newer_than_every_capture_answers_nothing() -> None:
    """Default-deny: the newest capture's names, no answers; custom commands still go."""
    newer = slash_commands.release("99.0.0")
    assert not newer.measured and not newer.answers
    assert newer.names == slash_commands.release(slash_commands.NEWEST).names
    for prompt in ("/help", "/logout now", "/nosuchcommand", "/cost"):
        assert slash.decide(prompt, "99.0.0", "/", EMPTY_HOME).kind == slash.REFUSE
    assert slash.decide("/x:y", "99.0.0", "/", EMPTY_HOME).kind == slash.TUI


def test_a_release_between_captures_gets_what_both_neighbours_agree_on() -> None:
    order = sorted(slash_commands.CAPTURED, key=lambda v: tuple(map(int, v.split("."))))
    low, high = order[0], order[1]
    patch = int(low.split(".")[2]) + 1
    between = slash_commands.release(f"2.1.{patch}")
    below, above = slash_commands.release(low), slash_commands.release(high)
    assert between.names == below.names | above.names
    for key, answer in between.answers.items():
        assert below.answers[key] == answer == above.answers[key]


# --- through the command line ----------------------------------------------------------


def mock_of_release(sandbox: Sandbox, version: str) -> str:
    """mock_claude installed as npm installs a release: claude-print reads the version
    from the package.json beside it, without starting it."""
    folder = sandbox.tmp / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64"
    folder.mkdir(parents=True)
    package = {"name": "@anthropic-ai/claude-code-linux-x64", "version": version}
    (folder / "package.json").write_text(json.dumps(package))
    binary = folder / "claude"
    binary.write_text(f'#!/bin/sh\nexec python3 {MOCK_CLAUDE.parent / "mock_claude.py"} "$@"\n')
    binary.chmod(0o755)
    return str(binary)


def test_an_answer_comes_at_once_without_starting_claude_code(sandbox: Sandbox) -> None:
    log = sandbox.tmp / "argv.log"
    proc = run_claude_print(
        sandbox,
        ["--output-format", "json", "/logout now"],
        binary=mock_of_release(sandbox, slash_commands.NEWEST),
        env={"MOCK_CLAUDE_ARGV_LOG": str(log)},
    )
    assert proc.returncode == 0, proc.stderr.decode()
    result = json.loads(proc.stdout)
    assert (result["subtype"], result["is_error"], result["num_turns"]) == ("success", False, 0)
    assert result["result"] == "/logout isn't available in this environment."
    assert not log.exists()  # nothing was started


def test_a_refusal_is_exit_2_with_the_reason_and_nothing_started(sandbox: Sandbox) -> None:
    log = sandbox.tmp / "argv.log"
    proc = run_claude_print(
        sandbox,
        ["--output-format", "json", "/model claude-sonnet-4-5"],
        binary=mock_of_release(sandbox, slash_commands.NEWEST),
        env={"MOCK_CLAUDE_ARGV_LOG": str(log)},
    )
    assert proc.returncode == 2, proc.stderr.decode()
    assert b"/model is a built-in command" in proc.stderr, proc.stderr
    assert not log.exists()
    assert not (sandbox.home / ".claude" / "settings.json").exists()
    assert sandbox.leftovers() == []


def test_stream_json_messages_get_the_same_rules(sandbox: Sandbox) -> None:
    """Each stream-json message is a prompt too: an answer, an error result for a
    refused one, and the session goes on to the next message."""

    def user(text: str) -> bytes:
        message = {"type": "user", "message": {"role": "user", "content": text}}
        return json.dumps(message).encode() + b"\n"

    stdin = user("/help") + user("/model claude-sonnet-4-5") + user("hello")
    args = ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    proc = run_claude_print(
        sandbox,
        args,
        stdin=stdin,
        binary=mock_of_release(sandbox, slash_commands.NEWEST),
    )
    assert proc.returncode == 0, proc.stderr.decode()
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    results = [e for e in events if e.get("type") == "result"]
    assert [(r["is_error"], r["num_turns"]) for r in results][:2] == [(False, 0), (True, 0)]
    assert results[0]["result"] == "/help isn't available in this environment."
    assert "/model is a built-in command" in str(results[1].get("errors"))
    assert results[2]["is_error"] is False and len(results) == 3
    assert not (sandbox.home / ".claude" / "settings.json").exists()
