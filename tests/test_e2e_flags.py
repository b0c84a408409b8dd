"""End to end: `claude -p` flags that claude-print emulates, against the real TUI.

Each case runs claude-print and `claude -p` with the same flags on the same fake
API and compares exit codes, the fields a script reads, and the key set.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Sandbox
from test_e2e_real import (
    assert_clean,
    assert_interactive,
    assert_same_shape,
    assert_text_like_claude_p,
    run_json_pair,
)

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
    a, b = run_json_pair(sandbox, real_claude, args, 1)
    assert not marker.exists(), "the tool of the call that reached the budget ran"
    for key in SAME_KEYS:
        assert a.get(key) == b.get(key), key
    assert a["stop_reason"] == "tool_use"
    assert a["total_cost_usd"] == pytest.approx(b["total_cost_usd"], rel=0.01)
    assert_same_shape(a, b)
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
