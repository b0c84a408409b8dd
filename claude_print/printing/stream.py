"""`claude -p --output-format stream-json --verbose` events from a TUI transcript.

`claude -p` (2.1.197) writes: one `system/init` event, then one event per
message of the query loop (assistant messages and user tool results, each
normalised to one content block), then the `result` object
(`claude_print.printing.output.result_object`). It does not echo the prompt.

Best-effort parts (the TUI transcript cannot tell):

- `init_event`: tools, MCP servers, slash commands, agents, skills and plugins
  are what the caller passes (default: empty lists); `uuid` is fresh.
- assistant events: `claude -p` emits each block at `content_block_stop`, so
  its `message.stop_reason` / `stop_sequence` are null and its `usage` is the
  one from `message_start`. We set the same nulls but keep the transcript's
  (final) usage, and drop the transcript-only `stop_details`. API-error
  messages are passed through unchanged, as `claude -p` does.
- Subagent messages (`parent_tool_use_id` != null) live in other files:
  turns/subagent_stream.py reads them (through `message_events`).
"""

from __future__ import annotations

import heapq
import re
from typing import Any, Callable, Dict, Iterable, List, Optional, Set, Tuple

from claude_print import contract
from claude_print.ids import random_uuid
from claude_print.printing.output import api_error_type
from claude_print.records.transcript import (
    Record,
    is_human_prompt,
    is_notification_prompt,
    print_error_text,
    record_blocks,
)
from claude_print.tui.images import is_source_note

# Block texts that `claude -p` never emits as an assistant event.
_SKIPPED_TEXTS = ("(no content)", "[Request interrupted by user for tool use]")
_UUID_PREFIX = 24  # Claude Code derives per-block uuids as uuid[:24] + 12 hex digits


def init_event(
    *,
    cwd: str,
    session_id: str,
    model: str,
    permission_mode: str,
    claude_version: str,
    api_key_source: str,
    tools: Optional[List[str]] = None,
    mcp_servers: Optional[List[Dict[str, Any]]] = None,
    slash_commands: Optional[List[str]] = None,
    output_style: str = "default",
    agents: Optional[List[str]] = None,
    skills: Optional[List[str]] = None,
    plugins: Optional[List[Dict[str, Any]]] = None,
    analytics_disabled: bool = False,
    product_feedback_disabled: bool = False,
    memory_paths: Optional[Dict[str, str]] = None,
    fast_mode_state: str = "off",
) -> Dict[str, Any]:
    """The `system/init` event, keys in `claude -p`'s order.

    `memory_paths` is left out when None, as `claude -p` does without memory
    (it is `{"auto": "<config>/projects/<slug>/memory/"}` normally).
    """
    event: Dict[str, Any] = {
        "type": "system",
        "subtype": "init",
        "cwd": cwd,
        "session_id": session_id,
        "tools": list(tools or []),
        "mcp_servers": list(mcp_servers or []),
        "model": model,
        "permissionMode": permission_mode,
        "slash_commands": list(slash_commands or []),
        "apiKeySource": api_key_source,
        "claude_code_version": claude_version,
        "output_style": output_style,
        "agents": list(agents or []),
        "skills": list(skills or []),
        "plugins": list(plugins or []),
        "analytics_disabled": analytics_disabled,
        "product_feedback_disabled": product_feedback_disabled,
        "uuid": random_uuid(),
    }
    if memory_paths is not None:
        event["memory_paths"] = dict(memory_paths)
    event["fast_mode_state"] = fast_mode_state
    return event


def _block_uuid(record_uuid: str, index: int) -> str:
    return f"{record_uuid[:_UUID_PREFIX]}{index:012x}"


def _worth_emitting(block: Any) -> bool:
    """Claude Code's filter: drop empty blocks and placeholder texts."""
    if not isinstance(block, dict):
        return False
    if block.get("type") != "text":
        return True
    text = block.get("text")
    return isinstance(text, str) and bool(text.strip()) and text not in _SKIPPED_TEXTS


def readable_tool_name(name: str) -> str:
    """Claude Code's display name for a tool without a title: the part after the last
    `__`, underscores as spaces, each word capitalised (JavaScript's ASCII `\\b\\w`)."""
    words = (name.split("__")[-1] or name).replace("_", " ")
    return re.sub(r"\b\w", lambda m: m.group().upper(), words, flags=re.ASCII)


def tool_use_meta(block: Any, names_tool: bool) -> Optional[Dict[str, Any]]:
    """`claude -p`'s display metadata for a tool_use block, or None where the display
    name is the tool's own (the built-in tools). The MCP server's name is the config's
    key (the CLI prefers the name the server reports, which the transcript does not
    keep; an SDK server reports the name it was created with, usually the same); a
    tool's annotated title is not known either."""
    if not isinstance(block, dict) or block.get("type") != "tool_use":
        return None
    tool_id, name = block.get("id"), block.get("name")
    if not isinstance(tool_id, str) or not isinstance(name, str):
        return None
    display = readable_tool_name(name)
    if display == name:
        return None
    meta: Dict[str, Any] = {"id": tool_id, "display_name": display}
    parts = name.split("__")
    if len(parts) >= 3 and parts[0] == "mcp":
        meta["server_display_name"] = parts[1]
        if names_tool:
            meta["tool_name"] = "__".join(parts[2:])
    return meta


def tool_result_meta(record: Record, block: Any, kind: str) -> Optional[Dict[str, Any]]:
    """`claude -p`'s note on how a tool call's permission check ended, from the TUI's
    record (`toolDenialKind`, `permissionDecision`, 2.1.270 on; older ones say only the
    message). `kind` is the release's form (contract.Facts.tool_result_meta). Where the
    TUI's answer was claude-print's, the note is what `claude -p` itself would say:
    its own refusal is print mode's (rejected by configuration), the caller's
    `can_use_tool` answer is the user's."""
    if not kind or not isinstance(block, dict) or block.get("type") != "tool_result":
        return None
    meta: Dict[str, Any] = {"id": block.get("tool_use_id")}
    if contract.DENY_MESSAGE in str(record.get("toolUseResult", "")):
        meta["non_execution_kind"] = "user-rejected"
        if kind == "decision":
            meta["permission_decision"] = {"decision": "reject", "source": "config"}
        return meta
    denial = record.get("toolDenialKind")
    if isinstance(denial, str):
        meta["non_execution_kind"] = denial
        if isinstance(record.get("userFeedback"), str):
            meta["user_feedback"] = record["userFeedback"]
    decision = record.get("permissionDecision")
    if kind == "decision" and isinstance(decision, dict) and "decision" in decision:
        answer = decision.get("decision")
        note: Dict[str, Any] = {"decision": answer, "source": decision.get("source")}
        if decision.get("reasonCode") == "hook:PermissionRequest":
            # claude-print's asking PermissionRequest hook: the SDK caller decided.
            note["source"] = "user_temporary" if answer == "accept" else "user_reject"
        elif decision.get("reasonType") is not None:
            note["reason_type"] = decision["reasonType"]
        meta["permission_decision"] = note
    return meta if len(meta) > 1 else None


class StreamConverter:
    """Turns transcript records (fed in any order) into `claude -p` stream events.

    Records are released in `parentUuid` order: one whose parent has not been
    seen is held until the parent arrives (the TUI writes its transcript out
    of order), or until `flush()`. Only records after the human prompt are
    converted; for a resumed session pass the uuids already in the transcript
    as `known_uuids` so the earlier turns are not replayed.
    """

    def __init__(
        self,
        session_id: str,
        *,
        known_uuids: Iterable[str] = (),
        hook_runs: Optional[Callable[[Record], List[Dict[str, Any]]]] = None,
    ) -> None:
        """`hook_runs` turns a record of a hook run into its events (hook_events), also
        before the prompt: SessionStart hooks run first."""
        self.session_id = session_id
        self._hook_runs = hook_runs
        self._seen: Set[str] = set(known_uuids)
        self._held: Dict[str, List[Tuple[Tuple[str, int], Record]]] = {}
        self._held_uuids: Set[str] = set()
        self._in_turn = False
        self._counter = 0
        self._tool_inputs: Dict[str, Dict[str, Any]] = {}  # tool_use id -> its input
        self.facts = contract.facts_for(None)  # the release's (StreamOut sets them)

    @property
    def in_turn(self) -> bool:
        """The turn's prompt has been released: its records are converted from here."""
        return self._in_turn

    def feed(self, record: Record) -> List[Dict[str, Any]]:
        """Events that `record` (and any records it unblocks) produce, in order."""
        if record.get("sessionId") != self.session_id:
            return []
        record_uuid = record.get("uuid")
        if not isinstance(record_uuid, str):
            return []  # metadata lines (ai-title, mode, last-prompt...)
        if record_uuid in self._seen or record_uuid in self._held_uuids:
            return []
        self._counter += 1
        key = (str(record.get("timestamp") or ""), self._counter)
        parent = record.get("parentUuid")
        if isinstance(parent, str) and parent not in self._seen:
            self._held.setdefault(parent, []).append((key, record))
            self._held_uuids.add(record_uuid)
            return []
        return self._release([(key, record)])

    def flush(self) -> List[Dict[str, Any]]:
        """Release every held record (their parents never came), oldest first."""
        waiting = [entry for entries in self._held.values() for entry in entries]
        self._held.clear()
        self._held_uuids.clear()
        return self._release(waiting)

    def _release(self, entries: List[Tuple[Tuple[str, int], Record]]) -> List[Dict[str, Any]]:
        heap = [(key, index, record) for index, (key, record) in enumerate(entries)]
        heapq.heapify(heap)
        events: List[Dict[str, Any]] = []
        tie = len(heap)
        while heap:
            _, _, record = heapq.heappop(heap)
            record_uuid = str(record["uuid"])
            if record_uuid in self._seen:
                continue
            self._seen.add(record_uuid)
            self._held_uuids.discard(record_uuid)
            events.extend(self._convert(record))
            for key, child in self._held.pop(record_uuid, []):
                tie += 1
                heapq.heappush(heap, (key, tie, child))
        return events

    def _convert(self, record: Record) -> List[Dict[str, Any]]:
        if self._hook_runs is not None and record.get("type") == "attachment":
            return self._hook_runs(record)
        if is_human_prompt(record):
            self._in_turn = True  # claude -p does not echo the prompt
            return []
        if is_notification_prompt(record):
            return self._notification_events(record)
        if not self._in_turn or record.get("isSidechain"):
            return []
        kind = record.get("type")
        if kind == "assistant":
            return self._assistant_events(record)
        if kind == "user" and not is_source_note(record):
            return self._started_events(record) + self._user_events(record)
        return []  # attachments, system records, progress...

    def message_events(self, record: Record) -> List[Dict[str, Any]]:
        """The events of a message record outside the turn's flow (a subagent's, from
        its own transcript: turns/subagent_stream.py), made as the turn's are."""
        kind = record.get("type")
        if kind == "assistant":
            return self._assistant_events(record)
        if kind == "user" and not is_source_note(record):
            return self._user_events(record)
        return []

    def _started_events(self, record: Record) -> List[Dict[str, Any]]:
        """`task_started` before the tool result of a call that left work running."""
        from claude_print.printing.task_events import started_event

        result = record.get("toolUseResult")
        if not isinstance(result, dict):
            return []
        events = []
        for index, block in enumerate(record_blocks(record)):
            if block.get("type") != "tool_result":
                continue
            tool_use_id = str(block.get("tool_use_id") or "")
            uuid = _block_uuid(str(record["uuid"]), 1000 + index)
            inputs = self._tool_inputs.get(tool_use_id, {})
            facts = self.facts
            says = (facts.task_started_backgrounded, facts.task_started_spawn_depth)
            event = started_event(result, tool_use_id, inputs, self.session_id, uuid, *says)
            if event is not None:
                events.append(event)
        return events

    def _notification_events(self, record: Record) -> List[Dict[str, Any]]:
        """A turn the TUI started for a background task's notification: `claude -p`
        prints the notification as a `task_notification` event, not as a prompt."""
        from claude_print.printing.task_events import notification_event

        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        texts = [content] if isinstance(content, str) else []
        if isinstance(content, list):
            texts = [str(b.get("text", "")) for b in content if isinstance(b, dict)]
        events = []
        for text in texts:
            event = notification_event(
                text,
                self.session_id,
                str(record["uuid"]),
                self.facts.agent_summary_is_report,
                self.facts.subagent_agent_id,
            )
            if event is not None:
                events.append(event)
        return events

    def _assistant_events(self, record: Record) -> List[Dict[str, Any]]:
        message = record.get("message")
        if not isinstance(message, dict):
            return []
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        record_uuid = str(record["uuid"])
        events = []
        for index, block in enumerate(blocks):
            if isinstance(block, dict) and block.get("type") == "tool_use":
                inputs = block.get("input")
                self._tool_inputs[str(block.get("id"))] = inputs if isinstance(inputs, dict) else {}
            if not _worth_emitting(block):
                continue
            if record.get("isApiErrorMessage"):
                out = dict(message)  # emitted whole by claude -p, in its own words
                if block.get("type") == "text":
                    block = {**block, "text": print_error_text(str(block.get("text", "")))}
                out["content"] = [block]
            else:
                out = {k: v for k, v in message.items() if k != "stop_details"}
                out["content"] = [block]
                out["stop_reason"] = None
                out["stop_sequence"] = None
            out["context_management"] = message.get("context_management")
            event: Dict[str, Any] = {
                "type": "assistant",
                "message": out,
                "parent_tool_use_id": None,
                "session_id": self.session_id,
                "uuid": _block_uuid(record_uuid, index) if len(blocks) > 1 else record_uuid,
            }
            meta = tool_use_meta(block, self.facts.tool_use_meta_tool_name)
            if meta is not None:
                event["tool_use_meta"] = [meta]
            if record.get("error") is not None:
                event["error"] = record["error"]
            if record.get("requestId") is not None:
                event["request_id"] = record["requestId"]
            if record.get("isApiErrorMessage"):
                # Kept only where the release's `claude -p` prints them (output.conform).
                status = record.get("apiErrorStatus")
                event["is_api_error_message"] = True
                event["api_error_status"] = status
                event["api_error_type"] = api_error_type(
                    status if isinstance(status, int) else None
                )
            events.append(event)
        return events

    def _user_events(self, record: Record) -> List[Dict[str, Any]]:
        message = record.get("message")
        if not isinstance(message, dict):
            return []
        content = message.get("content")
        if isinstance(content, str):
            if not content.strip():
                return []
            blocks: List[Any] = [{"type": "text", "text": content}]
        elif isinstance(content, list):
            blocks = content
        else:
            return []
        record_uuid = str(record["uuid"])
        events = []
        for index, block in enumerate(blocks):
            out_message = dict(message)
            out_message["content"] = [block]
            event: Dict[str, Any] = {
                "type": "user",
                "message": out_message,
                "parent_tool_use_id": None,
                "session_id": self.session_id,
                "uuid": _block_uuid(record_uuid, index) if len(blocks) > 1 else record_uuid,
                "timestamp": record.get("timestamp"),
            }
            if record.get("isMeta") or record.get("isVisibleInTranscriptOnly"):
                event["isSynthetic"] = True
            if "toolUseResult" in record:
                result = record["toolUseResult"]
                meta = record.get("mcpMeta")
                event["tool_use_result"] = (
                    {"content": result, **meta} if isinstance(meta, dict) else result
                )
            result_meta = tool_result_meta(record, block, self.facts.tool_result_meta)
            if result_meta is not None:
                event["tool_result_meta"] = [result_meta]
            if isinstance(record.get("origin"), dict):
                event["origin"] = record["origin"]
            events.append(event)
        return events
