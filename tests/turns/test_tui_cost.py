"""The TUI's own cost (its `cost-state` record) where claude-print's price table has none.

claude-print's table prices the models the fake API answers with, so the e2e tests get
the same figure from the record and from the table and cannot tell which one was used.
A model missing from the table costs 0.0 there: only the record can give its cost.
mock_claude writes the record (2.1.247 on), pricing every model at its own MOCK_PRICE.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest
from harness import MOCK_CLAUDE, Sandbox, run_claude_print

from claude_print.records import pricing
from claude_print.turns import tui_cost

UNPRICED = "claude-unpriced-9-9"


def cost_states(sandbox: Sandbox) -> List[Dict[str, Any]]:
    found = []
    for path in sandbox.transcripts():
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record.get("type") == "cost-state":
                found.append(record)
    return found


def test_the_model_is_missing_from_the_price_table() -> None:
    assert pricing.price_for(UNPRICED) is None
    assert pricing.cost_usd(UNPRICED, {"input_tokens": 42, "output_tokens": 4}) == 0.0


@pytest.mark.parametrize("scenario", ["ok", "tools:2"])
def test_an_unpriced_model_costs_what_the_tuis_record_says(sandbox: Sandbox, scenario: str) -> None:
    proc = run_claude_print(
        sandbox,
        ["--output-format", "json", "--model", UNPRICED, "--allowedTools=Bash", "hi"],
        binary=str(MOCK_CLAUDE),
        env={"MOCK_CLAUDE_VERSION": "2.1.247", "MOCK_CLAUDE_SCENARIO": scenario},
    )
    assert proc.returncode == 0, proc.stderr.decode()
    result = json.loads(proc.stdout)
    [record] = cost_states(sandbox)
    assert record["totalCostUSD"] > 0
    assert result["total_cost_usd"] == record["totalCostUSD"]
    ours = result["modelUsage"][UNPRICED]
    assert ours["costUSD"] == record["modelUsage"][UNPRICED]["costUSD"]


def test_before_2_1_247_there_is_no_record_and_the_table_prices_it(sandbox: Sandbox) -> None:
    proc = run_claude_print(
        sandbox,
        ["--output-format", "json", "--model", UNPRICED, "hi"],
        binary=str(MOCK_CLAUDE),
        env={"MOCK_CLAUDE_VERSION": "2.1.246"},
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert cost_states(sandbox) == []
    assert json.loads(proc.stdout)["total_cost_usd"] == 0.0


def test_the_last_record_counts_and_each_model_takes_its_own_cost() -> None:
    older: Dict[str, Any] = {"type": "cost-state", "totalCostUSD": 0.5, "modelUsage": {}}
    newer: Dict[str, Any] = {
        "type": "cost-state",
        "totalCostUSD": 1.25,
        "modelUsage": {"a": {"costUSD": 1.0}, "b": {"costUSD": 0.25}},
    }
    records = [older, {"type": "assistant"}, newer, {"type": "system"}]
    assert tui_cost.last_cost_state(records) is newer
    assert tui_cost.last_cost_state([{"type": "cost-state"}]) is None  # no total: not used
    usage: Dict[str, Dict[str, Any]] = {"a": {"costUSD": 0.0}, "c": {"costUSD": 0.1}}
    assert tui_cost.apply(newer, 0.1, usage) == 1.25
    assert usage == {"a": {"costUSD": 1.0}, "c": {"costUSD": 0.1}}  # c: not in the record
