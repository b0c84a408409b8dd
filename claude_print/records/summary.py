"""A turn's summary from its transcript records: the answer, whether the turn is over,
and what it used and cost (`summarise`, `TurnSummary`), as `claude -p` reports them.

The records come from `transcript` (read, ordered, cut to the turn); the facts about
them this relies on are in its docstring. Costs are priced by `pricing`.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from claude_print.records import pricing
from claude_print.records.transcript import (
    FINAL_STOP_REASONS,
    NO_RESULT_TEXTS,
    SYNTHETIC_MODEL,
    Record,
    is_notification_prompt,
    is_turn_prompt,
    print_error_text,
    record_blocks,
    record_content,
    timestamp_ms,
)


def zero_usage() -> Dict[str, Any]:
    """`claude -p`'s usage before any API call (key order matters)."""
    return {
        "input_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 0,
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
        "inference_geo": "",
        "iterations": [],
        "speed": "standard",
    }


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _sub(usage: Dict[str, Any], key: str) -> Dict[str, Any]:
    value = usage.get(key)
    return value if isinstance(value, dict) else {}


def add_usage(total: Dict[str, Any], usage: Dict[str, Any]) -> Dict[str, Any]:
    """Claude Code's per-call accumulation: numbers add up, labels come from the last call."""
    tools, total_tools = _sub(usage, "server_tool_use"), total["server_tool_use"]
    cache, total_cache = _sub(usage, "cache_creation"), total["cache_creation"]

    def label(key: str) -> Any:
        value = usage.get(key)
        return total[key] if value is None else value

    return {
        "input_tokens": total["input_tokens"] + _int(usage.get("input_tokens")),
        "cache_creation_input_tokens": total["cache_creation_input_tokens"]
        + _int(usage.get("cache_creation_input_tokens")),
        "cache_read_input_tokens": total["cache_read_input_tokens"]
        + _int(usage.get("cache_read_input_tokens")),
        "output_tokens": total["output_tokens"] + _int(usage.get("output_tokens")),
        "server_tool_use": {
            "web_search_requests": total_tools["web_search_requests"]
            + _int(tools.get("web_search_requests")),
            "web_fetch_requests": total_tools["web_fetch_requests"]
            + _int(tools.get("web_fetch_requests")),
        },
        "service_tier": label("service_tier"),
        "cache_creation": {
            "ephemeral_1h_input_tokens": total_cache["ephemeral_1h_input_tokens"]
            + _int(cache.get("ephemeral_1h_input_tokens")),
            "ephemeral_5m_input_tokens": total_cache["ephemeral_5m_input_tokens"]
            + _int(cache.get("ephemeral_5m_input_tokens")),
        },
        "inference_geo": label("inference_geo"),
        "iterations": label("iterations"),
        "speed": label("speed"),
    }


def model_usage_entry(model: str) -> Dict[str, Any]:
    """An empty `modelUsage` value for `model` (key order as `claude -p`)."""
    return {
        "inputTokens": 0,
        "outputTokens": 0,
        "cacheReadInputTokens": 0,
        "cacheCreationInputTokens": 0,
        "webSearchRequests": 0,
        "costUSD": 0.0,
        "contextWindow": pricing.context_window(model),
        "maxOutputTokens": pricing.max_output_tokens(model),
    }


def _add_model_usage(entry: Dict[str, Any], usage: Dict[str, Any], cost: float) -> None:
    entry["inputTokens"] += _int(usage.get("input_tokens"))
    entry["outputTokens"] += _int(usage.get("output_tokens"))
    entry["cacheReadInputTokens"] += _int(usage.get("cache_read_input_tokens"))
    entry["cacheCreationInputTokens"] += _int(usage.get("cache_creation_input_tokens"))
    entry["webSearchRequests"] += _int(_sub(usage, "server_tool_use").get("web_search_requests"))
    entry["costUSD"] += cost


class TurnSummary:
    """What one turn amounts to, in `claude -p` terms.

    A plain class, not a dataclass: `dataclasses` imports `inspect` (with `ast`, `dis`
    and `tokenize`), about 10 ms of CPU in every run for this one class."""

    def __init__(self, result_text: str = "", num_turns: int = 0) -> None:
        self.result_text = result_text
        self.is_api_error = False
        self.api_error_status: Optional[int] = None
        self.api_error: Optional[str] = None  # e.g. "usage_limit_reached" (2.1.300 on)
        self.error: Optional[str] = None  # the assistant record's `error` ("unknown", ...)
        self.stop_reason: Optional[str] = None
        self.num_turns = num_turns
        self.usage: Dict[str, Any] = zero_usage()
        self.model_usage: Dict[str, Dict[str, Any]] = {}  # by response model
        self.total_cost_usd = 0.0
        self.models: List[str] = []
        self.complete = False  # a final answer or an API error is in
        self.turn_closed = False  # a `turn_duration` record follows the last answer
        self.tool_uses: List[Dict[str, Any]] = []  # {id, name, input}
        self.tool_results: List[Dict[str, Any]] = []  # {tool_use_id, is_error}
        self.permission_denials: List[Dict[str, Any]] = []  # `claude -p` shape
        self.prompt_uuid: Optional[str] = None
        self.prompt_id: Optional[str] = None  # equals the hooks' prompt_id
        # A turn the TUI started for a background task's notification: its prompt's
        # origin (`{"kind": "task-notification", ...}`), which `claude -p` puts in its result.
        self.origin: Optional[Dict[str, Any]] = None
        self.prompt_at_ms: Optional[int] = None
        self.first_answer_at_ms: Optional[int] = None
        self.last_record_at_ms: Optional[int] = None
        self.api_duration_ms = 0  # best effort: sum over calls of (last block - request parent)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TurnSummary) and vars(self) == vars(other)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in vars(self).items())
        return f"TurnSummary({fields})"


def _last_text(record: Record) -> str:
    """`claude -p`'s result: the last block of the last message, if it is text."""
    blocks = record_blocks(record)
    if not blocks:
        content = record_content(record)
        return content if isinstance(content, str) and content not in NO_RESULT_TEXTS else ""
    last = blocks[-1]
    text = last.get("text")
    if last.get("type") != "text" or not isinstance(text, str) or text in NO_RESULT_TEXTS:
        return ""
    return text


def _closed_after(records: List[Record], last_answer: Optional[Record]) -> bool:
    """Whether a turn_duration record descends from `last_answer` (via system/attachments)."""
    if last_answer is None:
        return False
    by_uuid = {r.get("uuid"): r for r in records if isinstance(r.get("uuid"), str)}
    for record in records:
        if record.get("type") != "system" or record.get("subtype") != "turn_duration":
            continue
        node: Optional[Record] = record
        for _ in range(len(records) + 1):
            if node is None or node is last_answer:
                break
            parent = node.get("parentUuid")
            node = by_uuid.get(parent) if isinstance(parent, str) else None
            if node is not None and node.get("type") in ("user", "assistant"):
                break
        if node is last_answer:
            return True
    return False


def summarise(records: List[Record]) -> TurnSummary:
    """Summarise one turn (the output of `turn_records`, in order)."""
    summary = TurnSummary()
    prompt = next((r for r in records if is_turn_prompt(r)), None)
    if prompt is not None:
        summary.prompt_uuid = prompt.get("uuid")
        prompt_id = prompt.get("promptId")
        summary.prompt_id = prompt_id if isinstance(prompt_id, str) else None
        summary.prompt_at_ms = timestamp_ms(prompt.get("timestamp"))
        origin = prompt.get("origin")
        if is_notification_prompt(prompt) and isinstance(origin, dict):
            summary.origin = dict(origin)
    summary.num_turns = 1
    answers: List[Record] = []
    last_message: Optional[Record] = None  # last user/assistant record, as claude -p's `ho`
    tool_uses: Dict[str, Dict[str, Any]] = {}
    denied_ids: List[str] = []
    for record in records:
        kind = record.get("type")
        stamp = timestamp_ms(record.get("timestamp"))
        if stamp is not None:
            summary.last_record_at_ms = stamp
        if kind == "assistant" and isinstance(record.get("message"), dict):
            answers.append(record)
            last_message = record
            if summary.first_answer_at_ms is None:
                summary.first_answer_at_ms = stamp
            for block in record_blocks(record):
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    use = {
                        "id": block["id"],
                        "name": block.get("name"),
                        "input": block.get("input"),
                    }
                    if block["id"] not in tool_uses:
                        summary.tool_uses.append(use)
                    tool_uses[block["id"]] = use
        elif kind == "user" and record is not prompt:
            # claude -p counts every user message after the prompt, but for what the
            # prompt itself became: a custom command's expansion is a meta message before
            # any answer (measured on 2.1.332: /hello is 1 turn in claude -p).
            if not (record.get("isMeta") and not answers):
                summary.num_turns += 1
            last_message = record
            decision = record.get("permissionDecision")
            if isinstance(decision, dict) and decision.get("decision") == "reject":
                # A hook refused the tool (2.1.331 records it; 2.1.197 does not)
                denied_ids += [
                    str(b.get("tool_use_id"))
                    for b in record_blocks(record)
                    if b.get("type") == "tool_result" and b.get("tool_use_id") not in denied_ids
                ]
            for block in record_blocks(record):
                if block.get("type") == "tool_result":
                    summary.tool_results.append(
                        {
                            "tool_use_id": block.get("tool_use_id"),
                            "is_error": bool(block.get("is_error")),
                        }
                    )
        elif kind == "attachment":
            attachment = record.get("attachment")
            if (
                isinstance(attachment, dict)
                and attachment.get("type") == "hook_permission_decision"
                and attachment.get("decision") == "deny"
                and isinstance(attachment.get("toolUseID"), str)
            ):
                denied_ids.append(attachment["toolUseID"])
    for tool_use_id in denied_ids:
        denied = tool_uses.get(tool_use_id)
        if denied is not None:
            summary.permission_denials.append(
                {
                    "tool_name": denied["name"],
                    "tool_use_id": tool_use_id,
                    "tool_input": denied["input"],
                }
            )
    _summarise_usage(summary, answers)
    summary.api_duration_ms = _api_duration_ms(records, answers)
    if last_message is not None and last_message.get("type") == "assistant":
        summary.result_text = _last_text(last_message)
        summary.is_api_error = bool(last_message.get("isApiErrorMessage"))
        if summary.is_api_error:
            summary.result_text = print_error_text(summary.result_text)
        status = last_message.get("apiErrorStatus")
        summary.api_error_status = status if isinstance(status, int) else None
        detail = last_message.get("apiError")
        summary.api_error = detail if isinstance(detail, str) and detail else None
        error = last_message.get("error")
        summary.error = error if isinstance(error, str) else None
    last_answer = answers[-1] if answers else None
    if last_answer is not None:
        stop = last_answer["message"].get("stop_reason")
        summary.stop_reason = stop if isinstance(stop, str) else None
    summary.turn_closed = _closed_after(records, last_answer)
    has_tool_use = last_answer is not None and any(
        b.get("type") == "tool_use" for b in record_blocks(last_answer)
    )
    summary.complete = last_message is last_answer and (
        summary.is_api_error
        or summary.turn_closed
        or (summary.stop_reason in FINAL_STOP_REASONS and not has_tool_use)
    )
    return summary


def _summarise_usage(summary: TurnSummary, answers: List[Record]) -> None:
    """Usage, cost and models, once per API call (the last record of each message.id)."""
    calls: Dict[str, Record] = {}
    for record in answers:
        if record.get("isApiErrorMessage"):
            continue  # Claude Code's own error text, not an API call that was billed
        message = record["message"]
        if message.get("model") == SYNTHETIC_MODEL:
            continue
        key = message.get("id")
        calls[key if isinstance(key, str) else f"uuid:{record.get('uuid')}"] = record
    usage = zero_usage()
    for record in calls.values():
        message = record["message"]
        call_usage = message.get("usage")
        call_usage = call_usage if isinstance(call_usage, dict) else {}
        model = message.get("model")
        model = model if isinstance(model, str) else "unknown"
        usage = add_usage(usage, call_usage)
        cost = pricing.cost_usd(model, call_usage)
        summary.total_cost_usd += cost
        if model not in summary.model_usage:
            summary.models.append(model)
            summary.model_usage[model] = model_usage_entry(model)
        _add_model_usage(summary.model_usage[model], call_usage, cost)
    summary.usage = usage


def _api_duration_ms(records: List[Record], answers: List[Record]) -> int:
    """Best effort: per API call, from the record that triggered it to its last block."""
    by_uuid = {r.get("uuid"): r for r in records if isinstance(r.get("uuid"), str)}
    spans: Dict[str, List[Optional[int]]] = {}
    for record in answers:
        key = record["message"].get("id")
        key = key if isinstance(key, str) else str(record.get("uuid"))
        stamp = timestamp_ms(record.get("timestamp"))
        if key not in spans:
            parent = by_uuid.get(record.get("parentUuid"))
            start = timestamp_ms(parent.get("timestamp")) if parent is not None else stamp
            spans[key] = [start, stamp]
        else:
            spans[key][1] = stamp
    total = 0
    for start, end in spans.values():
        if start is not None and end is not None:
            total += max(0, end - start)
    return total
