"""stream-json's `system/task_notification` event, from the TUI's own notification.

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
