"""Reading Claude Code's session transcript (`~/.claude/projects/<slug>/<id>.jsonl`).

Facts this module relies on (Claude Code 2.1.197, pinned by tests on real
transcripts in tests/data/cc-2.1.197):

- The file is written by an asynchronous queue flushed every 100 ms. **Line
  order is not chronological**: a turn's assistant answer can be written
  before its user prompt, and `system` records before both. Records are put
  back in order with their `parentUuid` chain (timestamps break ties), see
  `order_records`.
- When the Stop / StopFailure hook runs, the turn's records may not be in the
  file yet (seen: only the `ai-title` line; the rest ~130 ms later). Keep
  polling until `TurnSummary.complete` (better: also `turn_closed`).
- One API response is split into one record per content block, all sharing
  `message.id`; every record of the id carries the usage and stop_reason known
  when it was serialised (so an early block can say `stop_reason: null`).
- On `max_tokens` Claude Code may inject a meta user message and carry on, so
  `max_tokens` alone does not end a turn.
"""

from __future__ import annotations

import calendar
import heapq
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

from claude_print.records import pricing

Record = Dict[str, Any]

SLUG_MAX = 200  # longer slugs are cut and get a hash suffix
SYNTHETIC_MODEL = "<synthetic>"  # model of Claude Code's own error messages
# Stop reasons after which Claude Code does not call the API again by itself.
FINAL_STOP_REASONS = ("end_turn", "stop_sequence", "refusal")
# Texts Claude Code never reports as `result` (interruptions, rejections...).
NO_RESULT_TEXTS = frozenset(
    {
        "[Request interrupted by user]",
        "[Request interrupted by user for tool use]",
        "The user doesn't want to take this action right now. STOP what you are doing and "
        "wait for the user to tell you how to proceed.",
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if "
        "it was a file edit, the new_string was NOT written to the file). STOP what you are "
        "doing and wait for the user to tell you how to proceed.",
        "No response requested.",
    }
)


def _js_string_hash(text: str) -> int:
    """Claude Code's `(h << 5) - h + charCodeAt(i) | 0` over UTF-16 code units."""
    data = text.encode("utf-16-le", "surrogatepass")
    value = 0
    for i in range(0, len(data), 2):
        value = (value * 31 + (data[i] | data[i + 1] << 8)) & 0xFFFFFFFF
    return value - (1 << 32) if value >= (1 << 31) else value


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if number == 0:
            return out


def project_slug(real_cwd: str) -> str:
    """Directory name of a project under ~/.claude/projects.

    Every UTF-16 code unit that is not [A-Za-z0-9] becomes "-" (so a non-BMP
    character gives two). Over 200 characters: the first 200, "-", and the
    base-36 absolute value of a 32-bit Java-style hash of the *unmodified*
    path (confirmed in the 2.1.197 bundle and by a real run).
    """
    parts = []
    for char in real_cwd:
        if char.isascii() and char.isalnum():
            parts.append(char)
        else:
            parts.append("-" * (2 if ord(char) > 0xFFFF else 1))
    slug = "".join(parts)
    if len(slug) <= SLUG_MAX:
        return slug
    return f"{slug[:SLUG_MAX]}-{_base36(abs(_js_string_hash(real_cwd)))}"


def transcript_path(
    home: str, cwd: str, session_id: str, *, config_dir: Optional[str] = None
) -> str:
    """Where Claude Code writes the transcript of `session_id` run in `cwd`.

    `config_dir` is CLAUDE_CONFIG_DIR when set (default `<home>/.claude`).
    Prefer the `transcript_path` a hook reports when there is one.
    """
    base = config_dir if config_dir else os.path.join(home, ".claude")
    slug = project_slug(os.path.realpath(cwd))
    return os.path.join(base, "projects", slug, f"{session_id}.jsonl")


def newest_session(home: str, cwd: str, config_dir: Optional[str] = None) -> Optional[str]:
    """The id of the most recently written session run in `cwd` (any entrypoint)."""
    folder = os.path.dirname(transcript_path(home, cwd, "x", config_dir=config_dir))
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return None
    sessions = [
        (entry.stat().st_mtime, entry.name[: -len(".jsonl")])
        for entry in entries
        if entry.name.endswith(".jsonl") and entry.is_file()
    ]
    return max(sessions)[1] if sessions else None


def forget_session(path: str) -> List[str]:
    """--no-session-persistence: remove a finished session's transcript and its folder of
    subagent transcripts and tool results (`<session>/` beside it); returns what went."""
    import shutil

    removed = []
    folder = path[: -len(".jsonl")] if path.endswith(".jsonl") else ""
    if folder and os.path.isdir(folder) and not os.path.islink(folder):
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    try:
        os.unlink(path)
        removed.append(path)
    except OSError:
        pass
    return removed


class TranscriptTail:
    """Incremental reader of a JSONL file that another process appends to."""

    def __init__(self, path: str, offset: int = 0) -> None:
        self.path = path
        self.offset = offset  # bytes consumed, including a held partial line
        self.skipped = 0  # complete lines that were not a JSON object
        self.resets = 0  # times the file shrank or was replaced (re-read from 0)
        self._partial = b""
        self._inode: Optional[int] = None

    def poll(self) -> List[Record]:
        """Records from complete lines added since the last poll."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return []
        try:
            stat = os.fstat(fd)
            # Claude Code rewrites the file when it removes an entry: start over;
            # consumers de-duplicate by uuid.
            if (self._inode is not None and stat.st_ino != self._inode) or (
                stat.st_size < self.offset
            ):
                self.offset = 0
                self._partial = b""
                self.resets += 1
            self._inode = stat.st_ino
            chunks = []
            os.lseek(fd, self.offset, os.SEEK_SET)
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
                self.offset += len(chunk)
        finally:
            os.close(fd)
        if not chunks:
            return []
        lines = (self._partial + b"".join(chunks)).split(b"\n")
        self._partial = lines.pop()  # b"" when the data ended with a newline
        records = []
        for line in lines:
            if not line.strip():
                continue
            try:
                record = json.loads(line.decode("utf-8"))
            except ValueError:  # JSONDecodeError and UnicodeDecodeError
                self.skipped += 1
                continue
            if isinstance(record, dict):
                records.append(record)
            else:
                self.skipped += 1
        return records


_TIMESTAMP = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(Z|[+-]\d\d:?\d\d)?$"
)


def timestamp_ms(value: Any) -> Optional[int]:
    """Epoch milliseconds of an ISO-8601 timestamp as Claude Code writes them."""
    if not isinstance(value, str):
        return None
    match = _TIMESTAMP.match(value)
    if not match:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    fraction = (match.group(7) or "0")[:3].ljust(3, "0")
    seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    zone = match.group(8)
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        seconds -= sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
    return seconds * 1000 + int(fraction)


def _content(record: Record) -> Any:
    message = record.get("message")
    return message.get("content") if isinstance(message, dict) else None


def _blocks(record: Record) -> List[Dict[str, Any]]:
    content = _content(record)
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def is_tool_result_carrier(record: Record) -> bool:
    return record.get("type") == "user" and any(
        b.get("type") == "tool_result" for b in _blocks(record)
    )


def is_human_prompt(record: Record) -> bool:
    """A prompt the user submitted (not a tool result, meta or injected message)."""
    if record.get("type") != "user" or record.get("isMeta") or record.get("isCompactSummary"):
        return False
    if "toolUseResult" in record or is_tool_result_carrier(record):
        return False
    origin = record.get("origin")
    if isinstance(origin, dict) and origin.get("kind") != "human":
        return False
    return isinstance(_content(record), (str, list))


def _order_key(record: Record, index: int) -> Tuple[str, int]:
    stamp = record.get("timestamp")
    return (stamp if isinstance(stamp, str) else "", index)


def order_records(records: Iterable[Record]) -> List[Record]:
    """Records that have a uuid, parents before children, else by timestamp.

    The last record seen for a uuid wins (a re-read file repeats records).
    Records without a uuid (ai-title, mode, last-prompt...) are dropped.
    """
    latest: Dict[str, Tuple[int, Record]] = {}
    for index, record in enumerate(records):
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            first = latest[uuid][0] if uuid in latest else index
            latest[uuid] = (first, record)
    children: Dict[str, List[Tuple[Tuple[str, int], str]]] = {}
    ready: List[Tuple[Tuple[str, int], str]] = []
    for uuid, (index, record) in latest.items():
        parent = record.get("parentUuid")
        entry = (_order_key(record, index), uuid)
        if isinstance(parent, str) and parent in latest and parent != uuid:
            children.setdefault(parent, []).append(entry)
        else:
            ready.append(entry)
    heapq.heapify(ready)
    ordered: List[Record] = []
    done: Set[str] = set()
    while ready:
        _, uuid = heapq.heappop(ready)
        done.add(uuid)
        ordered.append(latest[uuid][1])
        for entry in children.pop(uuid, []):
            heapq.heappush(ready, entry)
    # A parent cycle cannot come from Claude Code; keep such records anyway.
    rest = sorted(
        (_order_key(record, index), uuid)
        for uuid, (index, record) in latest.items()
        if uuid not in done
    )
    ordered.extend(latest[uuid][1] for _, uuid in rest)
    return ordered


def turn_records(records: Iterable[Record], session_id: str) -> List[Record]:
    """The last turn of `session_id`, in order: its human prompt and what follows."""
    ordered = order_records(r for r in records if r.get("sessionId") == session_id)
    for index in range(len(ordered) - 1, -1, -1):
        if is_human_prompt(ordered[index]):
            return ordered[index:]
    return []


def prompt_stopped(records: Iterable[Record]) -> Optional[str]:
    """What the TUI said when a UserPromptSubmit hook blocked or stopped the prompt (a
    `system/informational` record that prevents continuation), or None. `claude -p` then
    prints that text as a successful result of 0 turns (2.1.197 and 2.1.331 alike)."""
    for record in records:
        if (
            record.get("type") == "system"
            and record.get("subtype") == "informational"
            and record.get("preventContinuation") is True
            and isinstance(record.get("content"), str)
        ):
            return str(record["content"])
    return None


def local_output(records: Iterable[Record]) -> Optional[str]:
    """What a slash command that started no model turn printed (`Unknown command: /x`),
    from a `system/informational` record in a turn with no human prompt; else None."""
    said: Optional[str] = None
    for record in records:
        if is_human_prompt(record):
            return None
        if (
            record.get("type") == "system"
            and record.get("subtype") == "informational"
            and isinstance(record.get("content"), str)
        ):
            said = str(record["content"])
    return said


def hook_stopped(records: Iterable[Record], own_prefix: str) -> bool:
    """A hook of the user's (not claude-print's, whose reasons start with `own_prefix`)
    answered `continue: false` mid-turn, and the TUI has closed the turn (no Stop hook
    fires then; its turn_duration record follows the tool result, not an answer)."""
    stopped = closed = False
    for record in records:
        attachment = record.get("attachment")
        if (
            isinstance(attachment, dict)
            and attachment.get("type") == "hook_stopped_continuation"
            and not str(attachment.get("message", "")).startswith(own_prefix)
        ):
            stopped = True
        closed = closed or record.get("subtype") == "turn_duration"
    return stopped and closed


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


@dataclass
class TurnSummary:
    """What one turn amounts to, in `claude -p` terms."""

    result_text: str = ""
    is_api_error: bool = False
    api_error_status: Optional[int] = None
    api_error: Optional[str] = None  # e.g. "usage_limit_reached" (2.1.300 on)
    error: Optional[str] = None  # the assistant record's `error` ("unknown", ...)
    stop_reason: Optional[str] = None
    num_turns: int = 0
    usage: Dict[str, Any] = field(default_factory=zero_usage)
    model_usage: Dict[str, Dict[str, Any]] = field(default_factory=dict)  # by response model
    total_cost_usd: float = 0.0
    models: List[str] = field(default_factory=list)
    complete: bool = False  # a final answer or an API error is in
    turn_closed: bool = False  # a `turn_duration` record follows the last answer
    tool_uses: List[Dict[str, Any]] = field(default_factory=list)  # {id, name, input}
    tool_results: List[Dict[str, Any]] = field(default_factory=list)  # {tool_use_id, is_error}
    permission_denials: List[Dict[str, Any]] = field(default_factory=list)  # `claude -p` shape
    prompt_uuid: Optional[str] = None
    prompt_id: Optional[str] = None  # equals the hooks' prompt_id
    prompt_at_ms: Optional[int] = None
    first_answer_at_ms: Optional[int] = None
    last_record_at_ms: Optional[int] = None
    api_duration_ms: int = 0  # best effort: sum over calls of (last block - request parent)


def _last_text(record: Record) -> str:
    """`claude -p`'s result: the last block of the last message, if it is text."""
    blocks = _blocks(record)
    if not blocks:
        content = _content(record)
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
    prompt = next((r for r in records if is_human_prompt(r)), None)
    if prompt is not None:
        summary.prompt_uuid = prompt.get("uuid")
        prompt_id = prompt.get("promptId")
        summary.prompt_id = prompt_id if isinstance(prompt_id, str) else None
        summary.prompt_at_ms = timestamp_ms(prompt.get("timestamp"))
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
            for block in _blocks(record):
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
                    for b in _blocks(record)
                    if b.get("type") == "tool_result" and b.get("tool_use_id") not in denied_ids
                ]
            for block in _blocks(record):
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
        b.get("type") == "tool_use" for b in _blocks(last_answer)
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
