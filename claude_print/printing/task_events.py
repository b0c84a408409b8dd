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
it prints a `task_notification` event with the same fields instead.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Optional

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


def notification_event(text: str, session_id: str, uuid: str) -> Optional[Dict[str, Any]]:
    """The event for a notification prompt's text; None when it is not one."""
    if not text.lstrip().startswith("<task-notification>"):
        return None
    event: Dict[str, Any] = {"type": "system", "subtype": TASK_EVENT}
    for key, tag in _FIELDS:
        value = _tag(text, tag)
        if value is not None:
            event[key] = value
    if "task_id" not in event:
        return None
    event["uuid"] = uuid
    event["session_id"] = session_id
    return event


def started_event(
    result: Any,
    tool_use_id: str,
    tool_input: Dict[str, Any],
    session_id: str,
    uuid: str,
    says_backgrounded: bool = True,
) -> Optional[Dict[str, Any]]:
    """The `task_started` event of a tool result, if its call left work running
    (`says_backgrounded`: the release's event has `is_backgrounded`)."""
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
    else:
        return None
    if not says_backgrounded:
        del event["is_backgrounded"]
    event["uuid"] = uuid
    event["session_id"] = session_id
    return event
