"""The stream-json `user` lines claude-print writes about the caller's own messages
(`--input-format stream-json`): a message echoed back (--replay-user-messages) and the
notice of an interrupted turn, and the transcript record by which the TUI shows that an
interrupt stopped a turn. The turn writes them (stream_out, turn_watch).
"""

from __future__ import annotations

import time
from typing import Any, Dict, Optional

from claude_print import contract
from claude_print.ids import random_uuid


def replay_event(
    message: Dict[str, Any], session_id: str, record: Optional[Dict[str, Any]]
) -> Dict[str, Any]:
    """--replay-user-messages: the caller's `user` message echoed back after the turn's
    `system/init` (measured, 2.1.197 and 2.1.330), with the uuid and time of the
    transcript's record of it (`record`), or the message's own uuid."""
    record = record or {}
    given = message.get("uuid")
    return {
        "type": "user",
        "message": message.get("message"),
        "session_id": session_id,
        "parent_tool_use_id": None,
        "uuid": given if isinstance(given, str) else record.get("uuid") or random_uuid(),
        "timestamp": record.get("timestamp") or iso_now(),
        "isReplay": True,
    }


def interruption_event(session_id: str) -> Dict[str, Any]:
    return {
        "type": "user",
        "message": {
            "role": "user",
            "content": [{"type": "text", "text": contract.INTERRUPTED_PREFIX + "]"}],
        },
        "parent_tool_use_id": None,
        "session_id": session_id,
        "uuid": random_uuid(),
        "timestamp": iso_now(),
    }


def iso_now() -> str:
    """Claude Code's timestamp format: UTC, milliseconds, Z."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


def is_interruption(record: Dict[str, Any]) -> bool:
    """The user record the TUI writes when Esc stops a turn."""
    if record.get("type") != "user":
        return False
    content = record.get("message", {}).get("content")
    if isinstance(content, str):
        content = [{"text": content}]
    blocks = content if isinstance(content, list) else []
    return any(
        isinstance(b, dict)
        and isinstance(b.get("text"), str)
        and b["text"].startswith(contract.INTERRUPTED_PREFIX)
        for b in blocks
    )
