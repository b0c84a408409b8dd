"""stream-json's task events, from what the TUI itself recorded.

`task_started`: a tool call that left work running in the background has a tool result
whose `toolUseResult` names it (a command: `backgroundTaskId`; a subagent: `isAsync` and
`agentId`). `claude -p` prints the event just before that result; the Agent SDK counts
a subagent in flight from it (and keeps stdin open for its follow-up turn).

`task_notification`:

When background work ends, the TUI submits a prompt of its own (its transcript record's
`origin.kind` is "task-notification") whose text is Claude Code's notification:
`<task-notification>` with `<task-id>`, `<tool-use-id>`, `<output-file>`, `<status>` and
`<summary>` (2.1.197, 2.1.270 and 2.1.332 alike). `claude -p` does not echo that prompt;
it prints a `task_notification` event with the same fields instead, and a subagent's
`<usage>` as `usage`; from 2.1.270 its `summary` is the subagent's report (`<result>`).

A foreground subagent (the TUI's default on 2.1.197; later TUIs run every subagent in
the background) leaves nothing running: the tool result says `status` "completed" with
its `agentId` and totals, and `claude -p` prints its `task_started` and
`task_notification` around the subagent's own messages (turns/subagent_stream.py),
before that result.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Optional

from claude_print.ids import random_uuid

TASK_EVENT = "task_notification"
STARTED_EVENT = "task_started"
TASK_EVENTS = (STARTED_EVENT, TASK_EVENT)
_FIELDS = (
    ("task_id", "task-id"),
    ("tool_use_id", "tool-use-id"),
    ("status", "status"),
    ("output_file", "output-file"),
    ("summary", "summary"),
)


def _tag(text: str, name: str) -> Optional[str]:
    match = re.search(rf"<{name}>(.*?)</{name}>", text, re.S)
    return match.group(1) if match else None


# A subagent's totals in its notification (`<usage>`) and in the event.
_USAGE = (
    ("total_tokens", "subagent_tokens"),
    ("tool_uses", "tool_uses"),
    ("duration_ms", "duration_ms"),
)
# Subagents started by the main thread, the only ones its transcript shows.
MAIN_THREAD_SPAWN_DEPTH = 1


def notification_event(
    text: str, session_id: str, uuid: str, report: bool = False, says_report: bool = False
) -> Optional[Dict[str, Any]]:
    """The event for a notification prompt's text; None when it is not one. `report`: a
    subagent's summary is its report (Facts.agent_summary_is_report), which
    `says_report` flags (Facts.subagent_agent_id: 2.1.332)."""
    if not text.lstrip().startswith("<task-notification>"):
        return None
    event: Dict[str, Any] = {"type": "system", "subtype": TASK_EVENT}
    for key, tag in _FIELDS:
        value = _tag(text, tag)
        if value is not None:
            event[key] = value
    if "task_id" not in event:
        return None
    result = _tag(text, "result")
    if report and result is not None:
        event["summary"] = result
        if says_report:
            event["summary_is_report"] = True
    usage = _tag(text, "usage")
    if usage is not None:
        numbers = {key: _number(_tag(usage, tag)) for key, tag in _USAGE}
        event["usage"] = {key: n for key, n in numbers.items() if n is not None}
    event["uuid"] = uuid
    event["session_id"] = session_id
    return event


def _number(text: Optional[str]) -> Optional[int]:
    return int(text) if text is not None and text.strip().isdigit() else None


def is_foreground_agent(result: Any) -> bool:
    """A tool result of a subagent the call waited for (measured: the TUI's on 2.1.197,
    claude -p's on 2.1.270 and 2.1.332 with `run_in_background: false`)."""
    return (
        isinstance(result, dict)
        and result.get("status") == "completed"
        and isinstance(result.get("agentId"), str)
        and result.get("isAsync") is not True
    )


def started_event(
    result: Any,
    tool_use_id: str,
    tool_input: Dict[str, Any],
    session_id: str,
    uuid: str,
    says_backgrounded: bool = True,
    says_depth: bool = False,
) -> Optional[Dict[str, Any]]:
    """The `task_started` event of a tool result, if its call left work running or ran
    a foreground subagent (`says_backgrounded`: the release's event has
    `is_backgrounded`; `says_depth`: a subagent's, `spawn_depth`)."""
    if not isinstance(result, dict):
        return None
    event: Dict[str, Any] = {"type": "system", "subtype": STARTED_EVENT}
    if isinstance(result.get("backgroundTaskId"), str):
        event.update(
            task_id=result["backgroundTaskId"],
            tool_use_id=tool_use_id,
            description=str(tool_input.get("description") or ""),
            is_backgrounded=True,
            task_type="local_bash",
        )
    elif result.get("isAsync") is True and isinstance(result.get("agentId"), str):
        event.update(
            task_id=result["agentId"],
            tool_use_id=tool_use_id,
            description=str(result.get("description") or tool_input.get("description") or ""),
            subagent_type=str(tool_input.get("subagent_type") or ""),
            is_backgrounded=True,
            task_type="local_agent",
            prompt=str(result.get("prompt") or tool_input.get("prompt") or ""),
        )
    elif is_foreground_agent(result):
        event.update(
            task_id=result["agentId"],
            tool_use_id=tool_use_id,
            description=str(tool_input.get("description") or ""),
            subagent_type=str(result.get("agentType") or tool_input.get("subagent_type") or ""),
            is_backgrounded=False,
            task_type="local_agent",
            prompt=str(result.get("prompt") or tool_input.get("prompt") or ""),
        )
    else:
        return None
    if not says_backgrounded:
        del event["is_backgrounded"]
    if says_depth and event["task_type"] == "local_agent":
        event = _after(event, "is_backgrounded", "spawn_depth", MAIN_THREAD_SPAWN_DEPTH)
    event["uuid"] = uuid
    event["session_id"] = session_id
    return event


def foreground_notification(
    result: Dict[str, Any], tool_use_id: str, description: str, session_id: str, report: bool
) -> Dict[str, Any]:
    """The `task_notification` of a foreground subagent, from its tool result: its totals
    as `usage` (the CLI's are counted a moment earlier: a few tokens and milliseconds
    fewer), its description or (`report`) its last text as `summary`. The CLI's
    `output_file` is "" on 2.1.197 and the task's output file from 2.1.270, which the TUI
    records nowhere for a foreground subagent: "" here."""
    texts = [
        str(block.get("text", ""))
        for block in result.get("content") or []
        if isinstance(block, dict) and block.get("type") == "text"
    ]
    totals = (
        ("total_tokens", "totalTokens"),
        ("tool_uses", "totalToolUseCount"),
        ("duration_ms", "totalDurationMs"),
    )
    return {
        "type": "system",
        "subtype": TASK_EVENT,
        "task_id": result["agentId"],
        "tool_use_id": tool_use_id,
        "status": result["status"],
        "output_file": "",
        "summary": texts[-1] if report and texts else description,
        "usage": {key: result[name] for key, name in totals if isinstance(result.get(name), int)},
        "uuid": random_uuid(),
        "session_id": session_id,
    }


def _after(event: Dict[str, Any], anchor: str, key: str, value: Any) -> Dict[str, Any]:
    """`event` with `key` right after `anchor` (or after `subagent_type` without it)."""
    items = list(event.items())
    names = [name for name, _ in items]
    at = names.index(anchor if anchor in names else "subagent_type") + 1
    return dict([*items[:at], (key, value), *items[at:]])
