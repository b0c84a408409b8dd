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
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

from claude_print import contract

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


def print_error_text(text: str) -> str:
    """An API error's text as `claude -p` words it (contract.PRINT_ERROR_WORDING): the
    TUI writes the interactive wording of a few."""
    for pattern, replacement in contract.PRINT_ERROR_WORDING:
        match = re.fullmatch(pattern, text, re.DOTALL)
        if match:
            return match.expand(replacement)
    return text


def record_content(record: Record) -> Any:
    message = record.get("message")
    return message.get("content") if isinstance(message, dict) else None


def record_blocks(record: Record) -> List[Dict[str, Any]]:
    content = record_content(record)
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def is_tool_result_carrier(record: Record) -> bool:
    return record.get("type") == "user" and any(
        b.get("type") == "tool_result" for b in record_blocks(record)
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
    return isinstance(record_content(record), (str, list))


# The `origin.kind` of the prompt the TUI submits by itself when background work it
# started (a command run in the background, a subagent) ends: a new turn of the same
# run (2.1.197, 2.1.270 and 2.1.332 alike; `promptSource` "system").
NOTIFICATION_ORIGIN = "task-notification"
NOTIFICATION_TAG = "<task-notification>"  # how the notification's text starts


def is_notification_prompt(record: Record) -> bool:
    """The prompt of a turn the TUI started itself to tell the model background work ended."""
    if record.get("type") != "user" or record.get("isMeta"):
        return False
    origin = record.get("origin")
    return isinstance(origin, dict) and origin.get("kind") == NOTIFICATION_ORIGIN


def is_turn_prompt(record: Record) -> bool:
    """Where a turn starts: a human prompt, or a notification the TUI submitted itself."""
    return is_human_prompt(record) or is_notification_prompt(record)


def notifications_due(records: Iterable[Record]) -> int:
    """Background tasks' notifications the TUI has queued and not yet answered: its
    `queue-operation` records (an "enqueue" of a `<task-notification>`; a "remove" when
    it folded one into the running turn, 2.1.197) less the turns it started for them
    (notification prompts). Counted, not ordered: the queue records have no uuid, and
    the TUI takes a notification ~0.1 s after a turn ends, often before claude-print
    has read that turn's end."""
    queued = removed = 0
    answered: Set[str] = set()
    for record in records:
        if record.get("type") == "queue-operation":
            operation = record.get("operation")
            content = record.get("content")
            if operation == "enqueue" and str(content or "").lstrip().startswith(NOTIFICATION_TAG):
                queued += 1
            elif operation == "remove":
                removed += 1
        elif is_notification_prompt(record):
            answered.add(str(record.get("uuid")))
    return max(0, queued - removed - len(answered))


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


def turn_records(
    records: Iterable[Record], session_id: str, after: Optional[str] = None
) -> List[Record]:
    """One turn of `session_id` in order: its prompt and what follows, up to the next
    turn's prompt. By default the last human turn; with `after` (a turn prompt's uuid),
    the turn the TUI started itself next, for a background task's notification ([]
    while there is none)."""
    ordered = order_records(r for r in records if r.get("sessionId") == session_id)
    if after is None:
        indexes = range(len(ordered) - 1, -1, -1)
        begin = next((i for i in indexes if is_human_prompt(ordered[i])), None)
    else:
        previous = next((i for i, r in enumerate(ordered) if r.get("uuid") == after), None)
        begin = None
        if previous is not None:
            later = range(previous + 1, len(ordered))
            begin = next((i for i in later if is_notification_prompt(ordered[i])), None)
    if begin is None:
        return []
    later = range(begin + 1, len(ordered))
    end = next((i for i in later if is_turn_prompt(ordered[i])), len(ordered))
    return ordered[begin:end]


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
