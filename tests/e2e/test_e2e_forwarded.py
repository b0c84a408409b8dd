"""End to end: each forwarded flag does in the TUI what it does in `claude -p`.

Every case runs claude-print and `claude -p` with the same flag on the same fake API
and compares the exit code, the result's subtype and one *effect* of the flag, read the
same way from both runs: a request parameter, a tool that runs or is denied, a subagent's
system prompt, a slash command's text, a hook that does or does not fire. Flags with no
effect that this sandbox can show (no Chrome, no remote control) must at least leave the
request and the result as `claude -p`'s. (`test_e2e_flags.py` has the request-body cases
for --system-prompt, --tools, --model, --betas, --name and --debug-file.)
"""

from __future__ import annotations

import json
import shutil
import sys
import uuid
from pathlib import Path
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Set, Tuple

import pytest
from checks import TUI_ONLY_TOOLS, assert_clean, assert_exit, assert_interactive, requests_of
from fake_api import (
    MISSING_FILE_ID,
    PLUGIN_COMMAND_TEXT,
    PLUGIN_ZIP_PATH,
    FakeApiServer,
    file_content,
)
from harness import SUPPORT, Sandbox, entrypoints, run_claude_p, run_claude_print

from claude_print import contract, flags
from claude_print.run import file_downloads
from claude_print.tui import release

pytestmark = pytest.mark.e2e


class Run(NamedTuple):
    who: str  # "ours" or "theirs"
    marker: str  # in the prompt of this run's first request
    out: Dict[str, Any]  # the json result
    requests: List[Dict[str, Any]]  # every request of the run (side requests aside)
    sandbox: Sandbox
    fake_api: FakeApiServer
    words: List[str]  # the flag words it ran with


Effect = Callable[[Run], Any]


class Case(NamedTuple):
    flag: str
    words: Callable[[Path], List[str]]  # the flag words, given a scratch dir
    prompt: str  # "{marker}" is replaced by the run's marker
    effect: Effect
    expected: Any = None  # what the effect must be (None: only the same as claude -p's)
    env: Tuple[Tuple[str, str], ...] = ()  # variables for both runs
    prepare: Optional[Callable[[Sandbox], None]] = None  # before both runs


def param(*path: str) -> Effect:
    def read(run: Run) -> Any:
        value: Any = run.requests[0]["params"]
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        return value

    return read


def in_system(text: str) -> Effect:
    return lambda run: text in run.requests[0]["system"]


def denied(run: Run) -> List[str]:
    return [d["tool_name"] for d in run.out.get("permission_denials", [])]


def request_text(text: str) -> Effect:
    """Some request of the run carries `text` (system prompt or a user message)."""
    return lambda run: any(
        text in r["system"] or any(text in t for t in r["user_texts"]) for r in run.requests
    )


def subagent_system(text: str) -> Effect:
    """A subagent's request (its prompt has no marker) had `text` in its system prompt."""

    def read(run: Run) -> bool:
        prompt = f"zebra task {run.who}"
        return any(text in r["system"] for r in run.fake_api.requests if r["prompt"] == prompt)

    return read


def same_request(run: Run) -> Any:
    """What a flag without a visible effect must leave as claude -p's."""
    first = run.requests[0]
    return (
        sorted(set(first["tools"]) - TUI_ONLY_TOOLS),
        first["model"],
        param("output_config")(run),
        param("thinking", "type")(run),
        run.out["result"].startswith("ACK"),
    )


def marks(name: str) -> Effect:
    return lambda run: sorted(p.name for p in run.sandbox.tmp.glob(f"{name}-*"))


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _plugin(root: Path) -> List[str]:
    plugin = root / "zebra-plugin"
    _write(
        plugin / ".claude-plugin" / "plugin.json", json.dumps({"name": "zebra", "version": "1.0.0"})
    )
    _write(
        plugin / "commands" / "stripes.md", "---\ndescription: stripes\n---\nCount the stripes QX7."
    )
    return ["--plugin-dir", str(plugin)]


ECHO_SERVER = str(SUPPORT / "mcp_echo.py")
ECHO_CALL = '[[tooljson:mcp__echo__say:{"text": "zebra {who}"}]]'


def _echo_server(log: Path, delay: float = 0) -> Dict[str, Any]:
    return {"command": sys.executable, "args": [ECHO_SERVER, str(log), str(delay)]}


def _mcp(root: Path) -> List[str]:
    # A little slow to start, as servers run through npx are. Not slower: `claude -p` of
    # 2.1.197 connects its servers fully async (MCP_CONNECTION_NONBLOCKING is on by
    # default there) and names a server's tools only when it won the race with its first
    # request, which a 1.5 s server lost under load; 2.1.332 waits for it (4 s measured).
    # claude-print's gate waits on every release (test_e2e_warm: a 1.5 s server).
    config = {"mcpServers": {"echo": _echo_server(root / "echo.log", delay=0.5)}}
    return ["--mcp-config", json.dumps(config), "--allowedTools", "mcp__echo__say"]


# `claude -p` measured to wait for --mcp-config servers before its first request
# (contract.md, flags row). Before it, 2.1.197 connects them in the background: whether
# its first request names the tool is a race with the server (lost under load), so
# there `claude -p`'s run is no oracle, and claude-print's is held to the written-out
# effect alone (it waits on every release).
CLAUDE_P_WAITS_FOR_MCP = (2, 1, 332)
MCP_RACE_LOST: Dict[str, Any] = {"--mcp-config": ([], [], False), "--strict-mcp-config": []}


def mcp_effect(run: Run) -> Any:
    """The MCP tools the first request tells the model of, the denials, and whether the
    echo server really ran the call."""
    log = run.sandbox.tmp / "case" / "echo.log"
    ran = log.exists() and f"zebra {run.who}" in log.read_text()
    return run.requests[0]["mcp_tools"], denied(run), ran


def mcp_tools_seen(run: Run) -> List[str]:
    return sorted({name for r in run.requests for name in r["mcp_tools"]})


def _user_scope_server(sandbox: Sandbox) -> None:
    """A server of the user's own ~/.claude.json, which --strict-mcp-config leaves out."""
    path = sandbox.home / ".claude.json"
    seed = json.loads(path.read_text())
    seed["mcpServers"] = {"other": _echo_server(sandbox.tmp / "other.log")}
    path.write_text(json.dumps(seed))


def transcript_count(kind: str) -> Effect:
    """How many records of the session's transcript are `kind` attachments."""

    def read(run: Run) -> int:
        [path] = [p for p in run.sandbox.transcripts() if p.stem == run.out["session_id"]]
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return sum((r.get("attachment") or {}).get("type") == kind for r in records)

    return read


AGENTS = json.dumps({"zebra-agent": {"description": "Zebra things", "prompt": "You are zebra Z9."}})
SUBAGENT = (
    '[[tooljson:Task:{"subagent_type": "zebra-agent", "description": "zebra", '
    '"prompt": "zebra task {who}"}]]'
)

CASES = [
    Case(
        "--effort",
        lambda d: ["--effort", "low"],
        "{marker}",
        param("output_config", "effort"),
        "low",
    ),
    Case(
        "--thinking",
        lambda d: ["--thinking", "disabled"],
        "{marker}",
        param("thinking", "type"),  # 2.1.197: disabled in both; 2.1.330: adaptive in both
    ),
    Case(
        "--thinking-display",
        lambda d: ["--thinking-display", "summarized"],
        "{marker}",
        param("thinking", "display"),
        "summarized",
    ),
    Case(
        "--system-prompt-file",
        lambda d: ["--system-prompt-file", str(_write(d / "sp.txt", "You are a file pirate."))],
        "{marker}",
        in_system("You are a file pirate."),
        True,
    ),
    Case(
        "--append-system-prompt-file",
        lambda d: ["--append-system-prompt-file", str(_write(d / "asp.txt", "End with FILE-ARR."))],
        "{marker}",
        in_system("End with FILE-ARR."),
        True,
    ),
    Case(
        "--add-dir",
        lambda d: ["--add-dir", str(_write(d / "extra" / "note.txt", "hi").parent)],
        '{marker} [[tooljson:Read:{"file_path": "EXTRA/note.txt"}]]',
        denied,
        [],  # the Read outside the project is allowed (without the flag it is denied)
    ),
    Case(
        "--permission-mode",
        lambda d: ["--permission-mode", "acceptEdits"],
        '{marker} [[tooljson:Write:{"file_path": "PROJECT/{who}-written.txt", "content": "x"}]]',
        denied,
        [],  # without the flag the Write is denied
    ),
    Case(
        "--dangerously-skip-permissions",
        lambda d: ["--dangerously-skip-permissions"],
        "{marker} [[tool:Bash:touch TMP/{who}-bypassed]]",
        lambda run: (denied(run), (run.sandbox.tmp / f"{run.who}-bypassed").exists()),
        ([], True),
        (("IS_SANDBOX", "1"),),  # as root, Claude Code refuses bypass mode without it
    ),
    Case(
        "--allow-dangerously-skip-permissions",
        lambda d: ["--allow-dangerously-skip-permissions"],
        "{marker} [[tool:Bash:touch TMP/{who}-bypassed]]",
        lambda run: (denied(run), (run.sandbox.tmp / f"{run.who}-bypassed").exists()),
        (["Bash"], False),  # bypass may be chosen, but the session starts in default mode
        (("IS_SANDBOX", "1"),),
    ),
    Case(
        "--agents",
        lambda d: ["--agents", AGENTS],
        "{marker} " + SUBAGENT,
        subagent_system("You are zebra Z9."),
        True,
    ),
    Case(
        "--agent",
        lambda d: ["--agents", AGENTS, "--agent", "zebra-agent"],
        "{marker}",
        request_text("You are zebra Z9."),
        True,
    ),
    Case(
        "--plugin-dir",
        _plugin,
        "/zebra:stripes {marker}",
        request_text("Count the stripes QX7."),
        True,
    ),
    Case(
        "--mcp-config",
        _mcp,
        "{marker} " + ECHO_CALL,
        mcp_effect,
        (["mcp__echo__say"], [], True),  # named in the first request, as claude -p does
    ),
    Case(
        "--strict-mcp-config",
        lambda d: [*_mcp(d), "--strict-mcp-config"],
        "{marker} " + ECHO_CALL,
        mcp_tools_seen,
        ["mcp__echo__say"],  # the user's own server is not started
        prepare=_user_scope_server,
    ),
    Case(
        "--plugin-url",
        lambda d: ["--plugin-url", "API_URL" + PLUGIN_ZIP_PATH],  # served by the fake API
        "/zebra:stripes {marker}",
        request_text(PLUGIN_COMMAND_TEXT),
        True,
    ),
    Case(
        "--restricted",
        lambda d: ["--restricted"],
        "{marker}",
        lambda run: sorted(set(run.requests[0]["tools"]) - TUI_ONLY_TOOLS),
    ),
    Case(
        "--setting-sources",
        lambda d: ["--setting-sources", "user"],
        "{marker}",
        marks("project-hook"),
        [],  # the project's hook (written by the fixture) is not loaded
    ),
    Case(
        "--session-id",
        lambda d: ["--session-id", str(uuid.uuid4())],
        "{marker}",
        lambda run: run.out["session_id"] == run.words[1],
        True,
    ),
    Case(
        "--debug",
        lambda d: ["--debug", "api"],
        "{marker}",
        lambda run: len(list((run.sandbox.home / ".claude" / "debug").glob("*.txt"))) > 0,
        True,
    ),
    Case(
        "--system-prompt-snapshot",
        lambda d: ["--system-prompt-snapshot", "off"],
        "{marker}",
        transcript_count("prompt_snapshot"),
        0,  # "on" (the default of 2.1.331) records one per request
    ),
    Case(
        "--permission-prompts",
        lambda d: ["--permission-prompts", "none"],
        "{marker} [[tool:Bash:touch TMP/{who}-asked]]",
        lambda run: (denied(run), (run.sandbox.tmp / f"{run.who}-asked").exists()),
        (["Bash"], False),  # nobody to ask: what would ask is denied
    ),
    # No effect this sandbox can show: the request and the result stay claude -p's.
    Case("--ax-screen-reader", lambda d: ["--ax-screen-reader"], "{marker}", same_request),
    Case(
        "--exclude-dynamic-system-prompt-sections",
        lambda d: ["--exclude-dynamic-system-prompt-sections"],
        "{marker}",
        same_request,  # claude -p moves those sections out of the system prompt: caching only
    ),
    Case("--brief", lambda d: ["--brief"], "{marker}", same_request),
    Case("--chrome", lambda d: ["--chrome"], "{marker}", same_request),
    Case("--no-chrome", lambda d: ["--no-chrome"], "{marker}", same_request),
    Case(
        "--max-thinking-tokens",
        lambda d: ["--max-thinking-tokens", "2048"],
        "{marker}",
        same_request,
    ),
    Case("--autocompact", lambda d: ["--autocompact", "200000"], "{marker}", same_request),
    Case(
        "--remote-control-session-name-prefix",
        lambda d: ["--remote-control-session-name-prefix", "zz"],
        "{marker}",
        same_request,
    ),
]


def run_as(
    who: str,
    sandbox: Sandbox,
    binary: str,
    args: List[str],
    env: Optional[Dict[str, str]] = None,
    live: bool = False,
) -> Any:
    """claude-print ("ours") or `claude -p` ("theirs") with the same arguments; exit 0.
    `live`: `claude -p` is run, not replayed (the test reads the transcript it writes)."""
    if who == "ours":
        proc = run_claude_print(sandbox, args, binary=binary, env=env)
    else:
        proc = run_claude_p(sandbox, binary, args, env=env, live=live)
    assert_exit(proc, 0)
    return proc


def run_case(
    sandbox: Sandbox, fake_api: FakeApiServer, binary: str, case: Case, who: str
) -> Tuple[Run, Any]:
    scratch = sandbox.tmp / "case"
    scratch.mkdir(exist_ok=True)
    words = [word.replace("API_URL", sandbox.api_url) for word in case.words(scratch)]
    marker = f"{who} case {case.flag}"
    prompt = (
        case.prompt.replace("{marker}", marker)
        .replace("{who}", who)
        .replace("EXTRA", str(scratch / "extra"))
        .replace("TMP", str(sandbox.tmp))
        .replace("PROJECT", str(sandbox.project))
    )
    args = ["--output-format", "json", *words, "--", prompt]
    proc = run_as(who, sandbox, binary, args, dict(case.env))
    out = json.loads(proc.stdout)
    run = Run(who, marker, out, requests_of(fake_api, marker) or [{}], sandbox, fake_api, words)
    effect = case.effect(run)  # now: the next run may change what it reads (hook marks)
    for mark in sandbox.tmp.glob("project-hook-*"):
        mark.unlink()
    return run, effect


# Flags without an effect this sandbox can show only leave the request as it was: the
# releases before the newest take two of them (--ax-screen-reader, --max-thinking-tokens).
SAME_REQUEST_NEWEST_ONLY = {
    "--exclude-dynamic-system-prompt-sections",
    "--brief",
    "--chrome",
    "--no-chrome",
    "--remote-control-session-name-prefix",
}


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            case,
            id=case.flag.lstrip("-"),
            marks=[pytest.mark.newest_only] if case.flag in SAME_REQUEST_NEWEST_ONLY else [],
        )
        for case in CASES
    ],
)
def test_forwarded_flag_does_what_it_does_in_claude_p(
    real_claude: str, sandbox: Sandbox, fake_api: FakeApiServer, case: Case
) -> None:
    version = release.installed_version(real_claude)
    if flags.too_new([case.flag], version):
        pytest.skip(f"{case.flag} is newer than Claude Code {version} (refused: test_flags.py)")
    hook = {"type": "command", "command": f"touch {sandbox.tmp}/project-hook-$$"}
    settings = {"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}}
    _write(sandbox.project / ".claude" / "settings.json", json.dumps(settings))
    if case.prepare is not None:
        case.prepare(sandbox)
    ours, ours_effect = run_case(sandbox, fake_api, real_claude, case, "ours")
    theirs, theirs_effect = run_case(sandbox, fake_api, real_claude, case, "theirs")
    assert ours.out["subtype"] == theirs.out["subtype"] == "success"
    effects = [ours_effect, theirs_effect]
    racy = (contract.parse_version(version) or (0,)) < CLAUDE_P_WAITS_FOR_MCP
    if racy and case.flag in MCP_RACE_LOST and effects[1] == MCP_RACE_LOST[case.flag]:
        assert effects[0] == case.expected, f"{case.flag}: ours {effects[0]!r}"
        effects[1] = case.expected  # claude -p sent its request before the server was up
    assert effects[0] == effects[1], f"{case.flag}: ours {effects[0]!r}, claude -p {effects[1]!r}"
    if case.expected is not None:
        assert effects[1] == case.expected, "claude -p itself did not show the effect"
    assert_interactive(sandbox, ours.out["session_id"])
    assert_clean(sandbox)


def test_a_permission_dialog_no_hook_answers_fails_fast(real_claude: str, sandbox: Sandbox) -> None:
    """Plan mode behind a custom API endpoint: 2.1.330 asks on screen, past the
    PermissionRequest hook, and `claude -p` refuses the call and exits 1. claude-print must
    say so (exit 2) instead of waiting for its timeout; where `claude -p` denies the tool
    and answers, claude-print does the same."""
    marker = sandbox.tmp / "plan-ran"
    args = ["--output-format", "json", "--permission-mode", "plan", "--"]
    prompt = f"[[tool:Bash:touch {marker}]]"
    theirs = run_claude_p(sandbox, real_claude, [*args, prompt])
    ours = run_claude_print(sandbox, [*args, prompt], binary=real_claude, timeout=60)
    assert not marker.exists()
    if b"auto mode could not check" in theirs.stderr:
        assert_exit(theirs, 1)
        assert_exit(ours, 2)
        assert b"auto mode cannot check tool calls" in ours.stderr, ours.stderr
    else:
        assert_exit(ours, 0)
        assert_exit(theirs, 0)
        assert json.loads(ours.stdout)["result"] == json.loads(theirs.stdout)["result"]
    assert_clean(sandbox)


def test_resume_by_id_like_claude_p(
    real_claude: str, sandbox: Sandbox, fake_api: FakeApiServer
) -> None:
    """--resume ID: the same session goes on, with its history in the next request."""
    # live: the runs below resume the transcript it leaves (recorded_claude_p)
    first = run_claude_p(
        sandbox, real_claude, ["--output-format", "json", "remember zebra 42"], live=True
    )
    assert_exit(first, 0)
    original = json.loads(first.stdout)["session_id"]
    seen = []
    for who in ("ours", "theirs"):
        args = ["--output-format", "json", "--resume", original, f"{who} resumed"]
        proc = run_as(who, sandbox, real_claude, args, live=True)
        out = json.loads(proc.stdout)
        history = requests_of(fake_api, f"{who} resumed")[0]["user_texts"]
        seen.append((out["session_id"], out["subtype"], any("zebra 42" in t for t in history)))
    assert seen == [(original, "success", True)] * 2
    # Both turns went into the one transcript, ours as an interactive session.
    [path] = [p for p in sandbox.transcripts() if p.stem == original]
    assert "ours resumed" in path.read_text() and "theirs resumed" in path.read_text()
    assert "cli" in set(entrypoints(path))
    assert_clean(sandbox)


def test_fork_session_like_claude_p(
    real_claude: str, sandbox: Sandbox, fake_api: FakeApiServer
) -> None:
    """--resume ID --fork-session: a new session id, with the resumed session's history."""
    # live: the runs below resume the transcript it leaves (recorded_claude_p)
    first = run_claude_p(
        sandbox, real_claude, ["--output-format", "json", "remember zebra 41"], live=True
    )
    assert_exit(first, 0)
    original = json.loads(first.stdout)["session_id"]
    forks = []
    for who in ("ours", "theirs"):
        args = ["--output-format", "json", "--resume", original, "--fork-session", f"{who} fork"]
        proc = run_as(who, sandbox, real_claude, args, live=True)
        session = json.loads(proc.stdout)["session_id"]
        history = requests_of(fake_api, f"{who} fork")[0]["user_texts"]
        forks.append((session != original, any("remember zebra 41" in t for t in history)))
        if who == "ours":
            assert_interactive(sandbox, session)
    assert forks == [(True, True), (True, True)]
    assert_clean(sandbox)


def test_file_downloads_like_claude_p(real_claude: str, sandbox: Sandbox) -> None:
    """--file: each file in <cwd>/<session id>/uploads, bad specs and a missing file
    skipped, the run a success; without a session token, exit 1 before anything runs."""
    specs = ["--file", f"{MISSING_FILE_ID}:m.txt", "file_b:sub/b.txt file_c:/uploads/c.txt"]
    specs += ["bad:", "file_d:../up.txt"]
    token = {file_downloads.TOKEN_VAR: "tok"}
    contents = {"sub/b.txt": file_content("file_b"), "c.txt": file_content("file_c")}

    def uploaded(folders: Set[Path]) -> Dict[str, bytes]:
        uploads = [folder / "uploads" for folder in folders]
        return {str(p.relative_to(u)): p.read_bytes() for u in uploads for p in u.rglob("*.txt")}

    # claude -p first, both times: a run's key holds the sandbox's files, and claude-print's
    # session (a random id) would give each CI run a new key, never replayed.
    no_token = ["--output-format", "json", "--file", "file_b:b.txt", "--", "no token"]
    theirs_refused = run_claude_p(sandbox, real_claude, no_token)
    found = []
    for who in ("theirs", "ours"):
        before = set(sandbox.project.iterdir())
        args = ["--output-format", "json", *specs, "--", f"{who} files"]
        proc = run_as(who, sandbox, real_claude, args, token)
        assert_exit(proc, 0)
        made = set(sandbox.project.iterdir()) - before
        if who == "theirs" and uploaded(made) != contents:
            # claude -p 2.1.197 sometimes exits before its downloads are written under
            # load (no folder, or one without the files: seen in CI with two and three
            # workers): the oracle gets a second try, claude-print none.
            for folder in made:
                shutil.rmtree(folder)
            proc = run_as(who, sandbox, real_claude, args, token)
            assert_exit(proc, 0)
            made = set(sandbox.project.iterdir()) - before
        assert len(made) == 1, (who, made, proc.stderr.decode()[-2000:])
        [folder] = made
        found.append((uploaded(made), folder.name == json.loads(proc.stdout)["session_id"]))
    assert found[1] == (contents, True)
    # claude -p 2.1.197 with stdin from /dev/null names the folder after another id.
    assert found[0][0] == contents
    ours_refused = run_claude_print(sandbox, no_token, binary=real_claude)
    assert_exit(ours_refused, 1)
    assert_exit(theirs_refused, 1)
    for proc in (ours_refused, theirs_refused):
        assert file_downloads.NO_TOKEN.encode() in proc.stderr, proc.stderr
    assert_clean(sandbox)
