"""End to end with the real Claude Agent SDK: claude-print as `cli_path`.

Each case runs tests/support/sdk_cases.py (the same program that recorded what the SDK sees with
the real Claude Code CLI, tests/data/sdk/<release>/<case>.json, scripts/capture-sdk-protocol)
against claude-print driving the real TUI of that release and tests/support/fake_api.py, and
compares a normalised view of the two summaries: per message the class, subtype, texts,
tool uses and results, the result fields; and the facts of the case (files, callback and
hook inputs, exceptions). Timings, session id values and uuids are not compared; the raw
keys of each message are compared as "claude-print's are a superset of the real CLI's".

After each case: one TUI was spawned (counted by a wrapper around the Claude Code binary),
every transcript says "entrypoint": "cli", and nothing is left behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any, Dict, Iterator, List, Set, Tuple

import pytest
from fake_api import FakeApiServer
from harness import ROOT, SUPPORT, Sandbox, claude_release, entrypoints
from sdk_harness import (
    KEYS_EXTRA,
    KEYS_MAY_MISS,
    NOT_REPORTED,
    Harness,
    case_summary,
    result_content,
    tail,
)

pytestmark = pytest.mark.e2e

DATA = ROOT / "tests" / "data" / "sdk"
SDK_CASES = SUPPORT / "sdk_cases.py"
CASE_TIMEOUT = 60  # sdk_cases.py --timeout: the case itself
# The SDK's close() may then wait 5 s for the CLI, SIGTERM it, wait 5 s more, SIGKILL.
PROCESS_TIMEOUT = CASE_TIMEOUT + 30

# --- documented differences (the whitelist) -----------------------------------------

# Keys of the initialize answer (get_server_info()) claude-print may leave out: none.
SERVER_INFO_MAY_MISS: Set[str] = set()

# control_misc: control requests claude-print answers with an error naming the subtype
# (README, "Using it from the Claude Agent SDK": the TUI fixes these at start, or does not
# report them to claude-print), where the real CLI honours them. Case name -> the request's
# subtype, which the error must name.
MAY_REFUSE: Dict[str, str] = {
    "get_context_usage": "get_context_usage",
    "set_model": "set_model",
    "set_model_default": "set_model",
}

# --- the cases --------------------------------------------------------------------------

# The oldest release takes the core (`matrix`: a plain query, a background command, a
# subagent), the release between the background command (`between`); the newest also
# each way the program reaches into the TUI (a permission answer that rewrites the input,
# a denial, a hook callback, an interrupt, a mode switch, several turns, an SDK MCP
# tool). The rest drives the same paths of the TUI; the real CLI's summaries of those
# cases are the same on every release recorded.
NEWEST_ONLY = pytest.mark.newest_only
CASES = [
    pytest.param("plain", marks=pytest.mark.matrix),
    pytest.param("background_command", marks=[pytest.mark.matrix, pytest.mark.between]),
    pytest.param("subagent", marks=pytest.mark.matrix),
    pytest.param("tool_allowed", marks=NEWEST_ONLY),
    "tool_allowed_updated_input",
    "tool_denied",
    pytest.param("hook_pretooluse", marks=NEWEST_ONLY),
    pytest.param("hook_pretooluse_allow", marks=NEWEST_ONLY),
    "hook_pretooluse_deny",
    "client_three_turns",
    pytest.param("api_error", marks=NEWEST_ONLY),
    pytest.param("max_turns_1", marks=NEWEST_ONLY),
    "interrupt",
    pytest.param("eof_mid_turn", marks=NEWEST_ONLY),
    pytest.param("control_misc", marks=NEWEST_ONLY),
    pytest.param("old_sdk_plain", marks=NEWEST_ONLY),
    "sdk_mcp_tool",
    pytest.param("sdk_mcp_tool_error", marks=NEWEST_ONLY),
    "set_permission_mode",
]


@pytest.fixture
def reap(sandbox: Sandbox) -> Iterator[None]:
    """After the test (passed or not): kill what the test left running in its sandbox,
    so one failure does not leak TUIs into the rest of the suite."""
    yield
    for entry in sandbox.leftovers():
        if entry.startswith("pid "):
            pid = int(entry.split()[1])
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def stored_summary(release: str, case: str) -> Dict[str, Any]:
    path = DATA / release / f"{case}.json"
    if not path.exists():
        pytest.skip(
            f"no summary of the real CLI stored for Claude Code {release or '?'} "
            f"({path.relative_to(ROOT)} is missing; record it with "
            f"scripts/capture-sdk-protocol {release or 'RELEASE'} {case})"
        )
    summary: Dict[str, Any] = json.loads(path.read_text())["summary"]
    return summary


def run_case(harness: Harness, case: str, **env: str) -> Tuple[Dict[str, Any], str]:
    """sdk_cases.py CASE against claude-print: its summary (sandbox paths as `$SANDBOX`,
    as in the stored ones) and stderr (claude-print's traces)."""
    sandbox = harness.sandbox
    argv = [
        sys.executable,
        str(SDK_CASES),
        "--cli-path",
        str(harness.cli_path),
        "--case",
        case,
        "--workdir",
        str(sandbox.project),
        "--timeout",
        str(CASE_TIMEOUT),
    ]
    try:
        proc = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            cwd=sandbox.project,
            env=harness.env(**env),
            timeout=PROCESS_TIMEOUT,
        )
    except subprocess.TimeoutExpired as exc:
        err = (exc.stderr or b"").decode("utf-8", "replace")
        pytest.fail(f"sdk_cases.py {case} still running after {PROCESS_TIMEOUT} s\n{err}")
    root = sandbox.home.parent
    return case_summary(
        proc, "sdk_cases.py", {spelled: "$SANDBOX" for spelled in {str(root.resolve()), str(root)}}
    )


# --- the normalised view ------------------------------------------------------------------

RESULT_FIELDS = (
    "subtype",
    "is_error",
    "result",
    "num_turns",
    "errors",
    "terminal_reason",
    "stop_reason",
    "api_error_status",
    "permission_denials",
)


def message_view(message: Dict[str, Any]) -> Dict[str, Any]:
    cls = message["class"]
    view: Dict[str, Any] = {"class": cls, "type": message.get("type")}
    if cls == "ResultMessage":
        for name in RESULT_FIELDS:
            view[name] = message.get(name)
        view["permission_denials"] = [
            {k: v for k, v in d.items() if k != "tool_use_id"}
            for d in view["permission_denials"] or []
        ]
        return view
    view["subtype"] = message.get("subtype")
    if cls == "AssistantMessage":
        view["text"] = message.get("text")
        view["tool_uses"] = message.get("tool_uses")
        view["error"] = message.get("error")
    elif cls == "UserMessage":
        view["text"] = message.get("text")
        view["tool_results"] = [
            {**r, "content": result_content(r.get("content"))}
            for r in message.get("tool_results") or []
        ] or message.get("tool_results")
    return view


def session_ids(summary: Dict[str, Any]) -> List[str]:
    return [str(m["session_id"]) for m in summary["messages"] if m.get("session_id")]


def case_view(summary: Dict[str, Any]) -> Dict[str, Any]:
    """Everything compared, from one summary (ours or the stored real one)."""
    messages = [m for m in summary.get("messages", []) if m.get("subtype") not in NOT_REPORTED]
    view: Dict[str, Any] = {
        "messages": [message_view(m) for m in messages],
        "skipped": [(s.get("type"), s.get("subtype")) for s in summary.get("skipped", [])],
        # one session for every message of the case (init and results), whatever its id
        "one_session_id": len(set(session_ids(summary))) == 1,
    }
    for name in (
        "exception",
        "message",
        "exception_data",
        "exit_code",
        "file_exists",
        "result_texts",
        "session_ids_equal",
    ):
        if name in summary:
            view[name] = summary[name]
    if "can_use_tool_calls" in summary:
        # Known difference: the PermissionRequest hook's payload has the addDirectories
        # and setMode suggestions but not the addRules one, which the CLI computes for its
        # permission dialog: claude-print passes on what it gets (2 of the CLI's 3).
        view["can_use_tool_calls"] = [
            {k: v for k, v in call.items() if k != "suggestions"}
            for call in summary["can_use_tool_calls"]
        ]
    if "hook_inputs" in summary:  # their keys: compared as a superset (check_keys)
        view["hook_inputs"] = [
            {k: v for k, v in hook.items() if k != "keys"} for hook in summary["hook_inputs"]
        ]
    return view


def diff(path: str, real: Any, ours: Any, out: List[str]) -> None:
    """Every leaf where `ours` differs from `real`, as 'path: real=... claude-print=...'."""
    if isinstance(real, dict) and isinstance(ours, dict):
        for key in list(real) + [k for k in ours if k not in real]:
            if key not in ours:
                out.append(f"{path}.{key}: real={real[key]!r} claude-print=<missing>")
            elif key not in real:
                out.append(f"{path}.{key}: real=<missing> claude-print={ours[key]!r}")
            else:
                diff(f"{path}.{key}", real[key], ours[key], out)
    elif isinstance(real, list) and isinstance(ours, list) and len(real) == len(ours):
        for i, (a, b) in enumerate(zip(real, ours)):
            diff(f"{path}[{i}]", a, b, out)
    elif isinstance(real, list) and isinstance(ours, list) and path.endswith("messages"):
        out.append(
            f"{path}: {len(real)} message(s) real, {len(ours)} claude-print:\n"
            + "\n".join(f"    real        {json.dumps(m)}" for m in real)
            + "\n"
            + "\n".join(f"    claude-print {json.dumps(m)}" for m in ours)
        )
    elif real != ours:
        out.append(f"{path}: real={real!r} claude-print={ours!r}")


def key_problems(real: Dict[str, Any], ours: Dict[str, Any]) -> List[str]:
    """Raw keys: ours must be a superset of the real CLI's (minus KEYS_MAY_MISS), with no
    extras but KEYS_EXTRA; likewise hook inputs and the initialize answer."""
    problems = []
    reported = [
        [m for m in summary.get("messages", []) if m.get("subtype") not in NOT_REPORTED]
        for summary in (real, ours)
    ]
    for i, (a, b) in enumerate(zip(*reported)):
        if a["class"] != b["class"] or "keys" not in a:
            continue  # a different message: the view's diff says so
        kind = str(a.get("type"))
        missing = set(a["keys"]) - set(b.get("keys", [])) - KEYS_MAY_MISS.get(kind, set())
        extra = set(b.get("keys", [])) - set(a["keys"]) - KEYS_EXTRA.get(kind, set())
        if missing:
            problems.append(f"messages[{i}] ({kind}) lacks the real CLI's keys {sorted(missing)}")
        if extra:
            problems.append(f"messages[{i}] ({kind}) has keys the real CLI has not {sorted(extra)}")
    for i, (a, b) in enumerate(zip(real.get("hook_inputs", []), ours.get("hook_inputs", []))):
        missing = set(a["keys"]) - set(b["keys"])
        if missing:
            problems.append(f"hook_inputs[{i}] lacks the real CLI's keys {sorted(missing)}")
    if "server_info_keys" in real:
        missing = set(real["server_info_keys"] or []) - set(ours.get("server_info_keys") or [])
        missing -= SERVER_INFO_MAY_MISS
        if missing:
            problems.append(f"get_server_info() lacks the real CLI's keys {sorted(missing)}")
    return problems


# --- per-case adjustments (each one a documented difference) --------------------------


def control_answer_problems(
    real: Dict[str, Any], ours: Dict[str, Any]
) -> Tuple[List[str], Set[str]]:
    """control_misc: each answer as the real CLI's, or (MAY_REFUSE) an error naming the
    request's subtype, never a timeout. Returns the problems and the refused names."""
    problems: List[str] = []
    refused: Set[str] = set()
    theirs_all = real.get("control_answers", {})
    ours_all = ours.get("control_answers", {})
    for name, theirs in theirs_all.items():
        mine = ours_all.get(name)
        if mine is None:
            problems.append(f"control_answers.{name}: real={theirs!r} claude-print=<missing>")
            continue
        if mine.get("exception") == "TimeoutError":
            problems.append(f"control_answers.{name}: no answer (timeout): {mine!r}")
            continue
        if mine == theirs:
            continue
        if name in MAY_REFUSE and not mine.get("ok"):
            subtype = MAY_REFUSE[name]
            if mine.get("exception") != "Exception" or subtype not in str(mine.get("message")):
                problems.append(
                    f"control_answers.{name}: an error naming {subtype!r} expected, "
                    f"claude-print={mine!r}"
                )
            refused.add(name)
            continue
        problems.append(f"control_answers.{name}: real={theirs!r} claude-print={mine!r}")
    return problems, refused


def without_refused_effects(real: Dict[str, Any], refused: Set[str]) -> Dict[str, Any]:
    """The real summary without the messages the real CLI printed because it honoured a
    request claude-print refuses: set_permission_mode's system/status line, set_model's
    replayed "<local-command-stdout>Set model to ..." user lines."""

    def caused_by_refused(message: Dict[str, Any]) -> bool:
        if message["class"] == "SystemMessage" and message.get("subtype") == "status":
            return "set_permission_mode" in refused
        if message["class"] == "UserMessage" and str(message.get("text")).startswith(
            "<local-command-stdout>Set model to"
        ):
            return bool({"set_model", "set_model_default"} & refused)
        return False

    return {**real, "messages": [m for m in real["messages"] if not caused_by_refused(m)]}


def is_subagents(message: Dict[str, Any]) -> bool:
    """A subagent's own message (the summary keeps keys, not the parent_tool_use_id)."""
    return "task_description" in message.get("keys", [])


def subagent_order_problems(summary: Dict[str, Any], who: str) -> List[str]:
    """The order both sides keep: a subagent's messages after its task_started and
    before its task_notification (one subagent a case)."""
    kinds = [m.get("subtype") or ("sub" if is_subagents(m) else "") for m in summary["messages"]]
    subs = [i for i, kind in enumerate(kinds) if kind == "sub"]
    if not subs or "task_started" not in kinds or "task_notification" not in kinds:
        return [f"{who}: no subagent message, task_started or task_notification: {kinds}"]
    if not kinds.index("task_started") < subs[0] <= subs[-1] < kinds.index("task_notification"):
        return [f"{who}: a subagent's message outside its task: {kinds}"]
    return []


# Known differences (docs/compatibility.md, "Background work") in where events fall
# among the turn's own messages, which the subagent case's view puts in one place:
# - claude -p prints a background subagent's messages as the subagent makes them, and its
#   task_notification when it ends: among the main turn's messages, where a race puts
#   them (the fake subagent answers in ~0.1 s). claude-print prints the messages as the
#   TUI writes them and the notification when the TUI starts the turn it brings. The
#   view puts the notification just before the init line of that turn, the subagent's
#   messages just before the notification (their order is checked on each side:
#   subagent_order_problems). A foreground subagent (2.1.197) is compared as printed.
# - on these releases claude -p holds a turn's result back while a subagent runs and
#   prints the results together at the end; claude-print prints each at its turn's end.
#   The view puts the results last.
RESULTS_HELD = ("2.1.332",)


def in_subagent_order(summary: Dict[str, Any], release: str) -> Dict[str, Any]:
    messages = [m for m in summary["messages"] if m.get("subtype") not in NOT_REPORTED]
    subs = [m for m in messages if is_subagents(m)]
    rest = [m for m in messages if not is_subagents(m)]
    notification = next((m for m in rest if m.get("subtype") == "task_notification"), None)
    later = [i for i, m in enumerate(rest) if m is not notification and m.get("subtype") == "init"]
    if notification is None or len(later) < 2:
        # A foreground subagent's (no turn of its own): in place on both sides; none at
        # all: subagent_order_problems says so.
        return {**summary, "messages": messages}
    rest.remove(notification)
    later = [i for i, m in enumerate(rest) if m.get("subtype") == "init"][1:]
    ordered = rest[: later[0]] + subs + [notification] + rest[later[0] :]
    if release in RESULTS_HELD:
        results = [m for m in ordered if m["class"] == "ResultMessage"]
        ordered = [m for m in ordered if m["class"] != "ResultMessage"] + results
    return {**summary, "messages": ordered}


# --- after every case -------------------------------------------------------------------


def assert_interactive_and_clean(sandbox: Sandbox, ours: Dict[str, Any], trace: str) -> None:
    transcripts = sandbox.transcripts()
    assert transcripts, f"no transcript in the sandbox\n{trace}"
    found = {p.name: sorted(set(entrypoints(p))) for p in transcripts}
    assert all(v == ["cli"] for v in found.values()), f"entrypoints: {found}"
    stems = {p.stem for p in transcripts}
    ids = set(session_ids(ours))
    assert ids <= stems, f"session ids {sorted(ids)} without a transcript; transcripts {stems}"
    leftovers = sandbox.leftovers()
    assert leftovers == [], f"left behind: {leftovers}\n{trace}"


# --- the tests ----------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_sdk_case_matches_real_cli(
    real_claude: str, sandbox: Sandbox, reap: None, case: str
) -> None:
    real = stored_summary(claude_release(real_claude), case)
    harness = Harness(sandbox, real_claude)
    ours, stderr = run_case(harness, case)
    trace = f"claude-print's stderr (CLAUDE_PRINT_TRACE=1):\n{tail(stderr)}"

    problems: List[str] = []
    if case == "control_misc":
        answer_problems, refused = control_answer_problems(real, ours)
        problems += answer_problems
        real = without_refused_effects(real, refused)
    if case == "subagent":
        problems += subagent_order_problems(real, "real") + subagent_order_problems(ours, "ours")
        release = claude_release(real_claude)
        real, ours = in_subagent_order(real, release), in_subagent_order(ours, release)
    diff("summary", case_view(real), case_view(ours), problems)
    problems += key_problems(real, ours)
    if "exception" in ours and "exception" not in real:
        problems.append(f"the case raised {ours['exception']}: {ours.get('message')}")
    assert not problems, "\n".join(problems) + "\n\n" + trace

    spawns = harness.spawns()
    assert len(spawns) == 1, f"{len(spawns)} TUI(s) spawned, expected one: {spawns}\n{trace}"
    if case == "client_three_turns":
        results = [m for m in ours["messages"] if m["class"] == "ResultMessage"]
        assert [r["result"] for r in results] == ["ONE", "TWO", "THREE"]
        assert len(set(session_ids(ours))) == 1, session_ids(ours)
    assert_interactive_and_clean(sandbox, ours, trace)


def test_sdk_entrypoint_does_not_reach_the_tui(
    real_claude: str, sandbox: Sandbox, reap: None
) -> None:
    """The SDK sets CLAUDE_CODE_ENTRYPOINT=sdk-py for its CLI (set here too, in case a
    program's environment has it): the TUI must not get it, or its session would not be
    an interactive one."""
    harness = Harness(sandbox, real_claude)
    ours, stderr = run_case(harness, "plain", CLAUDE_CODE_ENTRYPOINT="sdk-py")
    trace = f"claude-print's stderr:\n{tail(stderr)}"
    assert "exception" not in ours, f"{ours.get('exception')}: {ours.get('message')}\n{trace}"
    [spawn] = harness.spawns()
    assert not spawn.endswith("entrypoint=sdk-py"), f"the TUI got it: {spawn}"
    assert_interactive_and_clean(sandbox, ours, trace)


KILLED_PROGRAM = """
import asyncio, sys
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient

async def main():
    options = ClaudeAgentOptions(cli_path=sys.argv[1], cwd=sys.argv[2])
    async with ClaudeSDKClient(options=options) as client:
        await client.query(sys.argv[3])
        async for message in client.receive_response():
            print(type(message).__name__, flush=True)

asyncio.run(main())
"""

KILL_DEADLINE = 60.0  # from the SIGKILL until nothing is left


def test_sdk_killed_mid_turn_leaves_nothing(
    real_claude: str, sandbox: Sandbox, fake_api: FakeApiServer, reap: None
) -> None:
    """The SDK program dies (SIGKILL) while a turn waits for the API: claude-print sees
    its stdin close, stops the TUI and exits; no process or temp dir stays."""
    harness = Harness(sandbox, real_claude)
    # Unique per run: the fake API outlives the test, and the matrix runs it per release.
    marker = f"killed sdk {sandbox.home.parent.name} [[sleep:30]]"
    log = sandbox.home.parent / "killed-sdk.stderr"

    def trace() -> str:
        return "stderr of the SDK program and claude-print:\n" + tail(
            log.read_text("utf-8", "replace")
        )

    # stderr to a file, not a pipe: claude-print inherits it and may outlive the program.
    argv = [sys.executable, "-c", KILLED_PROGRAM, str(harness.cli_path), str(sandbox.project)]
    with log.open("wb") as stderr:
        program = subprocess.Popen(
            [*argv, marker],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            cwd=sandbox.project,
            env=harness.env(),
        )
    try:
        reached = fake_api.wait_for_prompt(marker, timeout=CASE_TIMEOUT)
        alive = program.poll() is None
    finally:
        program.kill()
        program.wait(timeout=30)
    assert reached, f"the turn never reached the API\n{trace()}"
    assert alive, f"the SDK program ended before it was killed\n{trace()}"
    killed = time.monotonic()
    leftovers = sandbox.leftovers()
    while leftovers and time.monotonic() - killed < KILL_DEADLINE:
        time.sleep(0.2)  # polling a deadline: there is no event to wait on
        leftovers = sandbox.leftovers()
    print(f"clean {time.monotonic() - killed:.1f} s after the SIGKILL")
    assert leftovers == [], (
        f"still there {KILL_DEADLINE:g} s after the SDK was killed: {leftovers}\n{trace()}"
    )
    assert len(harness.spawns()) == 1, harness.spawns()
    # Stopped during its first request, 2.1.197's TUI may have written no transcript, or
    # one with no record that carries an entrypoint yet (2.1.330 has the prompt's):
    # whatever is there must say cli, never the SDK's entrypoint.
    found = {p.name: sorted(set(entrypoints(p))) for p in sandbox.transcripts()}
    assert all(set(v) <= {"cli"} for v in found.values()), found
