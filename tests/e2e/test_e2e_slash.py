"""Slash prompts against the real thing (issue 29): claude-print beside that release's
`claude -p`, each in its own HOME and work dir with a stored login, comparing exit code,
output and side effects (the files a run creates, changes or deletes outside Claude
Code's session bookkeeping, tests/support/slash_space.BOOKKEEPING).

What claude-print must do is read off `claude -p`'s live answer, never off claude-print's
own tables: a panel command's "isn't available" answer is given as is; a prompt that
names no built-in command (a path, a custom command) goes through the TUI and must come
out the same; everything else is refused with exit 2, nothing started, nothing changed.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
import slash_fuzz
from checks import assert_exit
from fake_api import FakeApiServer
from harness import Sandbox, remove_run_dir, run_claude_p, run_claude_print
from slash_space import side_effects, snapshot
from warm_helpers import stop_keepers, warm_env, warm_up_until_ready, was_warm

pytestmark = [pytest.mark.e2e]

UNAVAILABLE = re.compile(r"/[a-z][a-z0-9-]* isn't available in this environment\.")
UNKNOWN = re.compile(r"Unknown command: /\S+")  # 2.1.197's claude -p, for a name it lacks
# Prompts that name no built-in command: through the TUI, and the same as claude -p.
SAME = [
    "/etc/hosts what is it",
    "/hello",  # the project's .claude/commands/hello.md
    "/hello with arguments",
]
# The cases, and one of each kind the capture found (scripts/capture-slash).
PROMPTS = [
    *SAME,
    "/logout now",
    "/logout",
    "/logout\x7f",
    "/LOGOUT",
    "/Logout now",
    "/export out.txt",
    "/status now",
    "/add-dir /tmp",
    "/help",
    "/model",
    "/model claude-sonnet-4-5",
    "/cost",
    "/vim on",
    "/upgrade x",
    "/release-notes x",
    "/clear",
    "/heapdump",
    "/nosuchcommand",
    "  /logout  ",
    "/logout\nnow",
    "/init",  # prompt commands: through the TUI where it was measured equal, else refused
    "/review now",
    "/debug",
    # Issue 41: each signed the user out (or ran the built-in) through the TUI, where
    # claude -p sends it to the model as text (tests/turns/test_slash.SEEDS).
    "/logout:",
    "/logout\ufe0f",
    "/lo\u034fgout",
    "/logout\u3164",
    "/logout\U000e0100",
    "\u200b/logout",
    "/model:",
    "/export:",
    "/plugin:logout",
]


def prepare(root: Path, api: FakeApiServer) -> Sandbox:
    """A sandbox with a stored login (a /logout would delete it) and a custom command."""
    sandbox = slash_fuzz.prepare(root, api)
    commands = sandbox.project / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "hello.md").write_text("Say hello to $ARGUMENTS\n")
    return sandbox


def changes(sandbox: Sandbox, run: Any) -> Tuple[subprocess.CompletedProcess[bytes], List[str]]:
    root = sandbox.home.parent
    before = snapshot(root)
    proc = run()
    return proc, side_effects(before, snapshot(root))


def expectation(prompt: str, theirs: Dict[str, Any]) -> str:
    """What claude-print must do, from claude -p's live answer: "same" (through the
    TUI), "answer" (claude -p's fixed text, the TUI never started), or "refuse-or-same"
    (refused, or through the TUI with claude -p's outcome: never a third thing)."""
    if prompt in SAME:
        return "same"
    local = theirs.get("num_turns") == 0 and not theirs.get("is_error")
    if local and UNAVAILABLE.fullmatch(theirs["result"]):
        return "answer"
    if local and UNKNOWN.fullmatch(theirs["result"]):
        return "answer-or-refuse"  # refused where the name is not among the release's
    return "refuse-or-same"


def without_sandbox(result: Dict[str, Any], box: Sandbox) -> List[Any]:
    """The fields compared; `ACK <length> <sha256-12>` keeps only the length when the
    prompt may carry the sandbox's path (both sandboxes' paths are as long)."""
    text = str(result.get("result"))
    text = re.sub(r"^(ACK \d+) [0-9a-f]{12}$", r"\1", text)
    return [result.get("subtype"), result.get("is_error"), result.get("num_turns"), text]


# The releases before the newest take a sample with each kind once or more: through the
# TUI, a panel's answer, a refusal, case and spacing, a control character, an unknown
# name, a prompt command.
NEWEST_ONLY = {
    "/hello",
    "/logout",
    "/Logout now",
    "/status now",
    "/add-dir /tmp",
    "/model",
    "/vim on",
    "/upgrade x",
    "/release-notes x",
    "/clear",
    "/logout\nnow",
    "/debug",
}


@pytest.mark.parametrize(
    "prompt",
    [
        pytest.param(
            prompt,
            id=json.dumps(prompt)[1:-1],
            # The oldest release in CI: every third prompt (what the TUI runs differs
            # per release), the release between: one that goes through the TUI; all of
            # them with --full.
            marks=[pytest.mark.newest_only]
            if prompt in NEWEST_ONLY
            else [pytest.mark.matrix, pytest.mark.between]
            if prompt == "/etc/hosts what is it"
            else [pytest.mark.matrix]
            if i % 3 == 0
            else [],
        )
        for i, prompt in enumerate(PROMPTS)
    ],
)
def test_slash_prompt_as_claude_p(
    tmp_path: Path,
    fake_api: FakeApiServer,
    oracle_api: FakeApiServer,
    real_claude: str,
    prompt: str,
) -> None:
    # Paths of one length: a prompt command may put the work dir into the prompt.
    ours_box, theirs_box = prepare(tmp_path / "a", fake_api), prepare(tmp_path / "b", oracle_api)
    words = ["--output-format", "json", "--", prompt]
    theirs, their_changes = changes(
        theirs_box, lambda: run_claude_p(theirs_box, real_claude, words)
    )
    assert theirs.returncode == 0, theirs.stderr.decode()
    their_result = json.loads(theirs.stdout)
    ours, our_changes = changes(
        ours_box,
        lambda: run_claude_print(
            ours_box, ["--claude-binary", real_claude, "--timeout", "90", *words]
        ),
    )
    expected = expectation(prompt, their_result)
    if expected != "same" and expected != "answer" and ours.returncode == 2:
        assert_exit(ours, 2)
        refused = json.loads(ours.stdout)
        assert (refused["subtype"], refused["is_error"]) == ("error_during_execution", True)
        assert "claude-print does not send it to the TUI" in refused["errors"][0]
        assert our_changes == [], our_changes
        assert ours_box.transcripts() == []  # the TUI never started
        return
    assert_exit(ours, theirs.returncode)
    mine = json.loads(ours.stdout)
    if expected.startswith("answer"):
        fields = ("subtype", "is_error", "num_turns", "result")
        assert [mine[k] for k in fields] == [their_result[k] for k in fields]
    else:
        assert without_sandbox(mine, ours_box) == without_sandbox(their_result, theirs_box)
        our_prompts = [r["prompt"].replace(str(ours_box.home.parent), "$")
                       for r in fake_api.requests if not r["side"]][-1:]  # fmt: skip
        their_prompts = [r["prompt"].replace(str(theirs_box.home.parent), "$")
                         for r in oracle_api.requests if not r["side"]][-1:]  # fmt: skip
        assert our_prompts == their_prompts
    assert our_changes == their_changes
    if expected.startswith("answer"):
        assert ours_box.transcripts() == []
    assert ours_box.leftovers() == []


# The same seeds by every other way in: stdin, --input-file, a stream-json message (the
# first and a later one). Refused at once (exit 2, or an error result for that message),
# the login and every other file as they were.
SEEDS_ELSEWHERE = ["/logout:", "/logout\ufe0f", "\u200b/logout", "/plugin:logout"]


@pytest.mark.matrix
@pytest.mark.parametrize(
    "way",
    [pytest.param("stdin", marks=pytest.mark.between), "paste", "input-file", "stream-json"],
)
def test_a_prompt_the_tui_may_read_as_a_command_is_refused_every_way_in(
    tmp_path: Path, fake_api: FakeApiServer, real_claude: str, way: str
) -> None:
    box = prepare(tmp_path / "a", fake_api)
    for index, prompt in enumerate(SEEDS_ELSEWHERE):
        words = ["--claude-binary", real_claude, "--output-format", "json"]
        stdin = prompt.encode("utf-8", "surrogatepass")
        if way == "paste":  # stdin goes in by the editor unless told
            words += ["--prompt-via", "paste"]
        elif way == "input-file":
            path = box.tmp / f"prompt-{index}.txt"
            path.write_bytes(stdin)
            words += ["--input-file", str(path)]
            stdin = b""
        elif way == "stream-json":  # the first message, then one after an answered one
            words = [*words[:-1], "stream-json", "--verbose", "--input-format", "stream-json"]
            lines = [user_message(prompt), user_message("What is 2+2?"), user_message(prompt)]
            stdin = b"".join(line.encode() + b"\n" for line in lines)
        run = functools.partial(run_claude_print, box, words, stdin=stdin)
        proc, changed = changes(box, run)
        assert changed == [], (repr(prompt), changed)
        if way == "stream-json":
            assert_exit(proc, 1)  # the last message's result is an error
            out = [json.loads(line) for line in proc.stdout.decode().splitlines()]
            results = [e for e in out if e.get("type") == "result"]
            assert [r["is_error"] for r in results] == [True, False, True], repr(prompt)
            assert results[1]["result"] == "The answer is 4."  # the session went on
            for refused in (results[0], results[2]):
                assert "claude-print does not send it to the TUI" in refused["errors"][0]
        else:
            assert_exit(proc, 2)
            assert "claude-print does not send it to the TUI" in proc.stderr.decode()
    assert box.transcripts() == [] or way == "stream-json"


@pytest.mark.matrix
def test_a_warm_run_refuses_it_and_leaves_the_waiting_tui_unused(
    tmp_path: Path, fake_api: FakeApiServer, real_claude: str
) -> None:
    """`--warm` with a TUI waiting at its box: each seed is refused before the run asks
    for it (exit 2, the login kept), and the next run still finds it unused."""
    box = prepare(tmp_path / "a", fake_api)
    env = warm_env(box)
    credentials = (box.home / ".claude" / ".credentials.json").read_bytes()
    flags = ["--output-format", "json"]
    warm = functools.partial(run_claude_print, box, binary=real_claude, env=env)
    try:
        warm_up_until_ready(box, real_claude, env, flags, box.project)
        for prompt in SEEDS_ELSEWHERE:
            stdin = prompt.encode("utf-8", "surrogatepass")
            proc = warm(["--warm", "--trace", *flags], stdin=stdin)
            assert_exit(proc, 2)
            assert "claude-print does not send it to the TUI" in proc.stderr.decode()
            assert b"has the request" not in proc.stderr, repr(prompt)
        assert (box.home / ".claude" / ".credentials.json").read_bytes() == credentials
        after = warm(["--warm", "--trace", *flags, "What is 2+2?"])
        assert_exit(after, 0)
        assert was_warm(after), after.stderr.decode()[-2000:]
        assert json.loads(after.stdout)["result"] == "The answer is 4."
    finally:
        stop_keepers(box)
        remove_run_dir(box)  # made by warm_env; this sandbox is not the fixture's


def user_message(text: str) -> str:
    message = {"role": "user", "content": text}
    return json.dumps({"type": "user", "message": message, "parent_tool_use_id": None})
