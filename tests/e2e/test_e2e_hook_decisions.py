"""End to end: a user's hook of every event claude-print also uses, with every decision
it can return, behaves as under `claude -p` (exit code, subtype, num_turns, result,
permission denials, and whether the hook's context reached the model). Each hook comes
from a settings file or from --settings and goes in by stdin or argv (alternately over
the cases); both sides run at once, each on its own fake API."""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any, Dict, List, NamedTuple

import pytest
from checks import assert_clean, assert_exit
from fake_api import FakeApiServer
from harness import SUPPORT, Sandbox, claude_release, run_pair

pytestmark = pytest.mark.e2e

HOOK = str(SUPPORT / "hook_decision.py")
TOOL_PROMPT = "zebra [[tool:Bash:echo zebra-ran]]"
PLAIN_PROMPT = "hello zebra"


class Case(NamedTuple):
    event: str
    decision: str
    prompt: str


CASES = [
    Case("Stop", "block-once", PLAIN_PROMPT),
    Case("Stop", "exit2-once", PLAIN_PROMPT),
    Case("Stop", "continue-false", PLAIN_PROMPT),
    Case("StopFailure", "block", "[[error:400]]"),
    Case("PreToolUse", "allow", TOOL_PROMPT),
    Case("PreToolUse", "deny", TOOL_PROMPT),
    Case("PreToolUse", "ask", TOOL_PROMPT),
    Case("PreToolUse", "continue-false", TOOL_PROMPT),
    Case("PermissionRequest", "allow", TOOL_PROMPT),
    Case("PermissionRequest", "deny", TOOL_PROMPT),
    Case("UserPromptSubmit", "block", PLAIN_PROMPT),
    Case("UserPromptSubmit", "context", PLAIN_PROMPT),
    Case("UserPromptSubmit", "continue-false", PLAIN_PROMPT),
    Case("SessionStart", "context", PLAIN_PROMPT),
]
SOURCES = ["settings-file", "--settings"]
TOOL_EVENTS = ("PreToolUse", "PermissionRequest")


# The releases before the newest take a sample: every event, each way in and each
# source, the decisions that stop something (block, deny, ask, continue false), and the
# documented PreToolUse deny difference.
SAMPLE = {
    ("Stop", "block-once"),
    ("Stop", "continue-false"),
    ("StopFailure", "block"),
    ("PreToolUse", "deny"),
    ("PreToolUse", "ask"),
    ("PermissionRequest", "deny"),
    ("UserPromptSubmit", "block"),
    ("SessionStart", "context"),
}

BETWEEN = ("PreToolUse", "deny")  # the release between: the documented deny difference
# The oldest release: the decisions that stop something, and the documented deny difference.
CORE = {("Stop", "block-once"), ("StopFailure", "block"), BETWEEN, ("UserPromptSubmit", "block")}


def params() -> List[Any]:
    """Each case once, the ways in and the sources alternating over the cases (so each
    event meets both of each, over its decisions)."""
    out = []
    for n, case in enumerate(CASES):
        via = ("stdin", "argv")[n % 2]
        source = SOURCES[(n // 2) % 2]
        marks = [] if case[:2] in SAMPLE else [pytest.mark.newest_only]
        if case[:2] in CORE:
            marks.append(pytest.mark.matrix)
        if case[:2] == BETWEEN:
            marks.append(pytest.mark.between)
        name = f"{case.event}-{case.decision}-{via}"
        out.append(pytest.param(case, via, source, id=name, marks=marks))
    return out


def hook_settings(case: Case) -> Dict[str, Any]:
    command = " ".join(shlex.quote(w) for w in (sys.executable, HOOK, case.event, case.decision))
    entry: Dict[str, Any] = {"hooks": [{"type": "command", "command": command}]}
    if case.event in TOOL_EVENTS:
        entry["matcher"] = "*"
    return {"hooks": {case.event: [entry]}}


def summary(stdout: bytes, requests: List[Dict[str, Any]]) -> Dict[str, Any]:
    out = json.loads(stdout)
    return {
        "subtype": out.get("subtype"),
        "is_error": out.get("is_error"),
        "num_turns": out.get("num_turns"),
        "result": out.get("result"),
        "denied": [d["tool_name"] for d in out.get("permission_denials", [])],
        "context_seen": any("ZEBRA CONTEXT" in t for r in requests for t in r["user_texts"]),
        "requests": len(requests),
    }


@pytest.mark.parametrize(("case", "via", "source"), params())  # per-release rules
def test_a_user_hook_decides_as_under_claude_p(
    sandbox: Sandbox,
    fake_api: FakeApiServer,
    oracle_api: FakeApiServer,
    real_claude: str,
    case: Case,
    via: str,
    source: str,
) -> None:
    settings = hook_settings(case)
    words = ["--output-format", "json"]
    if source == "--settings":
        words += ["--settings", json.dumps(settings)]
    else:
        (sandbox.project / ".claude").mkdir()
        (sandbox.project / ".claude" / "settings.json").write_text(json.dumps(settings))
    marks = sandbox.tmp / "marks"
    marks.mkdir()
    stdin = case.prompt.encode() if via == "stdin" else None
    prompt = [] if via == "stdin" else ["--", case.prompt]
    pair = run_pair(
        sandbox,
        real_claude,
        fake_api,
        oracle_api,
        words + prompt,
        words + prompt,
        stdin=stdin,
        env={"HOOK_MARKS": str(marks)},
        twin=True,
    )
    assert_exit(pair.ours, pair.theirs.returncode)
    pair.assert_same_side_effects()
    mine = summary(pair.ours.stdout, pair.our_requests)
    theirs = summary(pair.theirs.stdout, pair.their_requests)
    release = claude_release(real_claude)
    if case[:2] == ("PreToolUse", "deny") and release < "2.1.331":
        # Documented difference (docs/compatibility.md): before the transcript records a
        # hook's refusal (permissionDecision, seen on 2.1.331), a denied tool's result is
        # only the hook's reason, like any failed tool: not counted as a denial.
        assert (mine.pop("denied"), theirs.pop("denied")) == ([], ["Bash"])
    assert mine == theirs, f"Claude Code {release}"
    assert_clean(sandbox)
