"""End to end: stream-json hook events (`--include-hook-events`, and SessionStart's
always) from the real TUI, compared with `claude -p` on the same fake API."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Tuple

import pytest
from checks import assert_clean, assert_exit, assert_interactive
from harness import Sandbox, run_claude_p, run_claude_print

pytestmark = pytest.mark.e2e

# One hook per kind of outcome: output on both streams, silence, a blocking exit 2, a
# failing Stop hook, two hooks of one event (they run in parallel).
HOOKS = {
    "SessionStart": [{"hooks": [{"type": "command", "command": "echo ss-out"}]}],
    "UserPromptSubmit": [
        {
            "hooks": [
                {"type": "command", "command": "echo ups-out; echo ups-err >&2"},
                {"type": "command", "command": "true"},
            ]
        }
    ],
    "PreToolUse": [{"matcher": "B.*", "hooks": [{"type": "command", "command": "echo pre"}]}],
    "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "echo post"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "echo stop-bad >&2; exit 1"}]}],
}
PROMPT = "Run it [[tool:Bash:echo hi]]"
# What a script reads of a hook event; ids and uuids are fresh in each run.
FIELDS = ("subtype", "hook_name", "hook_event", "stdout", "stderr", "output", "exit_code")


def stream(proc: Any) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in proc.stdout.decode().splitlines() if line.strip()]


def hook_view(events: List[Dict[str, Any]]) -> List[Any]:
    """The stream as a script sees it: each event's kind, and the hook events of each run
    of one hook event (hooks of one event run at once: their order is not fixed) as a
    sorted group of their fields."""
    view: List[Any] = []
    for event in events:
        if event.get("subtype") in ("hook_started", "hook_response"):
            fields = tuple(str(event.get(field, "-")) for field in FIELDS)
            if event.get("output") == event.get("stderr", "") + event.get("stdout", ""):
                # claude -p reads the two pipes as they come: when a hook writes both,
                # either may come first (seen on 2.1.270 for "echo out; echo err >&2").
                fields = (*fields[:5], fields[3] + fields[4], *fields[6:])
            if view and isinstance(view[-1], list) and view[-1][0][2] == fields[2]:
                view[-1] = sorted([*view[-1], fields])
            else:
                view.append([fields])
        elif event["type"] in ("assistant", "user", "result") or event.get("subtype") == "init":
            view.append((event["type"], event.get("subtype")))
    return view


def views(ours: List[Dict[str, Any]], theirs: List[Dict[str, Any]]) -> str:
    """Both streams as `hook_view` sees them, whole, for a failure's message."""
    lines = ["ours:", *map(str, hook_view(ours)), "claude -p:", *map(str, hook_view(theirs))]
    return "\n".join(lines)


def run_pair(sandbox: Sandbox, binary: str, args: List[str]) -> Tuple[Any, Any]:
    ours = run_claude_print(sandbox, ["--output-format", "stream-json", *args], binary=binary)
    theirs = run_claude_p(sandbox, binary, ["--output-format", "stream-json", "--verbose", *args])
    assert_exit(ours, 0)
    assert_exit(theirs, 0)
    return stream(ours), stream(theirs)


def same_keys(ours: List[Dict[str, Any]], theirs: List[Dict[str, Any]]) -> None:
    for subtype in ("hook_started", "hook_response"):
        mine = [list(e) for e in ours if e.get("subtype") == subtype]
        other = [list(e) for e in theirs if e.get("subtype") == subtype]
        assert mine and mine[0] == other[0], subtype  # keys and their order
        assert all(keys == mine[0] for keys in mine), subtype


@pytest.mark.matrix
def test_include_hook_events_like_claude_p(real_claude: str, sandbox: Sandbox) -> None:
    settings = json.dumps({"hooks": HOOKS})
    args = ["--include-hook-events", "--settings", settings, "--allowedTools", "Bash", "--", PROMPT]
    ours, theirs = run_pair(sandbox, real_claude, args)
    assert hook_view(ours) == hook_view(theirs), views(ours, theirs)
    same_keys(ours, theirs)
    for events in (ours, theirs):  # each response names the run its start announced
        started = [e["hook_id"] for e in events if e.get("subtype") == "hook_started"]
        ended = [e["hook_id"] for e in events if e.get("subtype") == "hook_response"]
        assert sorted(started) == sorted(ended) and len(set(started)) == len(started) == 6
    session = ours[-1]["session_id"]
    assert {e["session_id"] for e in ours} == {session}
    assert_interactive(sandbox, session)
    assert_clean(sandbox)


def test_without_the_flag_only_session_start_hooks_show(real_claude: str, sandbox: Sandbox) -> None:
    settings = json.dumps({"hooks": HOOKS})
    ours, theirs = run_pair(sandbox, real_claude, ["--settings", settings, "hi"])
    assert hook_view(ours) == hook_view(theirs)
    assert {e.get("hook_event") for e in ours} == {None, "SessionStart"}
    assert_clean(sandbox)


def test_hooks_of_a_settings_file_come_from_the_transcript(
    real_claude: str, sandbox: Sandbox
) -> None:
    """Hooks claude-print does not pass are read back from the transcript: runs that
    printed something show as in claude -p; a silent hook's run does not show."""
    hooks = {
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "echo file-hook"}]},
            {"hooks": [{"type": "command", "command": "true"}]},
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "echo stop-bad >&2; exit 1"}]}],
    }
    config = sandbox.project / ".claude"
    config.mkdir(exist_ok=True)
    (config / "settings.json").write_text(json.dumps({"hooks": hooks}))
    ours, theirs = run_pair(sandbox, real_claude, ["--include-hook-events", "hi"])
    theirs_runs, ours_runs = (runs_of(hook_view(events)) for events in (theirs, ours))
    # The silent hook leaves no record in the transcript: its start and end are not in ours.
    silent = ("hook_response", "UserPromptSubmit", "UserPromptSubmit", "", "", "", "0")
    expected = list(theirs_runs)
    expected.remove(silent)
    expected.remove(("hook_started", "UserPromptSubmit", "UserPromptSubmit", *"----"))
    assert sorted(ours_runs) == sorted(expected)
    assert kinds(hook_view(ours)) == kinds(hook_view(theirs))
    assert_clean(sandbox)


def runs_of(view: List[Any]) -> List[Any]:
    return [run for group in view if isinstance(group, list) for run in group]


def kinds(view: List[Any]) -> List[Any]:
    return [item for item in view if not isinstance(item, list)]
