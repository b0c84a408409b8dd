"""Slash prompts by default-deny (issue 29): how a prompt is read, and what claude-print
does with every captured prompt of every captured release, against `claude -p`'s own
answers (tests/data/cc-*/slash.json, measured by scripts/capture-slash), not against
the table under test."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
import slash_fuzz
from harness import MOCK_CLAUDE, ROOT, Sandbox, run_claude_print

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
    "prompt", ["  /help", "\t/help now", "\x07/help", "/he\x7flp", "\u200b/help"]
)
def test_a_prompt_the_tui_may_read_as_a_command_is_refused(prompt: str) -> None:
    assert slash.command_name(prompt) is None  # claude -p: text
    assert not slash.plainly_text(prompt)
    assert slash.decide(prompt, slash_commands.NEWEST, "/", EMPTY_HOME).kind == slash.REFUSE


# Issue 41, measured on the real TUI with a seeded login: each of these signed the user
# out (or ran the built-in) where `claude -p` sent it to the model as text. They are the
# seed corpus (tests/data/slash_fuzz/corpus.json) of the fuzzing below and of
# tests/e2e/test_e2e_slash_fuzz.py.
SEEDS = [
    "/logout:",
    "/logout\ufe0f",
    "/logout\u034f",
    "/logout\u3164",
    "/logout\U000e0100",
    "/log\ufe0fout",
    "/lo\u034fgout",
    "/model:",
    "/export:",
    "/terminal-setup:",
    "/logout\x7f",
    "\u200b/logout",
    "/plugin:logout",
]


@pytest.mark.parametrize("prompt", SEEDS)
def test_the_prompts_that_logged_users_out_are_refused(prompt: str) -> None:
    for version in [*slash_commands.CAPTURED, "9.9.9", ""]:
        decision = slash.decide(prompt, version, "/", EMPTY_HOME)
        assert decision.kind == slash.REFUSE, (version, repr(prompt), decision)


@pytest.mark.parametrize("version", slash_commands.CAPTURED)
def test_no_generated_prompt_reaches_the_tui_as_a_built_in(version: str) -> None:
    """Every built-in name of the release x the space above: each goes to the TUI only
    where claude -p reads the same command and the TUI expands it as claude -p does
    (the measured table), or as text no TUI can read as a command (its first character
    shows as itself and is not `/`, or its first word is a path); else it gets claude
    -p's answer or is refused."""
    known = slash_commands.release(version)
    for name in sorted(known.names):
        for case in slash_fuzz.cases_of(name):
            prompt = case.prompt
            decision = slash.decide(prompt, version, "/", EMPTY_HOME)
            if decision.kind != slash.TUI:
                continue
            raw = slash.command_name(prompt)
            if raw is None:
                first = slash.lead(prompt)
                word = prompt.strip().split()[0] if prompt.strip() else ""
                assert first != "/" or "/" in word[1:], (version, repr(prompt))
                assert unicodedata.category(first)[0] in "LNPS", (version, repr(prompt))
            else:
                form = "args" if slash.split_command(prompt)[1] else "bare"  # type: ignore[index]
                assert (raw, form) in known.tui, (version, repr(prompt))


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


# The Hangul fillers: letters (category Lo, so no category rule catches them) that
# render as nothing, each one code point of Default_Ignorable_Code_Point; and the Hangul
# letters next to them in Unicode, which show as themselves (written out, not read from
# slash._IGNORABLE).
HANGUL_FILLERS = ["\u115f", "\u1160", "\u3164", "\uffa0"]
HANGUL_LETTERS = ["\u115e", "\u1161", "\u3163", "\u3165", "\uffa1"]


@pytest.mark.parametrize("lead", HANGUL_FILLERS)
def test_an_invisible_letter_before_the_slash_is_refused(lead: str) -> None:
    """The TUI drops a filler (`/logout\u3164` signed users out): one before `/logout`
    may leave the TUI `/logout`, where claude -p sends the prompt to the model."""
    assert not slash.shown(lead)
    for version in [*slash_commands.CAPTURED, "9.9.9", ""]:
        decision = slash.decide(f"{lead}/logout", version, "/", EMPTY_HOME)
        assert decision.kind == slash.REFUSE, (version, repr(lead), decision)


@pytest.mark.parametrize("lead", HANGUL_LETTERS)
def test_a_visible_letter_before_the_slash_makes_text(lead: str) -> None:
    """The other side: a letter that shows as itself starts a model turn in both."""
    assert slash.shown(lead)
    for version in [*slash_commands.CAPTURED, "9.9.9"]:
        assert slash.decide(f"{lead}/logout", version, "/", EMPTY_HOME).kind == slash.TUI


@pytest.mark.parametrize("prompt", ["what is 2+2", "/etc/hosts what is it", "// x", "é /x"])
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
    (project / ".claude" / "commands" / "sub").mkdir()
    (project / ".claude" / "commands" / "sub" / "cmd.md").write_text("Sub command\n")
    return project, {"HOME": str(home)}


@pytest.mark.parametrize(
    ("prompt", "kind"),
    [
        ("/hello", slash.TUI),  # the work dir's commands
        ("/hello with args", slash.TUI),
        ("/polish", slash.TUI),  # a parent's skill folder
        ("/shine", slash.TUI),  # its front matter's name
        ("/mine", slash.TUI),  # the user's commands
        # A custom file named as a built-in: claude -p runs the custom one (measured on
        # 2.1.332), the TUI may not: refused, never the built-in's answer.
        ("/status", slash.REFUSE),
        ("/status now", slash.REFUSE),
        ("/plugin-x:deploy now", slash.REFUSE),  # no plugin of that name here
        ("/sub:cmd", slash.TUI),  # .claude/commands/sub/cmd.md
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
    assert slash.decide("/x:y", "99.0.0", "/", EMPTY_HOME).kind == slash.REFUSE  # no plugin x
    assert slash.decide("/x:y", "99.0.0", "/", EMPTY_HOME, ["--plugin-url", "u"]).kind == slash.TUI


@pytest.mark.parametrize(
    "forwarded",
    [
        ["--plugin-url", "https://example.invalid/p.zip"],
        # How the parser forwards a value that could pass for a flag (or is empty).
        ["--plugin-url=-p.zip"],
        ["--plugin-url="],
    ],
)
def test_a_plugin_loaded_by_url_lets_any_namespace_through(forwarded: List[str]) -> None:
    """Its name is known only once the TUI has fetched it: `x:y` goes to the TUI in
    either spelling of the flag, a built-in's namespace never does; without the flag
    (or with another) `x:y` is refused."""
    for version in [slash_commands.NEWEST, "99.0.0"]:
        assert slash.decide("/x:y", version, "/", EMPTY_HOME, forwarded).kind == slash.TUI
        assert slash.decide("/logout:y", version, "/", EMPTY_HOME, forwarded).kind == slash.REFUSE
        other = ["--plugin-dir=/nonexistent", "--plugin-urls=u"]
        assert slash.decide("/x:y", version, "/", EMPTY_HOME, other).kind == slash.REFUSE
    assert slash.plugins(forwarded, EMPTY_HOME) is None


def plugin_folder(root: Path, name: str) -> Path:
    folder = root / f"{name}-plugin"
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": name}))
    return folder


@pytest.mark.parametrize(
    ("prompt", "kind"),
    [
        ("/zebra:stripes", slash.TUI),
        ("/zebra:stripes now", slash.TUI),
        ("/zebra:", slash.REFUSE),  # the TUI ran `/logout:` as /logout
        ("/:stripes", slash.REFUSE),
        ("/lion:stripes", slash.REFUSE),  # no such plugin
        ("/logout:stripes", slash.REFUSE),  # a built-in's name as the namespace
        ("/plugin:zebra", slash.REFUSE),
    ],
)
def test_a_plugin_command_reaches_the_tui_only_where_the_plugin_is(
    tmp_path: Path, prompt: str, kind: str
) -> None:
    """--plugin-dir's plugins and those installed under the config dir are known by name;
    a namespaced name of none of them is text to claude -p and unknown to the TUI."""
    given = plugin_folder(tmp_path, "zebra")
    home = tmp_path / "home"
    home.mkdir()
    newest = slash_commands.NEWEST
    env = {"HOME": str(home)}
    assert slash.decide(prompt, newest, "/", env, ["--plugin-dir", str(given)]).kind == kind
    installed = home / ".claude" / "plugins" / "cache" / "market"
    installed.mkdir(parents=True)
    (given).rename(installed / "zebra")
    assert slash.decide(prompt, newest, "/", env).kind == kind


def test_a_release_between_captures_gets_what_both_neighbours_agree_on() -> None:
    order = sorted(slash_commands.CAPTURED, key=lambda v: tuple(map(int, v.split("."))))
    low, high = order[0], order[1]
    patch = int(low.split(".")[2]) + 1
    between = slash_commands.release(f"2.1.{patch}")
    below, above = slash_commands.release(low), slash_commands.release(high)
    assert between.names == below.names | above.names
    for key, answer in between.answers.items():
        assert below.answers[key] == answer == above.answers[key]


@pytest.mark.parametrize(
    ("version", "prompt", "kind"),
    [
        # 2.1.270 and 2.1.332 both measured these in the TUI: they go there.
        ("2.1.300", "/init", slash.TUI),
        ("2.1.300", "/simplify now", slash.TUI),
        ("2.1.300", "/workflow-authoring", slash.TUI),
        # Measured in the TUI on 2.1.270 only (not on 2.1.332): refused between them.
        ("2.1.300", "/loop", slash.REFUSE),
        ("2.1.300", "/loop 5m check", slash.REFUSE),
        ("2.1.300", "/update-config x", slash.REFUSE),
        # Both answer it with the same text: that answer.
        ("2.1.300", "/help", slash.ANSWER),
        # 2.1.197 and 2.1.270 both measured these in the TUI.
        ("2.1.200", "/batch", slash.TUI),
        ("2.1.200", "/loop", slash.TUI),
        ("2.1.200", "/update-config x", slash.TUI),
        # In the TUI on 2.1.197 only (/code-review, /review) or 2.1.270 only (/doctor).
        ("2.1.200", "/code-review", slash.REFUSE),
        ("2.1.200", "/review now", slash.REFUSE),
        ("2.1.200", "/doctor", slash.REFUSE),
        ("2.1.200", "/workflow-authoring", slash.REFUSE),
    ],
)
def test_a_release_between_captures_sends_the_tui_only_what_both_measured(
    version: str, prompt: str, kind: str
) -> None:
    """Written out from the captures (tests/data/cc-*/slash.json), not read from the
    table: a command goes to the TUI between two releases only where both were measured
    to run it as claude -p does (on 2.1.300, `/loop` would not)."""
    assert slash.decide(prompt, version, "/", EMPTY_HOME).kind == kind


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


@pytest.mark.parametrize(
    ("prompt", "plain"),
    [
        ("\x03", True),  # no slash in any form: no command, whatever is dropped
        ("\x01 \x02\t", True),
        ("\u200bhello", True),
        ("\u200b/hello", False),
        ("\u200b\uff0fhello", False),  # a fullwidth solidus
        ("\u200bhello/there", False),  # a slash somewhere: not ruled out
    ],
)
def test_a_prompt_without_a_slash_is_plainly_text(prompt: str, plain: bool) -> None:
    assert slash.plainly_text(prompt) is plain
