"""The input side of `--input-format stream-json`: NDJSON on stdin, as the Claude Agent
SDK speaks it (docs/agent-sdk-protocol.md).

The caller sends `control_request`s (`initialize`, `interrupt`, ...) and `user` messages;
each `user` message is one turn of the same TUI session. claude-print sends its own
`control_request`s back on stdout (`can_use_tool`, `hook_callback`) and reads the
caller's `control_response`s. This module parses and answers; the runner decides when.
"""

from __future__ import annotations

import json
import os
import select
import time
from collections import deque
from typing import (
    Any,
    Callable,
    Deque,
    Dict,
    List,
    NamedTuple,
    Optional,
    Tuple,
)

from claude_print import contract
from claude_print.errors import EXIT_INTERRUPTED, ClaudePrintError
from claude_print.hooks.hook_settings import ExtraHook
from claude_print.ids import random_uuid
from claude_print.printing.emit import Emitter
from claude_print.sdk.answers import SdkHook, sdk_hooks
from claude_print.tui.images import PLACEHOLDER, Image, blocks_of

MAX_LINE = 16 * 1024 * 1024  # one message; a bigger one is an error, not a hang
SDK_HOOK_TAG = "sdk"  # relay hooks the caller registered at `initialize`

Answer = Callable[[Dict[str, Any]], None]


class Prompt(NamedTuple):
    """A `user` message to type into the TUI (text None: stdin ended)."""

    text: Optional[str]
    arrived: float
    error: str = ""  # a message the TUI cannot take (documents, ...): its turn fails with this
    message: Optional[Dict[str, Any]] = None  # as it came (--replay-user-messages)
    images: Tuple[Image, ...] = ()  # pasted after the text (images.py)


def user_text(message: Dict[str, Any]) -> Tuple[str, str, Tuple[Image, ...]]:
    """(prompt, error, images) of a `user` message: its string content, or its text blocks
    one after another and its images (`images`); blocks the TUI cannot take make the error."""
    inner = message.get("message")
    content = inner.get("content") if isinstance(inner, dict) else None
    if isinstance(content, str):
        return content, "", ()
    if not isinstance(content, list):
        return "", "a user message needs message.content: a string or a list of content blocks", ()
    texts, images, problem = blocks_of(content)
    if problem:
        return "", problem, ()
    text = "\n\n".join(texts)
    if images and PLACEHOLDER.search(text):
        return (
            "",
            (
                "a message with images cannot also have text like '[Image #1]': Claude Code's "
                "input box takes it as a pasted image's mark"
            ),
            (),
        )
    return text, "", tuple(images)


def success(request_id: str, response: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    body: Dict[str, Any] = {"subtype": "success", "request_id": request_id}
    if response is not None:
        body["response"] = response
    return {"type": "control_response", "response": body}


def error(request_id: str, message: str) -> Dict[str, Any]:
    return {
        "type": "control_response",
        "response": {"subtype": "error", "request_id": request_id, "error": message},
    }


def open_channel(
    emitter: Emitter,
    trace: Callable[[str], None],
    facts: contract.Facts,
    permission_mode: str,
    can_use_tool: bool,
    may_bypass: bool,
    session_id: str,
) -> ControlChannel:
    """The channel of a run with `--input-format stream-json`, given the run's plan's
    choices (run_plan.RunPlan): the channel needs those, not the command line."""
    channel = ControlChannel(emitter, trace, facts, permission_mode)
    channel.can_use_tool = can_use_tool
    channel.may_bypass = may_bypass
    channel.session_id = session_id
    return channel


class ControlChannel:
    """stdin's messages in, control messages out. `fd` is read only when select says so,
    so stdin stays blocking (its file description may be shared with the caller)."""

    def __init__(
        self,
        emitter: Emitter,
        trace: Callable[[str], None],
        facts: contract.Facts,
        permission_mode: str = "default",
        fd: int = 0,
    ) -> None:
        self.emitter = emitter
        self.facts = facts
        self.permission_mode = permission_mode
        self.trace = trace
        self.fd = fd
        self.reading = True  # False once stdin ended
        self._buffer = b""
        self.prompts: Deque[Prompt] = deque()
        self.hooks: List[SdkHook] = []
        self.tui_flags: List[str] = []  # what `initialize` asks that the TUI takes as flags
        self.can_use_tool = False  # --permission-prompt-tool stdio
        self.mcp_servers: List[str] = []  # --mcp-config's server names (mcp_* requests)
        self.sdk_servers: List[str] = []  # in-process servers named at `initialize`
        self.session_id = ""  # for the lines the channel prints itself
        self.may_bypass = False  # bypassPermissions is in the TUI's Shift+Tab cycle
        self.pending_mode: Optional[str] = None  # set_permission_mode, for the TUI
        self._next_id = 0
        self._waiting: Dict[str, Answer] = {}  # our requests' ids -> what to do with the answer
        self.interrupts: List[str] = []  # request ids of `interrupt`s not yet acted on
        # Which messages that came during a turn join into one (turns/batching.py); None:
        # a turn each (--replay-user-messages, whose folding was not measured).
        self.joinable: Optional[Callable[[Prompt], bool]] = None
        self.given = 0  # prompts handed out

    # --- reading -----------------------------------------------------------------

    def read(self) -> List[Dict[str, Any]]:
        """The messages whose lines are complete (call when select says readable)."""
        try:
            chunk = os.read(self.fd, 1 << 16)
        except BlockingIOError:
            return []
        except OSError as exc:
            raise ClaudePrintError(f"cannot read stdin: {exc.strerror or exc}") from exc
        if not chunk:
            self.reading = False
            chunk = b"\n"  # a last line without its newline still counts
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        if len(self._buffer) > MAX_LINE:
            raise ClaudePrintError(f"stdin: a stream-json line is over {MAX_LINE} bytes")
        return [self._parse(line) for line in lines if line.strip()]

    def wait_first(self, deadline: float, wake_fd: int) -> List[Dict[str, Any]]:
        """Before the spawn: block until the first message (the SDK's `initialize` says
        which hooks to relay), stdin ends, the deadline passes or a signal arrives."""
        while self.reading:
            left = deadline - time.monotonic()
            if left <= 0:
                return []
            ready, _, _ = select.select([self.fd, wake_fd], [], [], left)
            if wake_fd in ready:
                return []
            if self.fd in ready:
                messages = self.read()
                if messages:
                    return messages
        return []

    def take_first(self, deadline: float, wake_fd: int) -> None:
        """Before the spawn: the first message, taken (`wait_first`)."""
        for message in self.wait_first(deadline, wake_fd):
            self.take(message, time.monotonic(), busy=False)

    def take_ready(self, now: float, busy: bool) -> None:
        """The messages stdin has for us now (call when select says readable)."""
        for message in self.read():
            self.take(message, now, busy=busy)

    def next_prompt(self, now: float) -> Optional[Prompt]:
        """Between turns: the next `user` message, the end of stdin, or None to wait."""
        if self.prompts:
            prompt = self.prompts.popleft()
            if self.given and self.joinable is not None:
                prompt = self.fold(prompt, self.joinable)
            self.given += 1
            return prompt
        if not self.reading:
            return Prompt(None, now)
        return None

    def fold(self, first: Prompt, joinable: Callable[[Prompt], bool]) -> Prompt:
        """`first` with the messages that came after it while a turn ran: `claude -p`
        answers those in one turn, their texts joined by a line break (measured on
        2.1.197, 2.1.270 and 2.1.332: four messages written at once gave the first alone,
        then the other three as one prompt). Only messages `joinable` join, from the
        first on; the rest keep a turn each."""
        if not joinable(first):
            return first
        texts = [str(first.text)]
        while self.prompts and joinable(self.prompts[0]):
            texts.append(str(self.prompts.popleft().text))
        return first._replace(text="\n".join(texts)) if len(texts) > 1 else first

    def check_caller(self) -> None:
        if self.caller_gone():
            raise ClaudePrintError(
                "the caller is gone (stdin ended and stdout is closed): stopping Claude Code",
                EXIT_INTERRUPTED,
                "error_interrupted",
            )

    def caller_gone(self) -> bool:
        """stdin has ended and nobody reads stdout any more: the caller died (an SDK
        process killed mid-turn). A plain end of stdin leaves stdout open."""
        if self.reading or self.emitter.fd < 0:
            return False
        poller = select.poll()
        poller.register(self.emitter.fd, 0)  # POLLERR/POLLHUP are always reported
        return self.emitter.broken or any(
            mask & (select.POLLERR | select.POLLHUP) for _, mask in poller.poll(0)
        )

    @staticmethod
    def _parse(line: bytes) -> Dict[str, Any]:
        try:
            message = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ClaudePrintError(
                f"stdin (--input-format stream-json): not a JSON line ({exc}): "
                f"{line[:200].decode('utf-8', 'replace')!r}"
            ) from None
        if not isinstance(message, dict):
            raise ClaudePrintError(
                "stdin (--input-format stream-json): each line must be a JSON object"
            )
        return message

    # --- the protocol --------------------------------------------------------------

    def take(self, message: Dict[str, Any], now: float, busy: bool) -> None:
        """One message from stdin. `busy`: a turn is running (an interrupt has a target)."""
        kind = message.get("type")
        if kind == "user":
            text, problem, images = user_text(message)
            self.prompts.append(Prompt(text, now, problem, message, images))
        elif kind == "control_request":
            self._on_request(message, busy)
        elif kind == "control_response":
            self._on_response(message)
        elif kind == "control_cancel_request":
            self._waiting.pop(str(message.get("request_id")), None)
        elif kind in ("keep_alive", "update_environment_variables"):
            pass
        else:
            self.trace(f"stdin: ignored a {kind!r} message")

    def _on_request(self, message: Dict[str, Any], busy: bool) -> None:
        request_id = str(message.get("request_id", ""))
        request = message.get("request")
        subtype = request.get("subtype") if isinstance(request, dict) else None
        if subtype == "initialize" and isinstance(request, dict):
            self.hooks = sdk_hooks(request)
            self.tui_flags = initialize_flags(request)
            names = request.get("sdkMcpServers")  # the TypeScript SDK's in-process servers
            if isinstance(names, list):
                self.sdk_servers = [n for n in names if isinstance(n, str)]
            ignored = [key for key in IGNORED_AT_INITIALIZE if request.get(key)]
            if ignored:
                self.trace(f"initialize: no effect in the TUI: {', '.join(ignored)}")
            self.emitter.control(success(request_id, self.initialize_response()))
        elif subtype == "interrupt":
            self.emitter.control(self.interrupt_answer(request_id))
            # A prompt still queued here (the TUI booting) is a turn the CLI would have
            # under way: the interrupt is for it, once it has gone in.
            if busy or self.prompts:
                self.interrupts.append(request_id)
        elif subtype == "set_permission_mode" and isinstance(request, dict):
            self._set_permission_mode(request_id, request.get("mode"))
        elif subtype in ANSWERED_AS_THE_CLI and isinstance(request, dict):
            self.emitter.control(self._answer_as_the_cli(request_id, str(subtype), request))
        else:
            self.emitter.control(error(request_id, unsupported(str(subtype))))

    def _set_permission_mode(self, request_id: str, mode: Any) -> None:
        """Answered at once, as the CLI does (`{"mode": M}`, then a `system/status`
        line); the TUI switches before the next prompt (`mode_switch`)."""
        reachable = [
            m for m in contract.MODE_FOOTERS if m != "bypassPermissions" or self.may_bypass
        ]
        if mode not in reachable:
            why = (
                "the session was not started with bypass mode allowed "
                "(--allow-dangerously-skip-permissions)"
                if mode == "bypassPermissions"
                else f"the TUI's Shift+Tab cycle has only {', '.join(reachable)}"
            )
            self.emitter.control(
                error(request_id, unsupported("set_permission_mode") + f" ({why})")
            )
            return
        self.permission_mode = self.pending_mode = str(mode)
        self.emitter.control(success(request_id, {"mode": mode}))
        self.emitter.control(
            {
                "type": "system",
                "subtype": "status",
                "status": None,
                "permissionMode": mode,
                "uuid": random_uuid(),
                "session_id": self.session_id,
            }
        )

    def _answer_as_the_cli(
        self, request_id: str, subtype: str, request: Dict[str, Any]
    ) -> Dict[str, Any]:
        """The control requests whose answer claude-print knows without the TUI: what the
        real CLI answers (docs/agent-sdk-protocol.md, case control_misc)."""
        if subtype == "stop_task":
            return success(request_id, {})  # the CLI's answer, even for an unknown id
        if subtype == "rewind_files":
            if os.environ.get(CHECKPOINTING_VAR):
                return error(request_id, unsupported(subtype))
            return error(request_id, "File rewinding is not enabled.")
        if subtype == "mcp_status":
            servers = [{"name": name, "status": "connected"} for name in self.mcp_servers]
            return success(request_id, {"mcpServers": servers})
        name = request.get("serverName")  # mcp_reconnect, mcp_toggle
        if name not in self.mcp_servers:
            return error(request_id, f"Server not found: {name}")
        return error(request_id, unsupported(subtype))

    def _on_response(self, message: Dict[str, Any]) -> None:
        response = message.get("response")
        if not isinstance(response, dict):
            return
        answer = self._waiting.pop(str(response.get("request_id")), None)
        if answer is None:
            return
        if response.get("subtype") == "success":
            body = response.get("response")
            answer(body if isinstance(body, dict) else {})
        else:
            answer({"error": str(response.get("error") or "the caller answered with an error")})

    def request(self, subtype: str, fields: Dict[str, Any], answer: Answer) -> None:
        """Ask the caller something; `answer` gets its response body."""
        self._next_id += 1
        request_id = f"claude-print-{os.getpid()}-{self._next_id}"
        self._waiting[request_id] = answer
        self.emitter.control(
            {
                "type": "control_request",
                "request_id": request_id,
                "request": {"subtype": subtype, **fields},
            }
        )

    def initialize_response(self) -> Dict[str, Any]:
        """What claude-print can tell at `initialize`, in the CLI's keys and order (the SDK
        keeps it as server info and reads only the hook keys); the lists the TUI does not
        tell claude-print before it starts stay empty, its features' switches are off."""
        source = "ANTHROPIC_API_KEY" if os.environ.get("ANTHROPIC_API_KEY") else "none"
        response: Dict[str, Any] = {
            "commands": [],
            "agents": [],
            "output_style": "default",
            "available_output_styles": ["default"],
        }
        if self.facts.sdk_session_keys:
            config = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.expanduser("~/.claude")
            response["user_output_styles_dir"] = os.path.join(config, "output-styles")
        response.update(
            models=[],
            account={"tokenSource": "none", "apiKeySource": source, "apiProvider": "firstParty"},
            pid=os.getpid(),
        )
        if not self.facts.sdk_session_keys:
            return response
        response.update(
            claude_code_version=self.facts.version,
            current_permission_mode=self.permission_mode,
        )
        if self.hooks:
            response["hooks_applied"] = True
        response.update(
            hook_on_failure_supported=False,
            hooks_when_unanswered_kept=0,
            other_hook_ask_outranks_host=True,
            feedback_mode={"kind": "disabled"},
            analytics_disabled=bool(os.environ.get(contract.NONESSENTIAL_TRAFFIC_VAR)),
        )
        if self.facts.sdk_sandbox_key:
            response["sandbox_enabled"] = False
        response.update(
            remote_control_auto_enable=False,
            remote_control_auto_connect_default=False,
            remote_control_available=False,
            remote_control_auto_on_by_default=False,
            ide_rc_auto_enable_gate=False,
            fast_mode_state="off",
            fast_mode_disabled_reason="sdk_opt_in_required",
            session_state="idle",
            capabilities=[],
        )
        return response

    def interrupt_answer(self, request_id: str) -> Dict[str, Any]:
        return success(request_id, {"still_queued": []} if self.facts.sdk_session_keys else None)

    def relay_hooks(self) -> List[ExtraHook]:
        """The caller's hooks as asking relay entries, each tagged to find it again."""
        return [
            ExtraHook(hook.event, hook.matcher, f"{SDK_HOOK_TAG}:{index}", hook.timeout)
            for index, hook in enumerate(self.hooks)
        ]

    def hook_for(self, tag: str) -> Optional[SdkHook]:
        """The caller's hook a relay event's tag names (None: one of claude-print's)."""
        kind, _, index = tag.partition(":")
        if kind != SDK_HOOK_TAG or not index.isdigit() or int(index) >= len(self.hooks):
            return None
        return self.hooks[int(index)]

    def asking_hooks(self) -> Tuple[str, ...]:
        return (contract.HOOK_PERMISSION_REQUEST,) if self.can_use_tool else ()


def initialize_flags(request: Dict[str, Any]) -> List[str]:
    """The TUI flags for what an `initialize` request sets: the TypeScript SDK sends its
    system prompt here (a list of parts; `[""]` by default, which, like the Python SDK's
    `--system-prompt ""`, leaves the TUI's own prompt), not on the command line."""
    flags: List[str] = []
    prompt = request.get("systemPrompt")
    parts = [prompt] if isinstance(prompt, str) else prompt if isinstance(prompt, list) else []
    text = "".join(part for part in parts if isinstance(part, str))
    if text:
        flags.append(f"--system-prompt={text}")
    append = request.get("appendSystemPrompt")
    if isinstance(append, str) and append:
        flags.append(f"--append-system-prompt={append}")
    agents = request.get("agents")
    if isinstance(agents, dict) and agents:
        flags.append(f"--agents={json.dumps(agents)}")
    return flags


# `initialize` fields the TUI has no way to take (its --exclude-dynamic-system-prompt-
# sections and --forward-subagent-text are print mode's; skills come with settings).
IGNORED_AT_INITIALIZE = (
    "excludeDynamicSections",
    "systemPromptSnapshot",
    "skills",
    "forwardSubagentText",
)


def unsupported(subtype: str) -> str:
    """Why claude-print cannot honour a control request (it never stays silent)."""
    why = UNSUPPORTED_WHY.get(subtype, "claude-print does not know this control request")
    return f"claude-print: {subtype!r} is not supported: {why}"


# Answered as the real CLI answers them (ControlChannel._answer_as_the_cli).
ANSWERED_AS_THE_CLI = ("stop_task", "rewind_files", "mcp_status", "mcp_reconnect", "mcp_toggle")
# The SDK's enable_file_checkpointing: rewinding needs checkpoints the TUI keeps for itself.
CHECKPOINTING_VAR = "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"

UNSUPPORTED_WHY = {
    "set_permission_mode": "the TUI can switch only to a mode of its Shift+Tab cycle",
    "set_model": "the TUI's /model also saves the model as your default for new sessions "
    "(~/.claude/settings.json); pass model in the options instead",
    "set_max_thinking_tokens": "fixed at start; pass it in the options instead",
    "mcp_message": "claude-print sends these; the caller does not",
    "mcp_set_servers": "MCP servers are fixed at start; pass mcp_servers in the options",
    "mcp_reconnect": "the TUI's MCP servers cannot be driven from outside (its /mcp panel)",
    "mcp_toggle": "the TUI's MCP servers cannot be driven from outside (its /mcp panel)",
    "rewind_files": "the TUI's file checkpoints cannot be driven from outside",
    "get_context_usage": "the TUI does not report its context usage to claude-print",
}
