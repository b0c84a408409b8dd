"""The turn's end: from the transcript's summary to `claude -p`'s result object.

Each way a turn ends has its builder here (finished, cut short by --max-turns, the
budget or the structured-output retries, stopped by a user's hook, interrupted, refused);
each returns an `Ending` (the object, the exit code, an optional last step for the
conformed object). They are plain functions of the summary and the turn's context: the
orchestrator settles the cost and flushes the stream first, then emits what they build.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, NamedTuple, Optional

from claude_print import contract
from claude_print.errors import EXIT_ASSISTANT_ERROR, EXIT_OK, ClaudePrintError
from claude_print.turns.turn import Turn, denials_with_ids

if TYPE_CHECKING:
    from claude_print.hooks.relay import HookEvent
    from claude_print.records.summary import TurnSummary
    from claude_print.records.transcript import Record

Finish = Callable[[Dict[str, Any]], Dict[str, Any]]
# `claude -p`'s error for an interrupted turn (2.1.197 and 2.1.330 alike).
INTERRUPT_DIAGNOSTIC = "[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=null"


class Ending(NamedTuple):
    obj: Dict[str, Any]
    code: int
    finish: Optional[Finish] = None  # applied to the conformed object (structured output)


class Context(NamedTuple):
    """What every result names: the session, the release, the turn and its clock."""

    session_id: str
    claude_version: str
    facts: contract.Facts
    turn: Turn
    now: float
    model_usage_key: Optional[str] = None  # the default model's key (no model asked for)

    @property
    def duration_ms(self) -> int:
        return int((self.now - self.turn.started) * 1000)


def context(
    session_id: str, claude_version: str, facts: contract.Facts, turn: Turn, model_asked: bool
) -> Context:
    """The context now; with no model asked for, modelUsage is keyed as `claude -p` keys
    the default model (e.g. "...[1m]")."""
    key = None
    if not model_asked:
        from claude_print.printing.output import default_model_usage_key

        key = default_model_usage_key(claude_version)
    return Context(session_id, claude_version, facts, turn, time.monotonic(), key)


def denials(summary: TurnSummary, turn: Turn) -> List[Dict[str, Any]]:
    """`permission_denials`: the transcript's, else the PermissionRequests claude-print
    denied. A user's PermissionRequest hook may allow first (it races claude-print's
    deny): a tool that ran was not denied."""
    if summary.permission_denials:
        return summary.permission_denials
    ran = {r["tool_use_id"] for r in summary.tool_results if not r["is_error"]}
    found = denials_with_ids(turn.denials, summary.tool_uses)
    return [d for d in found if d["tool_use_id"] not in ran]


def _success(summary: TurnSummary, ctx: Context) -> Dict[str, Any]:
    from claude_print.printing.output import result_object

    return result_object(
        summary,
        session_id=ctx.session_id,
        duration_ms=ctx.duration_ms,
        duration_api_ms=summary.api_duration_ms,
        permission_denials=denials(summary, ctx.turn),
        claude_version=ctx.claude_version,
        model_usage_key=ctx.model_usage_key,
    )


def finished(
    summary: TurnSummary, ctx: Context, stop: HookEvent, terminal_reason: Optional[str] = None
) -> Ending:
    """After Stop or StopFailure; an incomplete transcript falls back on the hook's
    last_assistant_message."""
    if not summary.complete:
        fallback = stop.payload.get("last_assistant_message")
        if not isinstance(fallback, str):
            raise ClaudePrintError("the turn ended but its transcript has no answer")
        summary.result_text = fallback
        summary.is_api_error = summary.is_api_error or stop.name == contract.HOOK_STOP_FAILURE
    obj = _success(summary, ctx)
    if summary.origin is not None:  # as the TUI recorded it: the release's own keys
        obj["origin"] = summary.origin
    if terminal_reason is not None:
        obj["terminal_reason"] = terminal_reason
    return Ending(obj, EXIT_ASSISTANT_ERROR if obj["is_error"] else EXIT_OK)


def structured(summary: TurnSummary, ctx: Context, value: Dict[str, Any]) -> Ending:
    """--json-schema: the server accepted a call."""
    from claude_print.mcp import mcp_structured as ms

    version = contract.parse_version(ctx.claude_version) or (99,)
    summary.stop_reason = "tool_use"
    return Ending(
        _success(summary, ctx), EXIT_OK, lambda o: ms.with_structured_output(o, value, version)
    )


def structured_retries(
    summary: TurnSummary, ctx: Context, failed: int, records: List[Record]
) -> Ending:
    """--json-schema: the server rejected the last allowed call."""
    from claude_print.mcp import mcp_structured as ms
    from claude_print.printing.output import ERROR_MAX_STRUCTURED_OUTPUT_RETRIES

    version = contract.parse_version(ctx.claude_version) or (99,)
    message = ms.retries_message(
        failed, ms.last_failure(records), detailed=version >= ms.DETAILED_FROM
    )
    reason = ms.RETRY_TERMINAL_REASON if ctx.facts.limit_terminal_reasons else None
    return cut_short(
        summary,
        ctx,
        ERROR_MAX_STRUCTURED_OUTPUT_RETRIES,
        message,
        summary.num_turns,
        reason,
        usage=summary.usage,
    )


def max_turns(summary: TurnSummary, ctx: Context, limit: int) -> Ending:
    """`claude -p` stops before the API call that would pass the limit; so do we."""
    from claude_print.printing.output import ERROR_MAX_TURNS

    message = f"Reached maximum number of turns ({limit})"
    return cut_short(
        summary, ctx, ERROR_MAX_TURNS, message, limit + 1, "max_turns", usage=summary.usage
    )


def budget_exhausted(summary: TurnSummary, ctx: Context, budget: float) -> Ending:
    """`claude -p --max-budget-usd`: the result of the call that reached the budget,
    with its cost but zero `usage` and API time, as `claude -p` reports it."""
    from claude_print.printing.output import ERROR_MAX_BUDGET_USD, budget_message

    reason = "budget_exhausted" if ctx.facts.limit_terminal_reasons else None
    return cut_short(
        summary, ctx, ERROR_MAX_BUDGET_USD, budget_message(budget), summary.num_turns, reason
    )


def stopped_by_hook(summary: TurnSummary, ctx: Context, message: Optional[str]) -> Ending:
    """A user's hook ended the turn: UserPromptSubmit blocked or stopped the prompt
    (`message`: the TUI's words, `claude -p`'s result, 0 turns, no terminal_reason), or
    a tool hook said `continue: false` (terminal_reason "hook_stopped"). Success."""
    obj = _success(summary, ctx)
    if message is None:
        obj["terminal_reason"] = "hook_stopped"
    else:
        obj.pop("terminal_reason", None)
    return Ending(obj, EXIT_OK)


def interrupted(summary: TurnSummary, ctx: Context) -> Ending:
    """As `claude -p`: an error result that counts the prompt and the interruption as
    two turns and drops the call's cost."""
    from claude_print.printing.output import ERROR_DURING_EXECUTION

    summary.total_cost_usd = 0.0
    summary.model_usage = {}
    summary.stop_reason = None
    return cut_short(
        summary, ctx, ERROR_DURING_EXECUTION, INTERRUPT_DIAGNOSTIC, 2, "aborted_streaming"
    )


def refused(ctx: Context, message: str) -> Ending:
    """A stream-json message the TUI cannot take: an error result for it alone."""
    from claude_print.printing.output import ERROR_DURING_EXECUTION, error_object

    obj = error_object(
        ERROR_DURING_EXECUTION,
        message,
        session_id=ctx.session_id,
        duration_ms=0,
        claude_version=ctx.claude_version,
    )
    return Ending(obj, EXIT_ASSISTANT_ERROR)


def cut_short(
    summary: TurnSummary,
    ctx: Context,
    subtype: str,
    message: str,
    num_turns: int,
    terminal_reason: Optional[str],
    usage: Optional[Dict[str, Any]] = None,
) -> Ending:
    """An error result for a turn claude-print ended on `claude -p`'s terms."""
    from claude_print.printing.output import error_object, keyed_model_usage

    obj = error_object(
        subtype,
        message,
        session_id=ctx.session_id,
        duration_ms=ctx.duration_ms,
        num_turns=num_turns,
        usage=usage,
        total_cost_usd=summary.total_cost_usd,
        model_usage=keyed_model_usage(summary, ctx.model_usage_key),
        permission_denials=denials(summary, ctx.turn),
        stop_reason=summary.stop_reason,
        claude_version=ctx.claude_version,
        terminal_reason=terminal_reason,
    )
    return Ending(obj, EXIT_ASSISTANT_ERROR)


# modelUsage entries that describe the model rather than count its use.
_MODEL_FACTS = ("contextWindow", "maxOutputTokens")


class SessionTotals:
    """stream-json input: each result carries the session's cost and model usage so
    far and `result_index` counts the results, as `claude -p` does."""

    def __init__(self) -> None:
        self.cost_usd = 0.0
        self.models: Dict[str, Dict[str, Any]] = {}

    def add(self, result: Dict[str, Any], index: int) -> Dict[str, Any]:
        turn_usage = result.get("modelUsage") or {}
        self.cost_usd += float(result.get("total_cost_usd") or 0)
        for model, usage in turn_usage.items():
            entry = self.models.setdefault(model, {})
            for key, value in usage.items():
                counts = isinstance(value, (int, float)) and not isinstance(value, bool)
                if counts and key not in _MODEL_FACTS and isinstance(entry.get(key), (int, float)):
                    entry[key] = entry[key] + value
                else:
                    entry[key] = value
        out = dict(result)
        replace = {
            "total_cost_usd": self.cost_usd,
            "modelUsage": {m: dict(u) for m, u in self.models.items()},
            "model_usage_since_last_result": turn_usage,
            "result_index": index,
        }
        out.update({k: v for k, v in replace.items() if k in out})
        return out
