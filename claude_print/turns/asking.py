"""Asking hooks: hook runs that wait for claude-print's decision (relay ask mode).

Which hooks ask, and who decides: claude-print's UserPromptSubmit (the prompt about to be
sent is held against the intended one, `delivery`), PreToolUse and PostToolBatch with
--max-budget-usd (no tool, and no further call, after a call that reached the budget), and
with stream-json input the caller's
PermissionRequest (`can_use_tool`) and the hooks it registered (`hook_callback`). A
decision that depends on the transcript waits (bounded) until the tool call is in it.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from claude_print import contract
from claude_print.errors import ClaudePrintError
from claude_print.hooks.relay import HookEvent
from claude_print.mcp.sdk_mcp import MCP_EVENT, error_response
from claude_print.turns.turn import Turn, denials_with_ids
from claude_print.turns.turn_state import BudgetReached, advance

if TYPE_CHECKING:
    from claude_print.records.summary import TurnSummary
    from claude_print.sdk.answers import SdkHook
    from claude_print.sdk.stream_input import ControlChannel
    from claude_print.tui.delivery import Delivery

# An asking hook waits this long at most for its tool_use to reach the transcript.
ASK_SETTLE = 3.0

Answer = Callable[[HookEvent, Optional[Dict[str, Any]]], None]


class AskingHooks:
    """The asking hook runs not yet answered, and the rules that answer them."""

    def __init__(
        self,
        answer: Answer,
        trace: Callable[[str], None],
        budget: Optional[float] = None,
        channel: Optional[ControlChannel] = None,
    ) -> None:
        self.answer = answer
        self.trace = trace
        self.budget = budget
        self.channel = channel
        self.waiting: List[Tuple[HookEvent, float]] = []

    def add(self, event: HookEvent, now: float) -> None:
        self.waiting.append((event, now))

    def serve(
        self, now: float, turn: Turn, summary: TurnSummary, delivering: Optional[Delivery]
    ) -> None:
        """Answer the runs whose decision is ready; the caller's go to it (stream-json)
        and are answered on its reply."""
        waiting: List[Tuple[HookEvent, float]] = []
        for event, arrived in self.waiting:
            settling = now - arrived < ASK_SETTLE
            channel = self.channel
            sdk_hook = channel.hook_for(event.tag) if channel is not None else None
            if event.name == MCP_EVENT:
                self._relay_mcp(event)
            elif sdk_hook is not None:
                self._ask_sdk_hook(event, sdk_hook, turn)
            elif event.name == contract.HOOK_PERMISSION_REQUEST and channel is not None:
                tool_use_id = tool_use_id_of(event, summary)
                if tool_use_id is None and settling:
                    waiting.append((event, arrived))
                else:
                    self._ask_can_use_tool(event, tool_use_id or "", turn)
            elif event.name == contract.HOOK_USER_PROMPT_SUBMIT:
                self._confirm_prompt(event, delivering)
            elif event.name == contract.HOOK_POST_TOOL_BATCH:
                # --max-budget-usd after a batch: the calls are recorded by now, so a
                # call that reached the budget makes no further one, as in `claude -p`.
                if awaits_tool_use(event, summary) and settling:
                    waiting.append((event, arrived))
                    continue
                main = "agent_id" not in event.payload
                self.answer(event, self._budget_decision(turn, summary) if main else None)
            elif event.name == contract.HOOK_PRE_TOOL_USE:
                if awaits_tool_use(event, summary):
                    if settling:
                        waiting.append((event, arrived))
                        continue
                    # A tool the TUI started while its message still streamed: the TUI
                    # records that message only once this hook has answered. `claude -p`
                    # runs such a tool too (its cost check comes at the message's end).
                    self.trace(
                        f"PreToolUse: its call is not in the transcript after {ASK_SETTLE:g}s "
                        "(a tool started mid-stream): the budget check goes by the cost so far"
                    )
                self.answer(event, self._budget_decision(turn, summary))
            else:
                self.answer(event, None)  # nothing of ours asks about other events
        self.waiting = waiting

    def _confirm_prompt(self, event: HookEvent, delivering: Optional[Delivery]) -> None:
        """The prompt the TUI is about to send: ours, or blocked before any request."""
        if delivering is None or delivering.confirmed:
            self.answer(event, None)  # not a prompt of ours (the TUI's own follow-up)
            return
        sent = event.payload.get("prompt")
        problem = delivering.submitted(sent if isinstance(sent, str) else "")
        if problem is None:
            self.answer(event, None)
            return
        self.answer(event, {"decision": "block", "reason": f"claude-print: {problem}"})
        raise ClaudePrintError(f"the prompt was not sent: {problem}")

    def _budget_decision(self, turn: Turn, summary: TurnSummary) -> Optional[Dict[str, Any]]:
        """--max-budget-usd: `claude -p` checks the cost after each API call and runs
        no tool of a call that reached the budget; the PreToolUse hook stops there too."""
        if self.budget is None or summary.total_cost_usd < self.budget:
            return None
        advance(turn, BudgetReached())
        return dict(contract.BUDGET_STOP)

    def _ask_can_use_tool(self, event: HookEvent, tool_use_id: str, turn: Turn) -> None:
        """`--permission-prompt-tool stdio`: the caller decides (no time limit)."""
        from claude_print.sdk.answers import permission_decision

        assert self.channel is not None
        payload = event.payload
        tool_input = payload.get("tool_input", {})
        denial = {"tool_name": payload.get("tool_name"), "tool_input": tool_input}

        def answered(body: Dict[str, Any]) -> None:
            if "error" in body:
                body = {"behavior": "deny", "message": str(body["error"])}
            if body.get("behavior") != "allow":
                turn.denials.append(denial)
            self.answer(event, permission_decision(body, tool_input))

        description = tool_input.get("description") if isinstance(tool_input, dict) else None
        self.trace(f"can_use_tool {payload.get('tool_name')}: asking the caller")
        self.channel.request(
            "can_use_tool",
            {
                "tool_name": payload.get("tool_name"),
                "display_name": payload.get("tool_name"),
                "input": tool_input,
                "description": description if isinstance(description, str) else "",
                "permission_suggestions": payload.get("permission_suggestions") or [],
                "blocked_path": None,  # the hook's payload does not say
                "tool_use_id": tool_use_id,
            },
            answered,
        )

    def _relay_mcp(self, event: HookEvent) -> None:
        """A JSON-RPC message for one of the caller's in-process MCP servers: to the
        caller as `mcp_message`, its `mcp_response` back to the bridge (`sdk_mcp`)."""
        server = event.payload.get("server_name")
        message = event.payload.get("message")
        if not isinstance(message, dict) or not isinstance(server, str):
            self.answer(event, None)
            return
        if self.channel is None:  # no SDK caller to serve it
            self.answer(event, error_response(message, f"no SDK caller serves {server!r}"))
            return

        def answered(body: Dict[str, Any]) -> None:
            response = body.get("mcp_response")
            if "error" in body or not isinstance(response, dict):
                response = error_response(message, str(body.get("error") or "no mcp_response"))
            self.answer(event, response)

        self.channel.request("mcp_message", {"server_name": server, "message": message}, answered)

    def _ask_sdk_hook(self, event: HookEvent, hook: SdkHook, turn: Turn) -> None:
        """A hook the caller registered at `initialize`: one `hook_callback` per callback
        id; the hook gets their merged outputs once all have answered."""
        from claude_print.sdk.answers import denies_tool, merge_hook_outputs

        assert self.channel is not None
        outputs: Dict[str, Dict[str, Any]] = {}

        def answered(callback_id: str, body: Dict[str, Any]) -> None:
            outputs[callback_id] = {} if "error" in body else body
            if len(outputs) == len(hook.callback_ids):
                merged = merge_hook_outputs([outputs[i] for i in hook.callback_ids])
                if denies_tool(event.name, merged):  # claude -p counts it as a denial
                    turn.denials.append(
                        {
                            "tool_name": event.payload.get("tool_name"),
                            "tool_input": event.payload.get("tool_input", {}),
                        }
                    )
                self.answer(event, merged or None)

        self.trace(f"hook_callback {event.name}: asking the caller ({len(hook.callback_ids)})")
        tool_use_id = event.payload.get("tool_use_id")
        for callback_id in hook.callback_ids:
            self.channel.request(
                "hook_callback",
                {"callback_id": callback_id, "input": event.payload, "tool_use_id": tool_use_id},
                functools.partial(answered, callback_id),
            )


def tool_use_id_of(event: HookEvent, summary: TurnSummary) -> Optional[str]:
    """The id of the tool call a PermissionRequest is about (its payload has none)."""
    found = denials_with_ids(
        [
            {
                "tool_name": event.payload.get("tool_name"),
                "tool_input": event.payload.get("tool_input", {}),
            }
        ],
        summary.tool_uses,
    )
    return found[0]["tool_use_id"] or None


def awaits_tool_use(event: HookEvent, summary: TurnSummary) -> bool:
    """The transcript does not hold the message that asks for this tool (PreToolUse) or
    these tools (PostToolBatch) yet (a subagent's tool calls go to its own transcript:
    nothing to wait for)."""
    payload = event.payload
    if "agent_id" in payload:
        return False
    calls = payload.get("tool_calls")
    if isinstance(calls, list):
        wanted = {call.get("tool_use_id") for call in calls if isinstance(call, dict)}
    else:
        wanted = {payload.get("tool_use_id")}
    recorded = {use.get("id") for use in summary.tool_uses}
    return not wanted <= recorded
