"""system/init's lists from the TUI's transcript (shapes as 2.1.197-2.1.331 write them)."""

from __future__ import annotations

import json
from typing import Any, Dict, List

from harness import TESTS

from claude_print.records.session_info import session_lists

P_INIT = TESTS / "data" / "cc-2.1.331" / "p_plain.stream.jsonl"


def attachment(**fields: Any) -> Dict[str, Any]:
    return {"type": "attachment", "attachment": fields}


def claude_p_init() -> Dict[str, Any]:
    for line in P_INIT.read_text().splitlines():
        event: Dict[str, Any] = json.loads(line)
        if event.get("subtype") == "init":
            return event
    raise AssertionError("no init in the capture")


def test_tools_are_claude_p_s_list_from_the_request_shape_and_deferred_names() -> None:
    """On 2.1.331 the TUI's request tools plus its deferred ones are claude -p's list."""
    theirs: List[str] = claude_p_init()["tools"]
    deferred = ["CronCreate", "CronDelete", "CronList", "EnterWorktree", "ExitWorktree"]
    deferred += ["Monitor", "NotebookEdit", "SendMessage", "TaskStop", "WebFetch", "WebSearch"]
    requested = ["Agent", "Bash", "Edit", "ListAgents", "Read", "ReportFindings"]
    requested += ["ScheduleWakeup", "Skill", "ToolSearch", "Workflow", "DeferredToolPlaceholder"]
    requested += ["Write"]
    records = [
        attachment(type="deferred_tools_delta", addedNames=deferred, addedLines=deferred),
        {"type": "api-request-shape", "shape": {"tools": [{"name": n} for n in requested]}},
    ]
    assert session_lists(records)["tools"] == theirs


def test_agents_leave_out_the_interactive_guide_and_follow_removals() -> None:
    types = ["claude", "claude-code-guide", "Explore", "general-purpose", "Plan"]
    records = [
        attachment(type="agent_listing_delta", addedTypes=types),
        attachment(type="agent_listing_delta", addedTypes=["mine"], removedTypes=["Plan"]),
    ]
    assert session_lists(records)["agents"] == ["claude", "Explore", "general-purpose", "mine"]


def test_skills_are_the_listing_s_names() -> None:
    listing = "- dataviz: charts: any\n- update-config: settings\nnot a skill line\n"
    assert session_lists([attachment(type="skill_listing", content=listing)])["skills"] == [
        "dataviz",
        "update-config",
    ]


def test_a_release_without_request_shapes_lists_no_tools() -> None:
    assert session_lists([])["tools"] == []
