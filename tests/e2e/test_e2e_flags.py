"""End to end: `claude -p` flags that claude-print emulates, against the real TUI.

Each case runs claude-print and `claude -p` with the same flags on the same fake
API and compares exit codes, the fields a script reads, and the key set.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from checks import (
    TUI_ONLY_TOOLS,
    assert_clean,
    assert_exit,
    assert_interactive,
    assert_same_shape,
    assert_text_like_claude_p,
    requests_of,
    run_json_pair,
)
from fake_api import FakeApiServer
from harness import Sandbox, run_claude_p, run_claude_print

pytestmark = pytest.mark.e2e

# Less than any API call costs: the first call reaches it.
TINY_BUDGET = "0.0000001"
SAME_KEYS = ("subtype", "is_error", "num_turns", "errors", "terminal_reason", "stop_reason")


@pytest.mark.matrix
def test_budget_reached_by_an_answer_like_claude_p(real_claude: str, sandbox: Sandbox) -> None:
    args = ["--max-budget-usd", TINY_BUDGET, "What is 2+2?"]
    a, b = run_json_pair(sandbox, real_claude, args, 1)
    for key in SAME_KEYS:
        assert a.get(key) == b.get(key), key
    assert a["errors"] == ["Reached maximum budget ($1e-7)"]
    assert a["total_cost_usd"] == pytest.approx(b["total_cost_usd"], rel=0.01)
    assert a["usage"] == b["usage"], "claude -p reports zero usage for a budget stop"
    assert_same_shape(a, b)
    assert_interactive(sandbox, a["session_id"])
    assert_text_like_claude_p(sandbox, real_claude, args)


def test_budget_stops_before_the_tool_runs_like_claude_p(
    real_claude: str, sandbox: Sandbox, tmp_path: Path
) -> None:
    marker = tmp_path / "tool-ran"
    prompt = f"Run it [[tool:Bash:touch {marker}]]"
    args = ["--max-budget-usd", TINY_BUDGET, "--allowedTools", "Bash", "--", prompt]
    ours = run_claude_print(sandbox, ["--output-format", "json", *args], binary=real_claude)
    assert_exit(ours, 1)
    assert not marker.exists(), "the tool of the call that reached the budget ran"
    # `claude -p` of 2.1.332 itself runs that tool now and then on a loaded machine (2 runs
    # of 12 with 8 busy loops): its cost check races its tool call. It is no oracle for
    # this line, only for the result's fields below.
    theirs = run_claude_p(sandbox, real_claude, ["--output-format", "json", *args])
    assert_exit(theirs, 1)
    a, b = json.loads(ours.stdout), json.loads(theirs.stdout)
    for key in SAME_KEYS:
        assert a.get(key) == b.get(key), key
    assert a["stop_reason"] == "tool_use"
    assert a["total_cost_usd"] == pytest.approx(b["total_cost_usd"], rel=0.01)
    assert_same_shape(a, b)
    assert_clean(sandbox)


@pytest.mark.newest_only
def test_budget_with_a_tool_started_mid_stream_is_like_claude_p(
    real_claude: str, sandbox: Sandbox, tmp_path: Path
) -> None:
    """Over a network a message's end (usage, stop reason) can come after its tool call,
    and the TUI starts the tool before it. `claude -p` then runs that tool, for its cost
    check comes at the message's end; the TUI records the message only after the tool's
    PreToolUse hook has answered, so claude-print cannot know the call's cost either and
    goes by the cost so far. Measured: both run it, and report the same."""
    # Longer than ASK_SETTLE (3 s), which claude-print waits for the call's record in vain.
    tail = " [[tailsleep:5]]"
    results = []
    for side in ("ours", "theirs"):
        marker = tmp_path / f"tool-ran-{side}"
        prompt = f"Run it [[tool:Bash:touch {marker}]]{tail}"
        args = ["--output-format", "json", "--max-budget-usd", TINY_BUDGET]
        args += ["--allowedTools", "Bash", "--", prompt]
        if side == "ours":
            proc = run_claude_print(sandbox, args, binary=real_claude)
        else:
            proc = run_claude_p(sandbox, real_claude, args)
        assert_exit(proc, 1)
        assert marker.exists(), f"{side}: the tool started mid-stream did not run"
        results.append(json.loads(proc.stdout))
    a, b = results
    for key in SAME_KEYS:
        assert a.get(key) == b.get(key), key
    assert a["total_cost_usd"] == pytest.approx(b["total_cost_usd"], rel=0.01)
    assert_clean(sandbox)


@pytest.mark.parametrize(
    "max_turns, budget", [("1", "5"), ("3", TINY_BUDGET)], ids=["turns-first", "budget-first"]
)
def test_budget_and_max_turns_together_like_claude_p(
    real_claude: str, sandbox: Sandbox, max_turns: str, budget: str
) -> None:
    """Both limits: PostToolBatch gets two hooks (the batch counter and the budget's
    asking one); whichever limit is reached first ends the run, as in `claude -p`."""
    args = ["--max-turns", max_turns, "--max-budget-usd", budget, "--allowedTools", "Bash"]
    a, b = run_json_pair(sandbox, real_claude, [*args, "--", "Run it [[tool:Bash:echo hi]]"], 1)
    for key in SAME_KEYS:
        assert a.get(key) == b.get(key), key
    assert a["total_cost_usd"] == pytest.approx(b["total_cost_usd"], rel=0.01)
    assert_clean(sandbox)


@pytest.mark.parametrize("tool", [False, True], ids=["answer", "tool"])
def test_a_budget_of_exactly_one_calls_cost_is_reached_like_claude_p(
    real_claude: str, sandbox: Sandbox, tmp_path: Path, tool: bool
) -> None:
    # `claude -p` stops once the cost reaches the budget (>=): at exactly the first
    # call's cost the answer is an error and that call's tool does not run. On a loaded
    # machine `claude -p` itself runs that tool now and then (its cost check races the
    # tool call: test_budget_stops_before_the_tool_runs_like_claude_p), so each run has
    # its own marker and only claude-print's is checked. The fake API bills every call
    # the same (42 tokens in), whatever the marker's name.
    def prompt(side: str) -> str:
        return f"Run it [[tool:Bash:touch {tmp_path / side}]]" if tool else "What is 2+2?"

    head = ["--output-format", "json", "--allowedTools", "Bash", "--max-budget-usd"]
    probe = run_claude_p(sandbox, real_claude, [*head, TINY_BUDGET, "--", prompt("probe")])
    assert_exit(probe, 1)
    first_call = json.loads(probe.stdout)["total_cost_usd"]
    ours = run_claude_print(
        sandbox, [*head, repr(first_call), "--", prompt("ours")], binary=real_claude
    )
    assert_exit(ours, 1)
    assert not (tmp_path / "ours").exists(), "the tool of the call that reached the budget ran"
    theirs = run_claude_p(sandbox, real_claude, [*head, repr(first_call), "--", prompt("them")])
    assert_exit(theirs, 1)
    a, b = json.loads(ours.stdout), json.loads(theirs.stdout)
    for key in SAME_KEYS:
        assert a.get(key) == b.get(key), key
    assert a["num_turns"] == 1
    assert a["total_cost_usd"] == b["total_cost_usd"] == first_call
    assert_clean(sandbox)


def test_budget_not_reached_changes_nothing(
    real_claude: str, sandbox: Sandbox, tmp_path: Path
) -> None:
    marker = tmp_path / "tool-ran"
    prompt = f"Run it [[tool:Bash:touch {marker}]]"
    args = ["--max-budget-usd", "5", "--allowedTools", "Bash", "--", prompt]
    a, b = run_json_pair(sandbox, real_claude, args, 0)
    assert marker.exists()
    assert (a["subtype"], a["result"], a["num_turns"]) == (b["subtype"], b["result"], 2)
    assert_same_shape(a, b)
    assert_clean(sandbox)


@pytest.mark.matrix
def test_no_session_persistence_leaves_no_transcript(real_claude: str, sandbox: Sandbox) -> None:
    args = ["--no-session-persistence", "--allowedTools", "Bash", "--", "Run [[tool:Bash:echo hi]]"]
    a, b = run_json_pair(sandbox, real_claude, args, 0)
    assert (a["result"], a["num_turns"]) == (b["result"], b["num_turns"])
    assert a["usage"]["input_tokens"] == b["usage"]["input_tokens"], "read before removal"
    assert_same_shape(a, b)
    assert sandbox.transcripts() == [], "claude -p and claude-print both leave none"
    assert_clean(sandbox)


# Forwarded flags whose effect shows in the request: (flag words, what to compare).
FORWARDED_CASES = [
    (["--system-prompt", "You are a fake pirate."], "system"),
    (["--append-system-prompt", "Always end with ARRR."], "system"),
    (["--tools", "Bash,Read"], "tools"),
    (["--disallowedTools", "Bash"], "tools"),
    (["--model", "claude-sonnet-4-5"], "model"),
    (["--disable-slash-commands"], "tools"),
]


# The releases before the newest take one flag of each field.
NEWEST_ONLY = ("--append-system-prompt", "--disallowedTools", "--disable-slash-commands")


@pytest.mark.parametrize(
    ("words", "field"),
    [
        pytest.param(
            words,
            field,
            id=words[0].lstrip("-"),
            marks=[pytest.mark.newest_only] if words[0] in NEWEST_ONLY else [],
        )
        for words, field in FORWARDED_CASES
    ],
)
def test_forwarded_flag_changes_the_request_as_in_claude_p(
    real_claude: str, sandbox: Sandbox, fake_api: FakeApiServer, words: List[str], field: str
) -> None:
    ours_marker, theirs_marker = f"ours {words[0]}", f"theirs {words[0]}"
    a, b = (
        json.loads(run(sandbox, real_claude, [*words, "--", marker]).stdout)
        for run, marker in ((claude_print_ok, ours_marker), (claude_p_ok, theirs_marker))
    )
    assert a["result"].startswith("ACK") and b["result"].startswith("ACK")
    ours, theirs = requests_of(fake_api, ours_marker)[0], requests_of(fake_api, theirs_marker)[0]
    if field == "system":
        # The TUI's system prompt has interactive-only parts; the flag's text must be in both.
        text = words[1]
        seen = [
            text in r["system"] + r["tool_text"] + "".join(r["user_texts"]) for r in (ours, theirs)
        ]
        assert seen == [True, True], "the flag's text reached the model (ours, claude -p's)"
    elif field == "tools":
        # Tools only a person at the TUI can answer; claude -p has none of them (measured).
        assert set(ours["tools"]) - TUI_ONLY_TOOLS == set(theirs["tools"]) - TUI_ONLY_TOOLS
        assert set(theirs["tools"]) & TUI_ONLY_TOOLS == set()
    else:
        assert ours[field] == theirs[field]


def claude_print_ok(sandbox: Sandbox, binary: str, args: List[str]) -> Any:
    proc = run_claude_print(sandbox, ["--output-format", "json", *args], binary=binary)
    assert_exit(proc, 0)
    return proc


def claude_p_ok(sandbox: Sandbox, binary: str, args: List[str], live: bool = False) -> Any:
    proc = run_claude_p(sandbox, binary, ["--output-format", "json", *args], live=live)
    assert_exit(proc, 0)
    return proc


@pytest.mark.matrix
def test_user_settings_hooks_fire_and_the_run_finishes(real_claude: str, sandbox: Sandbox) -> None:
    """--settings is merged into claude-print's own document: the user's hooks run, and so
    do claude-print's (the run ends), though the TUI reads only one --settings."""
    marks = sandbox.tmp / "marks"
    hook = f"echo $0 >> {marks}"
    settings = {
        "hooks": {
            event: [{"hooks": [{"type": "command", "command": f"sh -c '{hook}' {event}"}]}]
            for event in ("UserPromptSubmit", "Stop")
        }
    }
    a, b = run_json_pair(sandbox, real_claude, ["--settings", json.dumps(settings), "hi"], 0)
    assert a["result"] == b["result"]
    assert marks.read_text().split() == ["UserPromptSubmit", "Stop"] * 2  # ours, then claude -p
    assert_clean(sandbox)


@pytest.mark.matrix
def test_continue_picks_up_a_claude_p_session(
    real_claude: str, sandbox: Sandbox, fake_api: FakeApiServer
) -> None:
    """The TUI's own --continue skips sessions `claude -p` wrote (measured); claude-print
    continues the newest one by id, as `claude -p --continue` does."""
    # live: claude-print continues the transcript this run leaves (recorded_claude_p)
    first = claude_p_ok(sandbox, real_claude, ["remember the first turn"], live=True)
    session = json.loads(first.stdout)["session_id"]
    proc = claude_print_ok(sandbox, real_claude, ["--continue", "the second turn"])
    out = json.loads(proc.stdout)
    assert out["session_id"] == session
    request = requests_of(fake_api, "the second turn")[0]
    assert any("remember the first turn" in t for t in request["user_texts"]), request


def test_forwarded_betas_reach_the_request_header(
    real_claude: str, sandbox: Sandbox, fake_api: FakeApiServer
) -> None:
    beta = "context-1m-2025-08-07"  # the one beta an API key may ask for (measured)
    claude_print_ok(sandbox, real_claude, ["--betas", beta, "--", "ours betas"])
    claude_p_ok(sandbox, real_claude, ["--betas", beta, "--", "theirs betas"])
    for marker in ("ours betas", "theirs betas"):
        assert beta in requests_of(fake_api, marker)[0]["betas"], marker


def test_forwarded_name_and_debug_file_do_what_they_do_in_claude_p(
    real_claude: str, sandbox: Sandbox
) -> None:
    """--name titles the session (a record in its transcript); --debug-file writes the log."""
    outcomes = []
    for who, run in (("ours", claude_print_ok), ("theirs", claude_p_ok)):
        log = sandbox.tmp / f"{who}-debug.txt"
        proc = run(sandbox, real_claude, ["--name", f"{who}-x7", "--debug-file", str(log), "hi"])
        session = json.loads(proc.stdout)["session_id"]
        [path] = [p for p in sandbox.transcripts() if p.stem == session]
        titled = any(
            f"{who}-x7" in line and "title" in line for line in path.read_text().splitlines()
        )
        outcomes.append((titled, log.stat().st_size > 0))
    assert outcomes == [(True, True), (True, True)]


@pytest.mark.parametrize("uuid_given", [False, True], ids=["fresh", "caller-uuid"])
def test_replay_user_messages_like_claude_p(
    real_claude: str, sandbox: Sandbox, uuid_given: bool
) -> None:
    """--replay-user-messages echoes each stream-json user message after its turn's init."""
    messages: List[Dict[str, Any]] = [
        {"type": "user", "message": {"role": "user", "content": "first turn"}},
        {
            "type": "user",
            "message": {"role": "user", "content": [{"type": "text", "text": "second turn"}]},
            "parent_tool_use_id": None,
            "session_id": "",
        },
    ]
    if uuid_given:
        messages[0]["uuid"] = "11111111-2222-4333-8444-555555555555"
    stdin = "".join(json.dumps(m) + "\n" for m in messages).encode()
    args = ["--output-format", "stream-json", "--input-format", "stream-json"]
    ours = run_claude_print(
        sandbox, [*args, "--replay-user-messages"], binary=real_claude, stdin=stdin
    )
    theirs = run_claude_p(
        sandbox, real_claude, [*args, "--verbose", "--replay-user-messages"], stdin=stdin
    )
    assert_exit(ours, 0)
    assert_exit(theirs, 0)
    views = []
    for proc in (ours, theirs):
        events = [json.loads(line) for line in proc.stdout.decode().splitlines()]
        events = [e for e in events if e["type"] in ("system", "user", "assistant", "result")]
        replays = [e for e in events if e.get("isReplay")]
        assert [list(e) for e in replays] == [
            ["type", "message", "session_id", "parent_tool_use_id", "uuid", "timestamp", "isReplay"]
        ] * 2
        assert {e["session_id"] for e in replays} == {events[-1]["session_id"]}
        if uuid_given:
            assert replays[0]["uuid"] == messages[0]["uuid"]
        views.append(
            [
                (e["type"], e.get("subtype"), e["message"] if e.get("isReplay") else None)
                for e in events
            ]
        )
    assert views[0] == views[1]
    assert views[0][1] == ("user", None, messages[0]["message"]), "right after init"
    assert_clean(sandbox)
