"""`claude -p`'s hook events in stream-json: `system/hook_started` and `hook_response`.

`claude -p --output-format stream-json` reports each run of a user's command hook as a
pair of events: SessionStart hooks always, every other event's with
`--include-hook-events` (measured, 2.1.197 and 2.1.330; `--output-format json` never
shows them, nor callback hooks of the Agent SDK). The TUI prints them nowhere, so
claude-print learns them two ways:

- Hooks of the user's `--settings` (claude-print passes that document to the TUI) run
  through claude-print's watch script: it runs the command as Claude Code would
  (`/bin/sh -c`, the payload on stdin), hands its output and exit code back to the TUI
  unchanged, and tells claude-print over the relay FIFO when it starts and ends. These
  events are exact, silent hooks included.
- Hooks from settings files (user, project, local, plugins) are not claude-print's to
  wrap; their runs are read back from the transcript's `hook_*` attachments, which the
  TUI writes only for hooks that printed something or failed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
from typing import Any, Container, Dict, FrozenSet, List, Mapping, NamedTuple, Optional, Tuple

from claude_print.ids import random_uuid

SESSION_START = "SessionStart"
ALL_EVENTS: Optional[FrozenSet[str]] = None  # --include-hook-events: every event's hooks
ALWAYS: FrozenSet[str] = frozenset({SESSION_START})  # stream-json shows these regardless

STARTED = "hook_started"  # relay line: `hook_started <run file> <command index>`
RESPONSE = "hook_response"  # relay line: `hook_response <run file> <exit code>`
WATCH_SCRIPT_NAME = "watch.sh"
COMMAND_FILE = "hook-command.{}"
DEFAULT_TIMEOUT_SECS = 600.0  # Claude Code's limit for a command hook without its own

# Which payload field Claude Code appends to the event in `hook_name` ("PreToolUse:Bash",
# "SessionStart:startup"; measured for these two, the rest from the hooks reference).
_NAME_FIELDS = {
    "PreToolUse": "tool_name",
    "PostToolUse": "tool_name",
    "PostToolUseFailure": "tool_name",
    "PermissionRequest": "tool_name",
    "PermissionDenied": "tool_name",
    SESSION_START: "source",
    "SessionEnd": "reason",
    "PreCompact": "trigger",
    "PostCompact": "trigger",
    "Setup": "trigger",
    "Notification": "notification_type",
    "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
}

_WATCH_SCRIPT = """\
#!/bin/sh
# claude-print: runs the user's hook command number $1 as Claude Code would, hands its
# output and exit code back unchanged, and tells claude-print when it starts and ends.
umask 077
dir={dir}
command=$(cat "$dir/{command_file}") || exit 1
run=$(mktemp "$dir/hook-run.XXXXXX") || exec /bin/sh -c "$command"
cat > "$run"
printf '{started} %s %s\\n' "${{run##*/}}" "$1" > "$dir/{fifo}"
/bin/sh -c "$command" < "$run" > "$run.out" 2> "$run.err"
code=$?
cat "$run.out"
cat "$run.err" >&2
printf '{response} %s %s\\n' "${{run##*/}}" "$code" > "$dir/{fifo}"
exit "$code"
"""


class WatchedCommand(NamedTuple):
    command: str
    timeout: float  # seconds: the TUI stops the hook after this


class HookRun(NamedTuple):
    """One start or end of a watched hook, as the relay read it."""

    phase: str  # STARTED or RESPONSE
    run_id: str  # the same for both phases of one run
    payload: Dict[str, Any]  # the hook's input (event name, session id, tool name...)
    command: int = -1  # STARTED: which watched command
    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0


def watch_script(directory: str, fifo_name: str) -> str:
    return _WATCH_SCRIPT.format(
        dir=shlex.quote(directory),
        fifo=fifo_name,
        started=STARTED,
        response=RESPONSE,
        command_file=COMMAND_FILE.format("$1"),
    )


def watch_settings(
    settings: Mapping[str, Any], script_path: str, events: Optional[FrozenSet[str]]
) -> Tuple[Dict[str, Any], List[WatchedCommand]]:
    """`settings` with each command hook of `events` (None: all) run by the watch script
    (`/bin/sh <script> <index>`), and the original commands by index."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return dict(settings), []
    watched: List[WatchedCommand] = []
    new_hooks: Dict[str, Any] = {}
    for event, matchers in hooks.items():
        if (events is not None and event not in events) or not isinstance(matchers, list):
            new_hooks[event] = matchers
            continue
        new_hooks[event] = [_watch_matcher(m, script_path, watched) for m in matchers]
    return {**settings, "hooks": new_hooks}, watched


def _watch_matcher(matcher: Any, script_path: str, watched: List[WatchedCommand]) -> Any:
    if not isinstance(matcher, dict) or not isinstance(matcher.get("hooks"), list):
        return matcher
    entries = []
    for entry in matcher["hooks"]:
        if isinstance(entry, dict) and entry.get("type") == "command":
            command = entry.get("command")
            if isinstance(command, str):
                timeout = entry.get("timeout")
                seconds = float(timeout) if isinstance(timeout, (int, float)) else None
                watched.append(WatchedCommand(command, seconds or DEFAULT_TIMEOUT_SECS))
                index = len(watched) - 1
                entry = {**entry, "command": f"/bin/sh {shlex.quote(script_path)} {index}"}
        entries.append(entry)
    return {**matcher, "hooks": entries}


def read_run(directory: str, line_words: List[str]) -> Optional[HookRun]:
    """The HookRun of a relay line from the watch script (None: not one of its lines).
    The run's files are removed once its end is read."""
    if len(line_words) != 3 or line_words[0] not in (STARTED, RESPONSE):
        return None
    phase, name, number = line_words
    path = os.path.join(directory, os.path.basename(name))
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            payload = json.load(f)
    except (OSError, ValueError):
        payload = {}
    if not isinstance(payload, dict):
        payload = {}
    value = int(number) if number.lstrip("-").isdigit() else -1
    if phase == STARTED:
        return HookRun(phase, name, payload, command=value)
    stdout, stderr = _read_text(path + ".out"), _read_text(path + ".err")
    for leftover in (path, path + ".out", path + ".err"):
        with contextlib.suppress(OSError):
            os.unlink(leftover)
    return HookRun(phase, name, payload, stdout=stdout, stderr=stderr, exit_code=value)


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def hook_name(payload: Mapping[str, Any]) -> str:
    """`PreToolUse:Bash`, `SessionStart:startup`, `Stop`: as `claude -p` names a run."""
    event = str(payload.get("hook_event_name") or "")
    field = _NAME_FIELDS.get(event)
    detail = payload.get(field) if field else None
    return f"{event}:{detail}" if isinstance(detail, str) and detail else event


def started_event(hook_id: str, name: str, event: str, session_id: str) -> Dict[str, Any]:
    return {
        "type": "system",
        "subtype": STARTED,
        "hook_id": hook_id,
        "hook_name": name,
        "hook_event": event,
        "uuid": random_uuid(),
        "session_id": session_id,
    }


def response_event(
    hook_id: str,
    name: str,
    event: str,
    session_id: str,
    stdout: str,
    stderr: str,
    exit_code: int,
    outcome: Optional[str] = None,
) -> Dict[str, Any]:
    return {
        "type": "system",
        "subtype": RESPONSE,
        "hook_id": hook_id,
        "hook_name": name,
        "hook_event": event,
        "output": stdout + stderr,
        "stdout": stdout,
        "stderr": stderr,
        "exit_code": exit_code,
        "outcome": outcome or ("success" if exit_code == 0 else "error"),
        "uuid": random_uuid(),
        "session_id": session_id,
    }


# The transcript's attachment for a hook run that printed something or failed, and what
# `claude -p` says of it. A non-blocking error's stderr carries the TUI's own prefix.
_ATTACHMENT_OUTCOMES = {
    "hook_success": "success",
    "hook_non_blocking_error": "error",
    "hook_blocking_error": "error",
    "hook_error_during_execution": "error",
    "hook_cancelled": "cancelled",
}
_NON_BLOCKING_PREFIX = "Failed with non-blocking status code: "


def from_attachment(
    record: Mapping[str, Any], reported: Optional[FrozenSet[str]], own_dir: str, session_id: str
) -> List[Dict[str, Any]]:
    """The started/response pair for a transcript record of a hook run that claude-print
    did not watch itself ([] for other records, and for its own relay and watch hooks)."""
    attachment = record.get("attachment")
    if record.get("type") != "attachment" or not isinstance(attachment, dict):
        return []
    outcome = _ATTACHMENT_OUTCOMES.get(str(attachment.get("type")))
    event = attachment.get("hookEvent")
    command = str(attachment.get("command") or "")
    if outcome is None or not isinstance(event, str) or (own_dir and own_dir in command):
        return []
    if reported is not None and event not in reported:
        return []
    stdout = str(attachment.get("stdout") or "")
    stderr = str(attachment.get("stderr") or "")
    if stderr.startswith(_NON_BLOCKING_PREFIX):
        stderr = stderr[len(_NON_BLOCKING_PREFIX) :] + "\n"
    code = attachment.get("exitCode")
    exit_code = code if isinstance(code, int) else (0 if outcome == "success" else 1)
    name = str(attachment.get("hookName") or event)
    hook_id = random_uuid()
    return [
        started_event(hook_id, name, event, session_id),
        response_event(hook_id, name, event, session_id, stdout, stderr, exit_code, outcome),
    ]


def reported_events(include_hook_events: bool) -> Optional[FrozenSet[str]]:
    return ALL_EVENTS if include_hook_events else ALWAYS


TURN_END_EVENTS = frozenset({"Stop", "StopFailure"})


class HookWatch:
    """The watched runs: each start and end becomes its `claude -p` event, held until
    its place in the stream. The TUI writes its transcript late, so a tool's hook runs
    wait for the assistant message that calls the tool, and Stop's for the turn's end
    (`claude -p` prints them after the last message, before the result)."""

    def __init__(self, commands: List[WatchedCommand]) -> None:
        self.commands = commands
        # run id -> (hook_id, hook_name, event, session id, when the TUI gives up on it)
        self._running: Dict[str, Tuple[str, str, str, str, float]] = {}
        self._held: List[Tuple[str, Dict[str, Any]]] = []  # (tool_use id / END / "", event)

    def take(self, run: HookRun, now: float, session_id: str) -> None:
        # An end whose start was lost is still reported, under a fresh hook id.
        known = self._running.pop(run.run_id, None) or self._new_run(run, now, session_id)
        if run.phase == STARTED:
            self._running[run.run_id] = known
            event = started_event(*known[:4])
        else:
            event = response_event(*known[:4], run.stdout, run.stderr, run.exit_code)
        self._hold(run.payload, event)

    def _new_run(
        self, run: HookRun, now: float, session_id: str
    ) -> Tuple[str, str, str, str, float]:
        limit = (
            self.commands[run.command].timeout
            if 0 <= run.command < len(self.commands)
            else DEFAULT_TIMEOUT_SECS
        )
        event = str(run.payload.get("hook_event_name") or "")
        session = str(run.payload.get("session_id") or session_id)
        return (random_uuid(), hook_name(run.payload), event, session, now + limit)

    def _hold(self, payload: Mapping[str, Any], event: Dict[str, Any]) -> None:
        tool_use_id = payload.get("tool_use_id")
        if event["hook_event"] in TURN_END_EVENTS:
            anchor = _TURN_END
        else:
            anchor = tool_use_id if isinstance(tool_use_id, str) else ""
        self._held.append((anchor, event))

    def release(self, emitted_tool_uses: Container[str], turn_over: bool) -> List[Dict[str, Any]]:
        """The held events whose place has come, in the order their runs reported."""
        ready: List[Dict[str, Any]] = []
        held: List[Tuple[str, Dict[str, Any]]] = []
        for anchor, event in self._held:
            if not anchor or anchor in emitted_tool_uses or turn_over:
                ready.append(event)
            else:
                held.append((anchor, event))
        self._held = held
        return ready

    def running(self, now: float) -> bool:
        """A watched hook is still running (and the TUI has not yet given up on it):
        `claude -p` prints its response before the turn's result."""
        return any(gives_up > now for *_, gives_up in self._running.values())


_TURN_END = "\0turn-end"
