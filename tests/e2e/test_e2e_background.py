"""End to end: a run ends when Claude Code's work ends, as `claude -p` ends it.

The fake model leaves work running when its turn ends: a command with
`run_in_background`, a subagent (in the background by default on 2.1.332, synchronous on
2.1.197). `claude -p` waits for it, hands the model each task's outcome as a new prompt
(the fake model answers that with `Noted <status>: <summary>`) and prints the last
answer; work it does not wait for is killed after its grace, or at its ceiling
(CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS). Each case runs both sides at once, in twin
sandboxes, and compares exit code, output, `num_turns`, what the model was sent last,
and what the work left on disk.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest
from checks import assert_exit
from fake_api import FakeApiServer
from harness import Pair, Sandbox, run_claude_print, run_pair
from held_session import HeldSession
from held_session import results as held_results

pytestmark = pytest.mark.e2e

NOTE = "<task-notification>"


def background(command: str, description: str = "bg", **more: Any) -> str:
    """A prompt whose model runs `command` in the background, then answers."""
    call = {"command": command, "run_in_background": True, "description": description, **more}
    return f"Run it [[tooljson:Bash:{json.dumps(call)}]]"


def delegate(prompt: str) -> str:
    """A prompt whose model hands `prompt` to a general-purpose subagent."""
    call = {"description": "sub job", "prompt": prompt, "subagent_type": "general-purpose"}
    # Brackets as JSON escapes: a directive in `prompt` must not end this one early.
    raw = json.dumps(call).replace("[", "\\u005b").replace("]", "\\u005d")
    return f"Delegate [[tooljson:Agent:{raw}]]"


def pair(
    sandbox: Sandbox,
    binary: str,
    fake_api: FakeApiServer,
    oracle_api: FakeApiServer,
    prompt: str,
    fmt: str,
    env: Dict[str, str],
) -> Pair:
    args = [prompt, "--output-format", fmt, "--dangerously-skip-permissions"]
    if fmt == "stream-json":
        args.append("--verbose")
    return run_pair(
        sandbox,
        binary,
        fake_api,
        oracle_api,
        args,
        args,
        env={"IS_SANDBOX": "1", **env},
        twin=True,
    )


def results(stdout: bytes) -> List[Dict[str, Any]]:
    events = [json.loads(line) for line in stdout.decode().splitlines() if line.strip()]
    return [e for e in events if e.get("type") == "result"]


def last_prompts(requests: List[Dict[str, Any]]) -> List[str]:
    """The last prompt of each side's turn requests, task ids and paths left out."""
    return [NOTE if NOTE in r["prompt"] else r["prompt"] for r in requests[-1:]]


def assert_like_claude_p(run: Pair, fmt: str) -> None:
    assert_exit(run.theirs, 0)
    assert_exit(run.ours, 0)
    if fmt == "text":
        assert run.ours.stdout.decode() == run.theirs.stdout.decode()
    else:
        ours, theirs = results(run.ours.stdout), results(run.theirs.stdout)
        fields = ("subtype", "is_error", "result", "num_turns")
        assert [{k: r.get(k) for k in fields} for r in ours] == [
            {k: r.get(k) for k in fields} for r in theirs
        ]
    assert last_prompts(run.our_requests) == last_prompts(run.their_requests)
    run.assert_same_side_effects()


# In scripts/sweep-releases' core: how delegation ends moves between releases. One format
# on each older CI release (CI's time, issue 42), every one with --full.
@pytest.mark.parametrize(
    "fmt",
    [
        pytest.param("json", marks=pytest.mark.between),
        "text",
        pytest.param("stream-json", marks=pytest.mark.matrix),
    ],
)
def test_a_background_command_runs_to_its_end_and_the_model_hears_of_it(
    real_claude: str,
    sandbox: Sandbox,
    fake_api: FakeApiServer,
    oracle_api: FakeApiServer,
    fmt: str,
) -> None:
    prompt = background("sleep 2; echo done > bg.txt")
    run = pair(sandbox, real_claude, fake_api, oracle_api, prompt, fmt, {})
    assert_like_claude_p(run, fmt)
    assert run.our_changes is not None and "+project/bg.txt" in run.our_changes
    last = run.our_requests[-1]["prompt"]
    assert NOTE in last and "<status>completed</status>" in last, last


@pytest.mark.matrix
@pytest.mark.between
def test_a_delegated_task_is_answered_after_the_subagent_reports(
    real_claude: str, sandbox: Sandbox, fake_api: FakeApiServer, oracle_api: FakeApiServer
) -> None:
    run = pair(sandbox, real_claude, fake_api, oracle_api, delegate("Say hello"), "json", {})
    assert_like_claude_p(run, "json")
    # The subagent's own request went out on both sides, before the last answer.
    assert any(r["prompt"] == "Say hello" for r in run.our_requests)


# Measured with claude -p (docs/compatibility.md): up to 2.1.291 a background command is
# killed 5 s after the last answer; from 2.1.292 claude -p waits for it, until its own
# background time limit (10 min by default), which the TUI does not keep.
SHELLS_HELD_FROM = (2, 1, 292)
RUN_LONG = [background("sleep 600; echo done > bg.txt", "long"), "--output-format", "json"]


@pytest.mark.matrix  # a per-release rule
@pytest.mark.between
def test_a_command_that_never_ends_is_stopped_or_waited_for_as_in_claude_p(
    real_claude: str, sandbox: Sandbox
) -> None:
    """Up to 2.1.291: the first answer is the result and the command is killed with the
    TUI. From 2.1.292: the run waits for the command, so --timeout ends it (exit 124,
    one result object). Either way nothing is left running."""
    held = version_of(real_claude) >= SHELLS_HELD_FROM
    # Up to 2.1.291 the run takes two turns and claude -p's 5 s grace (about 8 s quiet):
    # --timeout only bounds a hang there, and 15 s was too little at load 22 on 2 cores.
    proc = run_claude_print(
        sandbox,
        [*RUN_LONG, "--dangerously-skip-permissions", "--timeout", "15" if held else "90"],
        binary=real_claude,
        env={"IS_SANDBOX": "1"},
    )
    [result] = results(proc.stdout)
    if not held:
        assert_exit(proc, 0)
        assert result["result"] == "Tool turn done.", result
    else:
        assert_exit(proc, 124)
        assert result["subtype"] == "error_timeout", result
    assert running_in(sandbox.project) == []
    assert not (sandbox.project / "bg.txt").exists()
    assert sandbox.leftovers() == []


@pytest.mark.matrix  # a per-release rule
@pytest.mark.between
def test_the_ceiling_ends_the_wait_for_a_subagent_as_in_claude_p(
    real_claude: str, sandbox: Sandbox, fake_api: FakeApiServer, oracle_api: FakeApiServer
) -> None:
    """A subagent that takes 60 s holds claude -p (every release but 2.1.197, where the
    Agent tool waits for it in the turn) up to its ceiling, 3 s here on both sides: then
    the answer before it is the result."""
    if version_of(real_claude) < (2, 1, 198):  # synchronous: the turn itself waits
        return
    env = {"CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS": "3000"}
    prompt = delegate("[[sleep:60]] slow")
    run = pair(sandbox, real_claude, fake_api, oracle_api, prompt, "json", env)
    assert_exit(run.theirs, 0)
    assert_exit(run.ours, 0)
    ours, theirs = results(run.ours.stdout), results(run.theirs.stdout)
    fields = ("subtype", "is_error", "result", "num_turns")
    assert [{k: r.get(k) for k in fields} for r in ours] == [
        {k: r.get(k) for k in fields} for r in theirs
    ]


def version_of(binary: str) -> Tuple[int, ...]:
    from harness import claude_release

    return tuple(int(part) for part in claude_release(binary).split("."))


def running_in(*dirs: Path) -> List[str]:
    """Processes whose working directory is one of `dirs` (a command's `sleep` too,
    whose own command line names nothing of the test)."""
    wanted = {os.path.realpath(d) for d in dirs}
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cwd = os.readlink(f"/proc/{pid}/cwd")
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if cwd in wanted:
                found.append(f"{pid}: {cmdline!r}")
    return found


# claude -p's events claude-print does not print (docs/compatibility.md, "Background work").
NOT_PRINTED = {"task_updated", "task_progress", "background_tasks_changed"}


def shape(events: List[Dict[str, Any]]) -> List[Tuple[str, ...]]:
    """The session's events by kind, in order: what an SDK client sees, ids aside."""
    out: List[Tuple[str, ...]] = []
    for event in events:
        kind, subtype = str(event.get("type")), str(event.get("subtype", ""))
        if kind == "system" and subtype in NOT_PRINTED:
            continue
        if kind == "result":
            out.append((kind, subtype, str(event.get("num_turns")), str(event.get("result"))))
        elif kind == "assistant":
            blocks = event["message"]["content"]
            out.append((kind, *(str(b.get("type")) for b in blocks)))
        else:
            out.append((kind, subtype))
    return out


@pytest.mark.matrix
@pytest.mark.between
def test_a_notification_between_the_caller_s_turns_is_answered_as_in_claude_p(
    real_claude: str, sandbox: Sandbox, fake_api: FakeApiServer, oracle_api: FakeApiServer
) -> None:
    """stream-json input, stdin held open as an SDK client holds it: the first message's
    model leaves a command running and answers; the command ends while the caller waits;
    then the caller's next message. Both sides answer the notification in a turn of its
    own between the two (init, answer, result), then the caller's message."""
    twin = sandbox.twin()
    streamed = ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    flags = [*streamed, "--dangerously-skip-permissions"]
    ours = [sys.executable, "-m", "claude_print", "--claude-binary", real_claude, *flags]
    theirs = [real_claude, "-p", *flags]
    sides = []
    for argv, box, api in ((ours, sandbox, fake_api), (theirs, twin, oracle_api)):
        env = box.env(ANTHROPIC_BASE_URL=api.url, IS_SANDBOX="1")
        with HeldSession(argv, box.project, env, timeout=180) as session:
            session.send(background("sleep 2; echo done > bg.txt"))
            session.until(answered("Tool turn done."), "the first result")
            session.until(answered("Noted completed: "), "the notification's turn")
            session.send("what is 2+2")
            session.until(answered("The answer is 4."), "the second message's result")
        assert session.code == 0, session.stderr[-3000:]
        assert (box.project / "bg.txt").read_text() == "done\n"
        sides.append(shape(session.events))
    assert sides[0] == sides[1]


def answered(start: str) -> Callable[[List[Dict[str, Any]]], bool]:
    """Whether a result starting with `start` is among the events."""
    return lambda events: any(str(r.get("result")).startswith(start) for r in held_results(events))
