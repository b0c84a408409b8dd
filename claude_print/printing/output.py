"""The `result` object and the text / json renderings of `claude -p` (2.1.197).

Key sets, key order and value types follow `claude -p --output-format json`
exactly (pinned by tests against real outputs), plus one trailing key,
`claude_version`, naming the Claude Code version that ran the TUI.

Fields the TUI does not tell us, filled in best effort with the right type:

- `duration_api_ms`: what the caller passes (for instance the transcript
  estimate `TurnSummary.api_duration_ms`).
- `ttft_ms`, `ttft_stream_ms`, `time_to_request_ms` (success only, as in
  `claude -p`): measured from `started_at` (claude-print's start) to the first
  answer record / the prompt record of the transcript; without `started_at`,
  from the prompt record (so `time_to_request_ms` is 0).
- `total_cost_usd`, `modelUsage[*].costUSD`, `contextWindow`,
  `maxOutputTokens`: recomputed by `claude_print.records.pricing`.
- `modelUsage` keys: `claude -p` keys by the *requested* model (e.g.
  "claude-opus-4-8[1m]") while transcripts record the model that answered
  ("claude-opus-4-8"); pass `model_usage_key` to key entries of the same family
  by the requested id.
- `terminal_reason`: "completed" on success; `fast_mode_state`: "off" unless
  given; `uuid`: a fresh uuid4 (the TUI has no result record).
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from claude_print import contract
from claude_print.ids import random_uuid
from claude_print.jsjson import js_number as js_number
from claude_print.jsjson import to_js_json as to_js_json
from claude_print.records import pricing
from claude_print.records.summary import TurnSummary, model_usage_entry, zero_usage

SUBTYPE_SUCCESS = "success"
# claude -p's own error subtypes and claude-print's additions.
ERROR_MAX_TURNS = "error_max_turns"
ERROR_DURING_EXECUTION = "error_during_execution"
ERROR_MAX_BUDGET_USD = "error_max_budget_usd"
ERROR_MAX_STRUCTURED_OUTPUT_RETRIES = "error_max_structured_output_retries"
ERROR_TIMEOUT = "error_timeout"  # claude-print only
ERROR_INTERRUPTED = "error_interrupted"  # claude-print only

# `terminal_reason` when the caller does not say; None leaves the key out,
# as `claude -p` does when its query loop was bypassed or stopped from outside.
_DEFAULT_TERMINAL_REASON: Dict[str, Optional[str]] = {
    ERROR_MAX_TURNS: "max_turns",
    ERROR_MAX_BUDGET_USD: "budget_exhausted",
    ERROR_MAX_STRUCTURED_OUTPUT_RETRIES: "structured_output_retry_exhausted",
    ERROR_TIMEOUT: "aborted_streaming",
    ERROR_INTERRUPTED: "aborted_streaming",
}
_UNSET = "\0unset"

# `claude -p` text mode for error subtypes (written without a newline).
_TEXT_FOR_SUBTYPE = {
    ERROR_DURING_EXECUTION: "Execution error",
    ERROR_MAX_STRUCTURED_OUTPUT_RETRIES: (
        "Error: Failed to provide valid structured output after maximum retries"
    ),
}


def _clamp(value: Optional[int], upper: int) -> int:
    return max(0, min(value if value is not None else 0, max(upper, 0)))


def keyed_model_usage(summary: TurnSummary, key: Optional[str]) -> Dict[str, Dict[str, Any]]:
    """`modelUsage`, the entries of `key`'s family keyed by `key` (claude -p's name)."""
    if not key:
        return {model: dict(entry) for model, entry in summary.model_usage.items()}
    family = pricing.canonical_model(key)
    out: Dict[str, Dict[str, Any]] = {}
    for model, entry in summary.model_usage.items():
        target = key if pricing.canonical_model(model) == family else model
        if target not in out:
            out[target] = model_usage_entry(target)
        merged = out[target]
        for name in (
            "inputTokens",
            "outputTokens",
            "cacheReadInputTokens",
            "cacheCreationInputTokens",
            "webSearchRequests",
            "costUSD",
        ):
            merged[name] += entry[name]
    return out


def result_object(
    summary: TurnSummary,
    *,
    session_id: str,
    duration_ms: int,
    duration_api_ms: int,
    permission_denials: List[Dict[str, Any]],
    claude_version: str,
    model_usage_key: Optional[str] = None,
    started_at: Optional[float] = None,
    ttft_ms: Optional[int] = None,
    ttft_stream_ms: Optional[int] = None,
    time_to_request_ms: Optional[int] = None,
    fast_mode_state: str = "off",
) -> Dict[str, Any]:
    """The `claude -p --output-format json` object for a finished turn.

    `started_at` is claude-print's start (epoch seconds) for the timing fields.
    """
    is_error = summary.is_api_error
    obj: Dict[str, Any] = {
        "type": "result",
        "subtype": SUBTYPE_SUCCESS,
        "is_error": is_error,
        "api_error_status": summary.api_error_status,
        "duration_ms": duration_ms,
        "duration_api_ms": duration_api_ms,
    }
    if is_error:
        obj["api_error_type"] = api_error_type(summary.api_error_status)
        if summary.api_error:
            obj["api_error"] = summary.api_error
        if summary.api_error_status == contract.TOO_LARGE_STATUS:
            obj["terminal_reason"] = contract.TOO_LARGE_TERMINAL_REASON
    else:  # claude -p leaves the timings out of API-error results
        origin = summary.prompt_at_ms
        if started_at is not None:
            origin = int(started_at * 1000)
        first = summary.first_answer_at_ms
        prompt = summary.prompt_at_ms
        if ttft_ms is None:
            ttft_ms = _clamp(
                first - origin if first is not None and origin is not None else 0, duration_ms
            )
        if time_to_request_ms is None:
            time_to_request_ms = _clamp(
                prompt - origin if prompt is not None and origin is not None else 0, ttft_ms
            )
        obj["ttft_ms"] = ttft_ms
        obj["ttft_stream_ms"] = ttft_ms if ttft_stream_ms is None else ttft_stream_ms
        obj["time_to_request_ms"] = time_to_request_ms
        obj["first_content_frame_ms"] = obj["ttft_stream_ms"]  # 2.1.260 on
    obj.update(
        {
            "num_turns": summary.num_turns,
            "result": summary.result_text,
            "stop_reason": summary.stop_reason,
            "session_id": session_id,
            "total_cost_usd": summary.total_cost_usd,
            "usage": summary.usage,
            "modelUsage": keyed_model_usage(summary, model_usage_key),
            "permission_denials": permission_denials,
            # An API error's reason differs by release ("completed" up to 2.1.205, then
            # "api_error"): conform() takes it from the release's shape.
            **({} if is_error else {"terminal_reason": "completed"}),
            "fast_mode_state": fast_mode_state,
            "uuid": random_uuid(),
            "claude_version": claude_version,
        }
    )
    return obj


def error_object(
    subtype: str,
    message: str,
    *,
    session_id: str,
    duration_ms: int,
    claude_version: str,
    num_turns: int = 0,
    usage: Optional[Dict[str, Any]] = None,
    terminal_reason: Optional[str] = _UNSET,
    duration_api_ms: int = 0,
    stop_reason: Optional[str] = None,
    total_cost_usd: float = 0.0,
    model_usage: Optional[Dict[str, Dict[str, Any]]] = None,
    permission_denials: Optional[List[Dict[str, Any]]] = None,
    errors: Optional[List[str]] = None,
    fast_mode_state: str = "off",
) -> Dict[str, Any]:
    """The shape `claude -p` uses for error subtypes: `errors: [...]`, no `result`.

    `terminal_reason` defaults by subtype ("max_turns", "aborted_streaming"
    for timeout / interrupt); None leaves the key out.
    """
    reason = _DEFAULT_TERMINAL_REASON.get(subtype) if terminal_reason == _UNSET else terminal_reason
    obj: Dict[str, Any] = {
        "type": "result",
        "subtype": subtype,
        "duration_ms": duration_ms,
        "duration_api_ms": duration_api_ms,
        "is_error": True,
        "num_turns": num_turns,
        "stop_reason": stop_reason,
        "session_id": session_id,
        "total_cost_usd": total_cost_usd,
        "usage": usage if usage is not None else zero_usage(),
        "modelUsage": model_usage if model_usage is not None else {},
        "permission_denials": permission_denials if permission_denials is not None else [],
    }
    if reason is not None:
        obj["terminal_reason"] = reason
    obj["fast_mode_state"] = fast_mode_state
    obj["uuid"] = random_uuid()
    obj["errors"] = errors if errors is not None else [message]
    obj["claude_version"] = claude_version
    return obj


def render_text(
    obj: Dict[str, Any],
    *,
    max_turns: Optional[int] = None,
    max_budget_usd: Optional[float] = None,
) -> str:
    """What `claude -p --output-format text` writes to stdout for `obj`.

    Success (API errors included): the result plus a newline unless it already
    ends with one. Error subtypes: `claude -p`'s fixed message *without* a
    newline. claude-print's own subtypes print nothing here (the caller
    reports them on stderr), as `claude -p` prints nothing for unknown ones.
    """
    subtype = obj.get("subtype")
    if subtype == SUBTYPE_SUCCESS:
        result = str(obj.get("result", ""))
        return result if result.endswith("\n") else result + "\n"
    if subtype == ERROR_MAX_TURNS:
        if max_turns is None:
            max_turns = _number_in_errors(obj)
        return f"Error: Reached max turns ({max_turns if max_turns is not None else ''})"
    if subtype == ERROR_MAX_STRUCTURED_OUTPUT_RETRIES and " \u2014 " in str(
        (obj.get("errors") or [""])[0]
    ):
        # Releases that name the last error print it (2.1.260 on; older: the fixed text).
        return f"Error: {obj['errors'][0]}"
    if subtype == ERROR_MAX_BUDGET_USD:
        budget = _budget_in_errors(obj) if max_budget_usd is None else js_number(max_budget_usd)
        return f"Error: Exceeded USD budget ({budget})"
    return _TEXT_FOR_SUBTYPE.get(str(subtype), "")


def _number_in_errors(obj: Dict[str, Any]) -> Optional[int]:
    errors = obj.get("errors")
    for error in errors if isinstance(errors, list) else []:
        match = re.search(r"\((\d+)\)", str(error))
        if match:
            return int(match.group(1))
    return None


def budget_message(max_budget_usd: float) -> str:
    """`claude -p`'s `errors` entry for --max-budget-usd (the amount as JavaScript prints it)."""
    return f"Reached maximum budget (${js_number(max_budget_usd)})"


def _budget_in_errors(obj: Dict[str, Any]) -> str:
    errors = obj.get("errors")
    for error in errors if isinstance(errors, list) else []:
        match = re.search(r"\(\$([^)]*)\)", str(error))
        if match:
            return match.group(1)
    return ""


def render_json(obj: Any) -> str:
    """`JSON.stringify(obj)` plus the newline `claude -p` writes after it."""
    return to_js_json(obj) + "\n"


# --- shapes of the running release -------------------------------------------

# Keys claude-print adds after whatever the release prints.
OWN_KEYS = ("claude_version",)
# Keys the captures show only in some results, kept right after the first of their
# anchors the shape has when the result has them: a usage limit's `api_error`, which the
# transcript carries (`apiError`) exactly on the releases whose `claude -p` prints it
# (2.1.300 on).
# Keys `claude -p` prints only on some events of a kind: a tool result's meta only for
# a refusal, so the captured shape's empty default is never filled in.
_ONLY_WHEN_GIVEN = ("tool_result_meta",)
_OPTIONAL_AFTER = {
    "api_error": ("api_error_type", "api_error_status"),
    "tool_use_meta": ("timestamp", "uuid"),  # an MCP tool call's display names
    # The result of a turn started by a background task's notification (2.1.332).
    "origin": ("fast_mode_disabled_reason", "fast_mode_state"),
}
# Nested objects whose keys follow the release's order too.
_NESTED = ("usage", "server_tool_use", "cache_creation", "output_tokens_details")
_API_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


# One session, one result: the usage since the last result is all of it.
_STREAM_EXTRA = {"model_usage_since_last_result": lambda obj: obj.get("modelUsage", {})}


def api_error_type(status: Optional[int]) -> str:
    """The Messages API's error `type` for an HTTP status (`claude -p` 2.1.330 prints it)."""
    return _API_ERROR_TYPES.get(status or 0, "api_error")


def shape_for(release: str) -> Dict[str, Any]:
    """The captured `claude -p` shape of the newest release at or below `release` (the
    newest of all for an unknown one, the oldest for an older one)."""
    from claude_print.contract import parse_version
    from claude_print.printing.shapes import SHAPES

    wanted = parse_version(release)
    releases = list(SHAPES)
    chosen = releases[-1] if wanted is None else releases[0]
    for name in releases:
        parsed = parse_version(name)
        if wanted is not None and parsed is not None and parsed <= wanted:
            chosen = name
    return SHAPES[chosen]


def default_model_usage_key(release: str) -> Optional[str]:
    """How the release's `claude -p` keys `modelUsage` for its default model (from the
    capture: "claude-opus-4-8[1m]" on 2.1.197, "claude-opus-5[1m]" on 2.1.270, where the
    transcript says "claude-opus-4-8" / "claude-opus-5")."""
    captured = shape_for(release).get("result_success", {}).get("modelUsage") or {}
    return next(iter(captured), None)


def shape_name(event: Dict[str, Any]) -> Optional[str]:
    kind = event.get("type")
    if kind == "result":
        if event.get("subtype") != SUBTYPE_SUCCESS:
            return "result_error"
        return "result_api_error" if event.get("is_error") else "result_success"
    if kind == "system":
        return "init" if event.get("subtype") == "init" else None
    if kind == "assistant" and "error" in event:
        return "assistant_api_error"
    if kind == "user" and event.get("isReplay"):
        return None  # --replay-user-messages: the same keys on every release (measured)
    if event.get("parent_tool_use_id"):
        return None  # a subagent's message, in its release's keys (turns/subagent_stream.py)
    return kind if kind in ("assistant", "user") else None


def conform(event: Dict[str, Any], release: str, streamed: bool = False) -> Dict[str, Any]:
    """`event` with the key set and order the release's `claude -p` prints: values from
    `event` where it has them, else the captured best-effort value of the right type.
    `streamed`: a result in an event stream (stream-json, json --verbose), which some
    releases print with more keys (`model_usage_since_last_result`, 2.1.309 on)."""
    name = shape_name(event)
    shape = shape_for(release)
    if name == "result_error" and f"result_{event.get('subtype')}" in shape:
        name = f"result_{event.get('subtype')}"  # a subtype with its own key order
    skeleton = shape.get(name or "") if name else None
    if skeleton is None:
        return event
    out = _conform(event, skeleton)
    for key in _ONLY_WHEN_GIVEN:
        if key not in event:
            out.pop(key, None)
    if name and name.startswith("result_error") and "terminal_reason" not in event:
        # Left out on purpose (error_object): e.g. a budget stop before 2.1.221.
        out.pop("terminal_reason", None)
    if streamed and event.get("type") == "result":
        own = {k: out.pop(k) for k in OWN_KEYS if k in out}
        for key, default in shape.get("result_stream_extra", {}).items():
            out[key] = _STREAM_EXTRA[key](out) if key in _STREAM_EXTRA else default
        out.update(own)
    for key, anchors in _OPTIONAL_AFTER.items():
        if key not in event or key in out:
            continue
        anchor = next((a for a in anchors if a in out), None)
        if anchor is not None:
            items = list(out.items())
            at = [k for k, _ in items].index(anchor) + 1
            out = dict([*items[:at], (key, event[key]), *items[at:]])
    return out


def _conform(ours: Dict[str, Any], skeleton: Dict[str, Any]) -> Dict[str, Any]:
    import copy

    out: Dict[str, Any] = {}
    for key, default in skeleton.items():
        value = ours[key] if key in ours else copy.deepcopy(default)
        if key == "modelUsage" and isinstance(value, dict) and isinstance(default, dict):
            value = _conform_model_usage(value, default)
        elif key in _NESTED and isinstance(value, dict) and isinstance(default, dict) and default:
            value = _conform(value, default)
        out[key] = value
    for key in OWN_KEYS:
        if key in ours:
            out[key] = ours[key]
    return out


def _conform_model_usage(
    ours: Dict[str, Dict[str, Any]], captured: Dict[str, Dict[str, Any]]
) -> Dict[str, Dict[str, Any]]:
    if not captured:
        return ours
    (captured_model, entry), *_ = captured.items()
    out = {}
    for model, usage in ours.items():
        known = dict(usage)
        family = pricing.canonical_model(model)
        known.setdefault("canonicalModel", family)
        if family == pricing.canonical_model(captured_model):
            # The release's own limits for its captured model beat the fallback table.
            known["contextWindow"] = entry.get("contextWindow", known.get("contextWindow"))
            known["maxOutputTokens"] = entry.get("maxOutputTokens", known.get("maxOutputTokens"))
        out[model] = _conform(known, entry)
    return out
