"""End to end with a subscription login (OAuth) instead of an API key.

Real users are logged in with a subscription: CLAUDE_CODE_OAUTH_TOKEN (or a
credentials file) and no ANTHROPIC_API_KEY. Claude Code then sends
`Authorization: Bearer`, makes a start-up quota check in the TUI, asks no
API-key question, and turns a usage-limit 429 into "You've hit your ... limit".
Each case runs claude-print and `claude -p` on the same fake API with the same
login (`Sandbox.oauth`, fake_api.subscription_env) and compares what a script
would see: stdout, exit code, json fields and key sets.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any, Dict, List

import pytest
from checks import (
    assert_clean,
    assert_exit,
    assert_interactive,
    assert_same_shape,
    assert_text_like_claude_p,
    check_api_error_like_claude_p,
    check_tool_denied_like_claude_p,
)
from fake_api import FakeApiServer
from harness import Sandbox, claude_release, run_claude_p, run_claude_print

pytestmark = pytest.mark.e2e

# One reset time for every run of the module, so claude-print and `claude -p` print the
# same "resets ..." text; hours ahead, so 2.1.330's auto-continue never fires in a test.
RESET = (int(time.time()) // 3600 + 3) * 3600
LIMIT_PROMPT = f"Go on [[usage_limit:five_hour:{RESET}]]"


@pytest.fixture
def oauth_sandbox(sandbox: Sandbox) -> Sandbox:
    """A sandbox logged in with a subscription; the API key's approval is not even seeded,
    so an API-key question would block the TUI (and fail claude-print with exit 2)."""
    sandbox.oauth = True
    seed = json.loads((sandbox.home / ".claude.json").read_text())
    seed.pop("customApiKeyResponses", None)
    (sandbox.home / ".claude.json").write_text(json.dumps(seed))
    return sandbox


def session_hits(fake_api: FakeApiServer, start: int, session_id: str) -> List[Dict[str, Any]]:
    """The Messages API requests of one session since `start` (`len(fake_api.hits)`)."""
    return [h for h in fake_api.hits_since(start) if h["session"] == session_id]


def kinds(hits: List[Dict[str, Any]]) -> Dict[str, int]:
    return dict(Counter(h["kind"] for h in hits))


def assert_same_result_shape(ours: Dict[str, Any], theirs: Dict[str, Any]) -> None:
    """assert_same_shape, with a cost of 0 taken as the JS number it is. With a subscription
    (non-essential traffic on) the costs of an errored turn differ in value, not in kind:
    `claude -p` 2.1.197 charges its session-title request to it (a float) where
    claude-print reports 0, and 2.1.330's claude-print counts the TUI's title request
    (cost-state) where `claude -p` makes none."""

    def numbers(obj: Dict[str, Any]) -> Dict[str, Any]:
        return {**obj, "total_cost_usd": float(obj["total_cost_usd"])}

    assert_same_shape(numbers(ours), numbers(theirs))


def test_oauth_one_line_json_matches_claude_p(
    real_claude: str, oauth_sandbox: Sandbox, fake_api: FakeApiServer
) -> None:
    prompt = "What is 2+2?"
    start = len(fake_api.hits)
    ours = run_claude_print(oauth_sandbox, ["--output-format", "json", prompt], binary=real_claude)
    assert_exit(ours, 0)
    a = json.loads(ours.stdout)
    tui = session_hits(fake_api, start, a["session_id"])
    start = len(fake_api.hits)
    theirs = run_claude_p(oauth_sandbox, real_claude, ["--output-format", "json", prompt])
    assert_exit(theirs, 0)
    b = json.loads(theirs.stdout)
    print_mode = session_hits(fake_api, start, b["session_id"])

    assert a["result"] == b["result"] == "The answer is 4."
    assert a["num_turns"] == b["num_turns"]
    assert a["usage"]["input_tokens"] == b["usage"]["input_tokens"]
    assert a["usage"]["output_tokens"] == b["usage"]["output_tokens"]
    assert_same_shape(a, b)
    assert a["claude_version"] == claude_release(real_claude)
    assert_interactive(oauth_sandbox, a["session_id"])
    # The subscription login is what both used: a bearer token on every call, and the
    # TUI's start-up quota check (`claude -p` makes none).
    assert tui and print_mode
    assert {h["auth"] for h in tui + print_mode} == {"bearer"}
    assert kinds(tui).get("quota") == 1, kinds(tui)
    assert kinds(tui).get("turn") == 1, kinds(tui)
    assert "quota" not in kinds(print_mode), kinds(print_mode)
    assert kinds(print_mode).get("turn") == 1, kinds(print_mode)
    assert_clean(oauth_sandbox)

    assert_text_like_claude_p(oauth_sandbox, real_claude, [prompt])


def test_oauth_tool_use_is_denied_and_reported(real_claude: str, oauth_sandbox: Sandbox) -> None:
    _, theirs = check_tool_denied_like_claude_p(oauth_sandbox, real_claude)
    assert theirs["permission_denials"] != []


@pytest.mark.matrix
def test_oauth_api_error_exits_1_like_claude_p(real_claude: str, oauth_sandbox: Sandbox) -> None:
    check_api_error_like_claude_p(oauth_sandbox, real_claude, assert_same_result_shape)


@pytest.mark.matrix
def test_usage_limit_exits_1_like_claude_p(
    real_claude: str, oauth_sandbox: Sandbox, fake_api: FakeApiServer
) -> None:
    """A subscription's usage limit (429, unified status "rejected"): no retry, exit 1 at
    once, and the result is Claude Code's own sentence, not "API Error: ..."."""
    args = ["--output-format", "json", LIMIT_PROMPT]
    start = len(fake_api.hits)
    started = time.monotonic()
    ours = run_claude_print(oauth_sandbox, args, binary=real_claude)
    elapsed = time.monotonic() - started
    assert_exit(ours, 1)
    a = json.loads(ours.stdout)
    turns = [h for h in session_hits(fake_api, start, a["session_id"]) if h["kind"] == "turn"]
    theirs = run_claude_p(oauth_sandbox, real_claude, args)
    assert_exit(theirs, 1)
    b = json.loads(theirs.stdout)

    assert b["result"].startswith("You've hit your "), b["result"]
    assert " limit · resets " in b["result"], b["result"]
    keys = ["subtype", "is_error", "api_error_status", "result", "stop_reason", "num_turns"]
    keys += [k for k in ("terminal_reason", "api_error_type") if k in b]
    for key in keys:
        assert a[key] == b[key], (key, a[key], b[key])
    assert (a["is_error"], a["api_error_status"]) == (True, 429)
    assert len(turns) == 1, "a usage limit is not retried"
    assert elapsed < 30, "a usage limit must end the run at once, not wait for the reset"
    assert_interactive(oauth_sandbox, a["session_id"])
    assert_clean(oauth_sandbox)

    assert_text_like_claude_p(oauth_sandbox, real_claude, [LIMIT_PROMPT])


def test_usage_limit_json_shape_matches_claude_p(real_claude: str, oauth_sandbox: Sandbox) -> None:
    args = ["--output-format", "json", LIMIT_PROMPT]
    ours = run_claude_print(oauth_sandbox, args, binary=real_claude)
    theirs = run_claude_p(oauth_sandbox, real_claude, args)
    assert_exit(ours, 1)
    assert_exit(theirs, 1)
    a, b = json.loads(ours.stdout), json.loads(theirs.stdout)
    assert_clean(oauth_sandbox)
    assert a.get("api_error") == b.get("api_error")
    assert_same_result_shape(a, b)
