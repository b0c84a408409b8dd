"""stream-json output during a turn: the transcript's records become `claude -p`'s
events (`stream.StreamConverter`), with the turn's init line before the first of them,
a `system/permission_denied` note before a denied tool's result (2.1.238 on), and the
runs of the user's hooks released at their place (after the tool call they are about)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from claude_print import contract
from claude_print.hooks import hook_events
from claude_print.hooks.hook_events import HookWatch
from claude_print.ids import random_uuid
from claude_print.printing.emit import Emitter
from claude_print.printing.task_events import TASK_EVENTS
from claude_print.turns.turn_state import DONE

if TYPE_CHECKING:
    from claude_print.printing.stream import StreamConverter
    from claude_print.turns.subagent_stream import SubagentStream
    from claude_print.turns.transcript_feed import TranscriptFeed
    from claude_print.turns.turn import Turn


class StreamOut:
    def __init__(
        self,
        emitter: Emitter,
        facts: Callable[[], contract.Facts],
        hook_watch: Callable[[], HookWatch],
        asked_model: str,
        transcript: TranscriptFeed,
        turn: Callable[[], Turn],
        permission_mode: Callable[[], str],
    ) -> None:
        self.emitter = emitter
        self.facts = facts  # the release may be learned late
        self.hook_watch = hook_watch
        self.asked_model = asked_model  # --model, for an init line before any answer
        self.transcript = transcript
        transcript.beside = self.poll_subagents  # on its every look, before its records
        self.turn = turn  # the turn under way
        self.permission_mode = permission_mode  # set_permission_mode may change it
        self.mcp_servers: List[str] = []  # --mcp-config's servers, for system/init
        self.converter: Optional[StreamConverter] = None
        self.subagents: Optional[SubagentStream] = None  # their own messages
        self.session_id = ""
        self.tool_names: Dict[str, str] = {}  # tool_use id -> tool name
        self.model = ""  # the model in use, once an answer names it
        self.shape_seen = False  # an api-request-shape record was read (the tools)
        # The turn's messages read before the first shape record, where the release writes
        # one: its write can land after the answer's (seen on 2.1.332 under load), and an
        # init line sent then would list no tools. They go once the shape is read.
        self.held: List[Dict[str, Any]] = []
        # Messages of the TUI's own next turn (a background task's notification) read
        # while the last turn is over and before it is handed over: they go after that
        # turn's init line, as claude -p prints them (2.1.197 and 2.1.270: read together
        # with the notification's prompt, they came before it).
        self.early: List[Dict[str, Any]] = []

    def open(self, session_id: str, reports: bool, reported: Optional[Any], own_dir: str) -> None:
        """Convert this session's records; with `reports`, runs of the user's settings
        hooks (of the `reported` events, None: all) come from the transcript's records of
        them (hooks under `own_dir` are claude-print's, not reported)."""
        from claude_print.printing.stream import StreamConverter
        from claude_print.turns.subagent_stream import SubagentStream

        def hook_runs(record: Dict[str, Any]) -> List[Dict[str, Any]]:
            return hook_events.from_attachment(record, reported, own_dir, session_id)

        self.session_id = session_id
        self.converter = StreamConverter(session_id, hook_runs=hook_runs if reports else None)
        self.subagents = SubagentStream(self.converter, lambda: self.transcript.path)

    def feed(self, record: Dict[str, Any]) -> None:
        if self.converter is not None and self.subagents is not None:
            self.converter.facts = self.facts()
            self.shape_seen = self.shape_seen or record.get("type") == "api-request-shape"
            self._emit(self.subagents.around(self.converter.feed(record)))
            if self.converter.in_turn and self.emitter.streams_events:
                self._early_init(record)
            if self.held and self.shape_seen:
                self._emit([])

    def poll_subagents(self) -> None:
        """What the background subagents wrote since the last look (their transcripts
        grow while the session's may not)."""
        if self.subagents is not None and self.emitter.streams_events:
            self.subagents.converter.facts = self.facts()
            self._emit(self.subagents.poll())

    def init_at_submission(self) -> None:
        """The turn's prompt went in: its init line now if the model is known (an
        earlier turn, the options), or where the transcript will not tell it (before
        2.1.270) with the release's default as its `claude -p` names it; else it goes
        once the transcript records the model (`_early_init`)."""
        if self.facts().request_shape_record and not any(
            record.get("type") == "api-request-shape" for record in self.transcript.records
        ):
            # The session's first request names the tools: its shape record sends the init
            # line (`_early_init`). A model known already (--model, or its record read
            # first on a loaded machine) must not send one with no tools.
            return
        model = self.model
        if not model and not self.facts().model_record:
            from claude_print.printing.output import default_model_usage_key

            model = default_model_usage_key(self.facts().version) or ""
        if model:
            self.init(model)

    def _early_init(self, record: Dict[str, Any]) -> None:
        """The CLI prints the turn's init line as the turn starts, which an SDK program
        waits for (to interrupt, say). The TUI records the model it will use (2.1.270
        on) and, from 2.1.330, the request's shape just before it sends it: the init
        line goes out then, with the tools (`session_info`), not with the answer."""
        model = announced_model(record)
        if model:
            self.model = model
            if not self.facts().request_shape_record:
                self.init(model)
        elif record.get("type") == "api-request-shape" and self.model:
            self.init(self.model)

    def flush(self) -> None:
        """The turn is over: what the converter holds, the init line if none went yet,
        the user's hook runs still held."""
        if self.early:
            self._emit([])
        if self.converter is not None and self.subagents is not None:
            self._emit(self.subagents.around(self.converter.flush()) + self.subagents.flush())
        if self.held:  # no shape came (an error before the request): as read
            self._emit([], hold=False)
        if self.emitter.streams_events:
            self.init("")
        self.release_hooks(turn_over=True)

    def init(self, model: str = "") -> None:
        """The turn's init line (and replayed message), once (given the model, if known)."""
        turn = self.turn()
        session_id = self.transcript.session_id
        if turn.init_sent or session_id is None:
            return
        turn.init_sent = True
        for event in init_events(
            self.asked_model,
            self.permission_mode(),
            session_id,
            model,
            self.facts().version,
            self.transcript.path,
            turn.replay,
            self.transcript.of(turn),
            self.transcript.records,
            self.mcp_servers,
        ):
            self.emitter.event(event)

    def release_hooks(self, turn_over: bool = False) -> None:
        for event in self.hook_watch().release(self.tool_names, turn_over):
            self.emitter.event(event)

    def _awaits_shape(self) -> bool:
        """The turn's init line waits for the tools the first shape record names."""
        return (
            not self.shape_seen and self.facts().request_shape_record and not self.turn().init_sent
        )

    def _emit(self, events: List[Dict[str, Any]], hold: bool = True) -> None:
        over = self.turn().state is DONE
        if self.early and not over:
            events, self.early = self.early + events, []
        if self.held and not (hold and self._awaits_shape()):
            events, self.held = self.held + events, []
        for event in events:
            if over and event.get("type") in ("assistant", "user"):
                self.early.append(event)  # the next turn's, before it is ours
                continue
            if self.held and hold and self._awaits_shape():
                # After a held message: a task event or a subagent's message about its
                # call keeps its place (a task_started went out before system/init and
                # its call, on 2.1.332 under load).
                self.held.append(event)
                continue
            if event.get("subtype") in (hook_events.STARTED, hook_events.RESPONSE, *TASK_EVENTS):
                self.emitter.event(event)  # claude -p reports these before system/init
                continue
            if event.get("parent_tool_use_id"):
                self.emitter.event(event)  # a subagent's: not the turn's model, tools, hooks
                continue
            if hold and self._awaits_shape():
                self.held.append(event)
                continue
            if event.get("type") == "assistant":
                model = str(event.get("message", {}).get("model", ""))
                if model and not model.startswith("<"):  # not "<synthetic>" (an API error)
                    self.model = model
                self.init(model)
                self.tool_names.update(tool_names(event))
            self.init("")
            if event.get("type") == "user" and self.facts().permission_denied_event:
                for tool_use_id in denied_tool_use_ids(event):
                    self.emitter.event(self.permission_denied(tool_use_id))
            self.emitter.event(event)
            if event.get("type") == "assistant":
                self.release_hooks()  # the user's hooks for the tools it calls

    def permission_denied(self, tool_use_id: str) -> Dict[str, Any]:
        """stream-json's note on a denied tool (2.1.238 on), before its tool result."""
        return {
            "type": "system",
            "subtype": "permission_denied",
            "tool_name": self.tool_names.get(tool_use_id, ""),
            "tool_use_id": tool_use_id,
            "message": contract.DENY_MESSAGE,
            "uuid": random_uuid(),
            "session_id": self.session_id,
        }


def init_events(
    asked_model: str,
    permission_mode: str,
    session_id: str,
    model: str,
    claude_version: str,
    transcript_path: Optional[str],
    replay: Optional[Dict[str, Any]],
    records: List[Dict[str, Any]],
    session_records: List[Dict[str, Any]],
    mcp_servers: List[str],
) -> List[Dict[str, Any]]:
    """A turn's first lines: `system/init`, then (--replay-user-messages) the user
    message it answers, as the CLI echoes it."""
    from claude_print.printing.stream import init_event
    from claude_print.records.session_info import session_lists

    memory = (
        os.path.join(os.path.dirname(transcript_path), "memory", "") if transcript_path else None
    )
    lists = session_lists(session_records)
    events = [
        init_event(
            cwd=os.getcwd(),
            session_id=session_id,
            model=model or asked_model,
            permission_mode=permission_mode,
            claude_version=claude_version,
            api_key_source="ANTHROPIC_API_KEY" if os.environ.get("ANTHROPIC_API_KEY") else "none",
            analytics_disabled=bool(os.environ.get("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC")),
            memory_paths={"auto": memory} if memory else None,
            tools=lists["tools"],
            mcp_servers=[{"name": name, "status": "connected"} for name in mcp_servers],
            agents=lists["agents"],
            skills=lists["skills"],
        )
    ]
    if replay is not None:
        from claude_print.records.transcript import is_human_prompt
        from claude_print.sdk.user_events import replay_event

        prompts = [r for r in records if is_human_prompt(r)]
        events.append(replay_event(replay, session_id, prompts[0] if prompts else None))
    return events


def announced_model(record: Dict[str, Any]) -> Optional[str]:
    """The model a `model` attachment says the turn uses (2.1.270 on), if this is one."""
    attachment = record.get("attachment")
    if record.get("type") != "attachment" or not isinstance(attachment, dict):
        return None
    identity = attachment.get("identity") if attachment.get("type") == "model" else None
    model = identity.get("modelId") if isinstance(identity, dict) else None
    return model if isinstance(model, str) and model else None


def tool_names(event: Dict[str, Any]) -> Dict[str, str]:
    content = event.get("message", {}).get("content")
    blocks = content if isinstance(content, list) else []
    return {
        str(b.get("id")): str(b.get("name"))
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "tool_use"
    }


def denied_tool_use_ids(event: Dict[str, Any]) -> List[str]:
    """Tool results that carry claude-print's own PermissionRequest denial."""
    content = event.get("message", {}).get("content")
    blocks = content if isinstance(content, list) else []
    return [
        str(b.get("tool_use_id"))
        for b in blocks
        if isinstance(b, dict)
        and b.get("type") == "tool_result"
        and b.get("is_error")
        and b.get("content") == contract.DENY_MESSAGE
    ]
