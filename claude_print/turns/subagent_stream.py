"""stream-json: a subagent's own messages, as `claude -p` prints them.

The TUI writes a subagent's messages to a transcript of its own beside the session's:
`<session>/subagents/agent-<agentId>.jsonl`, with `agent-<agentId>.meta.json`
(`agentType`, `description`, `toolUseId`, `spawnDepth`) — the same place on 2.1.197,
2.1.270 and 2.1.332, and the file the SubagentStop hook names (`agent_transcript_path`).
`claude -p` prints the subagent's messages in its stream as the subagent makes them
(read in each release's code, measured with claude -p: tests/data/subagents/):

- a subagent in the background (its tool result says `isAsync`; the default from
  2.1.198): every message after its prompt, one event per content block, empty texts
  left out; they come after the Agent call's tool result and before the subagent's
  `task_notification`;
- a foreground subagent (the call waits for it: 2.1.197's default; the TUI of 2.1.270
  and 2.1.332 runs every subagent in the background, `run_in_background: false` too):
  its prompt and only the blocks that call a tool or carry a tool's result (its texts
  stay unsent: the SDK's `forwardSubagentText`, which claude-print does not take),
  between its `task_started` and `task_notification`, before the tool result.

Each is the event the turn's own message would be (stream.StreamConverter, the
release's keys) with `parent_tool_use_id` the Agent call's id, `agent_id` (2.1.332),
then `subagent_type` and `task_description`; a user message without `tool_use_result`.
A background subagent's transcript is read on every look at the session's, and once
more before its notification; a foreground one's when its tool result is read (its
messages then come together, not as the subagent makes them). Not printed: the CLI's
`task_progress` events, and a subagent's messages after its notification (SendMessage).
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from claude_print.printing.task_events import (
    TASK_EVENT,
    foreground_notification,
    is_foreground_agent,
)

if TYPE_CHECKING:
    from claude_print.printing.stream import StreamConverter

Event = Dict[str, Any]
Record = Dict[str, Any]

# An assistant event's keys that claude -p prints after `task_description`.
_AFTER_DESCRIPTION = (
    "is_api_error_message",
    "api_error",
    "api_error_status",
    "api_error_type",
    "tool_use_meta",
)
_TOOL_BLOCKS = ("tool_use", "tool_result")


class _Agent:
    """One subagent: who it is, and how far its transcript has been read."""

    def __init__(self, folder: str, result: Dict[str, Any], tool_use_id: str, background: bool):
        from claude_print.records.transcript import TranscriptTail

        self.agent_id = str(result["agentId"])
        self.tool_use_id = tool_use_id
        self.background = background
        self.result = result  # the Agent call's tool result (a foreground one's totals)
        path = os.path.join(folder, "subagents", f"agent-{self.agent_id}")
        meta = _read_meta(path + ".meta.json")
        self.agent_type = str(meta.get("agentType") or result.get("agentType") or "")
        self.description = str(meta.get("description") or result.get("description") or "")
        self.tail = TranscriptTail(path + ".jsonl")
        self.answered = False  # its final answer has been read


class SubagentStream:
    """Splices the subagents' messages into the turn's events (`around`) and reads the
    background ones' transcripts as they grow (`poll`).

    The TUI writes a subagent's transcript a moment after the session's (measured on
    2.1.197: the subagent's file was written 0.25 s after the tool result that ends it):
    an event that ends a subagent (a foreground one's tool result, a background one's
    notification) waits, with the events after it, until the subagent's final answer
    (an assistant record that does not stop for a tool) is read, at most WRITE_WAIT
    seconds, or the turn's end (`flush`)."""

    WRITE_WAIT = 2.0

    def __init__(
        self,
        converter: StreamConverter,
        transcript: Callable[[], Optional[str]],
        clock: Callable[[], float] = time.monotonic,
    ):
        self.converter = converter  # makes the events; its session id and release facts
        self.transcript = transcript  # the session's transcript path, once known
        self.clock = clock
        self.following: Dict[str, _Agent] = {}  # background subagents, by agent id
        self.held: List[Event] = []  # the turn's events, from one that ends `ending` on
        self.ending: Optional[_Agent] = None
        self.until = 0.0  # when `ending` is waited for no longer

    def around(self, events: List[Event]) -> List[Event]:
        """`events` (the turn's, in order) with the subagents' messages in their place."""
        self.held += events
        return self._release(force=False)

    def poll(self) -> List[Event]:
        """What the subagents wrote since the last look (and what waited for it)."""
        out: List[Event] = []
        if self.ending is None:
            for agent in list(self.following.values()):
                out += self._read(agent)
        return out + self._release(force=False)

    def flush(self) -> List[Event]:
        """The turn is over: what waits for a subagent's transcript goes now."""
        return self._release(force=True)

    def _release(self, force: bool) -> List[Event]:
        out: List[Event] = []
        while self.held:
            event = self.held[0]
            if self.ending is None:
                self.ending = self._ended_by(event)
                self.until = self.clock() + self.WRITE_WAIT
            agent = self.ending
            if agent is not None:
                out += self._read(agent)
                if not (agent.answered or force or self.clock() >= self.until):
                    break
                self.ending = None
                if not agent.background:
                    out.append(self._notification(agent))
            out.append(self.held.pop(0))
            result = event.get("tool_use_result") if event.get("type") == "user" else None
            if isinstance(result, dict) and result.get("isAsync") is True:
                agent = self._agent(event, result, background=True)
                if agent is not None:
                    self.following[agent.agent_id] = agent
                    out += self._read(agent)
        return out

    def _ended_by(self, event: Event) -> Optional[_Agent]:
        """The subagent `event` ends: a foreground one's tool result, a background one's
        notification."""
        result = event.get("tool_use_result") if event.get("type") == "user" else None
        if isinstance(result, dict) and is_foreground_agent(result):
            return self._agent(event, result, background=False)
        if event.get("subtype") == TASK_EVENT:
            return self.following.pop(str(event.get("task_id")), None)
        return None

    def _notification(self, agent: _Agent) -> Event:
        return foreground_notification(
            agent.result,
            agent.tool_use_id,
            agent.description,
            self.converter.session_id,
            self.converter.facts.agent_summary_is_report,
        )

    def _agent(self, event: Event, result: Dict[str, Any], background: bool) -> Optional[_Agent]:
        path = self.transcript()
        blocks = event.get("message", {}).get("content") or [{}]
        tool_use_id = blocks[0].get("tool_use_id") if isinstance(blocks[0], dict) else None
        if not path or not path.endswith(".jsonl") or not isinstance(tool_use_id, str):
            return None
        if not isinstance(result.get("agentId"), str):
            return None
        return _Agent(path[: -len(".jsonl")], result, tool_use_id, background)

    def _read(self, agent: _Agent) -> List[Event]:
        out = []
        for record in agent.tail.poll():
            kind = record.get("type")
            prompt = kind == "user" and record.get("parentUuid") is None
            if kind == "assistant" and _answers(record):
                agent.answered = True
            if kind not in ("user", "assistant") or (prompt and agent.background):
                continue
            for event in self.converter.message_events(record):
                if agent.background or prompt or _block_type(event) in _TOOL_BLOCKS:
                    out.append(self._as_subagent(event, agent))
        return out

    def _as_subagent(self, event: Event, agent: _Agent) -> Event:
        """The turn's event for a message, made the subagent's: the release's keys for
        a message of its kind (output.conform), then the subagent's."""
        from claude_print.printing.output import conform

        facts = self.converter.facts
        base = conform(event, facts.version)
        base.pop("tool_use_result", None)  # none on a subagent's (2.1.197 to 2.1.332)
        out: Event = {}
        for key, value in base.items():
            out[key] = value
            if key == "parent_tool_use_id":
                out[key] = agent.tool_use_id
                if facts.subagent_agent_id:
                    out["agent_id"] = agent.agent_id
        after = {key: out.pop(key) for key in _AFTER_DESCRIPTION if key in out}
        out["subagent_type"] = agent.agent_type
        out["task_description"] = agent.description
        out.update(after)
        return out


def _answers(record: Record) -> bool:
    """A subagent's final answer: a message that stops other than for a tool call."""
    message = record.get("message")
    stop = message.get("stop_reason") if isinstance(message, dict) else None
    return stop is not None and stop != "tool_use"


def _block_type(event: Event) -> Any:
    content = event.get("message", {}).get("content")
    first = content[0] if isinstance(content, list) and content else None
    return first.get("type") if isinstance(first, dict) else None


def _read_meta(path: str) -> Dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            meta = json.load(handle)
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}
