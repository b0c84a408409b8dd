"""The `--settings` document claude-print hands the TUI, and the hook script it names.

Each event claude-print relies on gets one entry running `hook.sh <event> [args]` from the
relay dir (relay.py). The script saves the payload, answers what it can decide alone (a
PermissionRequest's deny, the --max-turns count, a --json-schema turn's stop, the first
prompt's wait for MCP servers) and reports on the relay FIFO; an *asking* entry
(`<event> ask`) waits on its own reply FIFO for claude-print's decision (replies.py).
"""

from __future__ import annotations

import json
import shlex
from typing import Any, Dict, NamedTuple, Optional, Sequence

from claude_print import contract
from claude_print.hooks import leftovers

FIFO_NAME = leftovers.FIFO_NAME  # the sweep of a killed run opens it too
SCRIPT_NAME = "hook.sh"
# An MCP server whose tools the TUI has listed (or that ended) creates one of these:
# claude-print's StructuredOutput server and each gated server of --mcp-config.
MCP_READY_PREFIX = "mcp-ready."
MCP_SETTLED_NAME = "mcp-settled"  # the first prompt has waited: later turns need not
STOP_TURN_NAME = "stop-turn"  # an accepted call, or the last allowed rejected one
BATCHES_NAME = "batches"  # --max-turns: tool batches of the current turn so far

_HOOK_SCRIPT = """\
#!/bin/sh
# claude-print relay hook. $1 is the hook event name; the payload is on stdin.
umask 077
dir={dir}
event_file=$(mktemp "$dir/event.XXXXXX") || exit 0
cat > "$event_file"
if [ "${{2:-}}" = ask ]; then
  reply="$event_file.reply"
  mkfifo "$reply" || exit 0
  # Read-write, so this open cannot block and claude-print's writer always finds a reader.
  exec 3<>"$reply"
  # An ending run unlinks its FIFO, then answers every reply FIFO: without the FIFO
  # nobody will answer; with it, ours (made above) will be.
  [ -p "$dir/{fifo}" ] || exit 0
  printf '%s %s ask %s\\n' "$1" "${{event_file##*/}}" "${{3:-}}" > "$dir/{fifo}"
  IFS= read -r answer <&3
  exec 3<&-
  rm -f "$reply"
  printf '%s\\n' "$answer"
  exit 0
fi
if [ "$1" = {permission_request} ]; then
  printf '%s\\n' {deny_json}
fi
if [ "$1" = {prompt_submit} ] && [ "${{2:-}}" = wait-mcp ] && [ ! -f "$dir/{mcp_settled}" ]; then
  # Hold the first prompt until the TUI has listed the tools of $3 MCP servers (their
  # ready files), or its first request goes out without them: it connects servers in
  # the background, claude -p before its first request.
  n=0
  while :; do
    ready=0
    for f in "$dir"/{mcp_ready}*; do [ -e "$f" ] && ready=$((ready + 1)); done
    [ "$ready" -lt "$3" ] && [ "$n" -lt {mcp_ticks} ] || break
    sleep 0.05; n=$((n + 1))
  done
  sleep {mcp_settle}
  : > "$dir/{mcp_settled}"
fi
if [ "$1" = {post_tool_batch} ] && [ -f "$dir/{stop_turn}" ]; then
  printf '%s\\n' {structured_stop}
elif [ "$1" = {post_tool_batch} ] && ! grep -q {subagent_key} "$event_file"; then
  batches=$(( $(cat "$dir/{batches}" 2>/dev/null || echo 0) + 1 ))
  echo "$batches" > "$dir/{batches}"
  if [ -n "${{2:-}}" ] && [ "$batches" -ge "$2" ]; then
    printf '%s\\n' {stop_json}
  fi
fi
printf '%s %s\\n' "$1" "${{event_file##*/}}" > "$dir/{fifo}"
"""


class ExtraHook(NamedTuple):
    """An asking hook entry of someone else's (an SDK caller's), with its own matcher."""

    event: str
    matcher: Optional[str]
    tag: str  # comes back in HookEvent.tag; letters, digits, ':' and '_' only
    timeout: Optional[float] = None


def deny_decision() -> Dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": contract.HOOK_PERMISSION_REQUEST,
            "decision": {"behavior": "deny", "message": contract.DENY_MESSAGE},
        }
    }


def hook_settings(
    script_path: str,
    extra: Optional[Dict[str, Any]] = None,
    max_turns: Optional[int] = None,
    asking: Sequence[str] = (),
    structured: bool = False,
    extra_hooks: Sequence[ExtraHook] = (),
    mcp_servers: int = 0,
) -> Dict[str, Any]:
    """The `--settings` document: one relay hook per event, paths shell-quoted.

    With `max_turns`, also a PostToolBatch hook that stops the turn after that many
    batches of tool calls (the hook script counts them). Events in `asking` wait for
    claude-print's answer (no time limit of their own: the run's timeout bounds them).
    With `structured` (--json-schema), PostToolBatch stops the turn once claude-print's
    MCP server says so. With `mcp_servers`, a UserPromptSubmit hook holds the first
    prompt until that many MCP servers have created their ready files.
    """
    hooks: Dict[str, Any] = {}
    events = [(event, "") for event in contract.RELAYED_HOOKS]
    if max_turns or structured:
        events.append((contract.HOOK_POST_TOOL_BATCH, f" {int(max_turns)}" if max_turns else ""))
    if mcp_servers:
        events.append((contract.HOOK_USER_PROMPT_SUBMIT, f" wait-mcp {int(mcp_servers)}"))
    # An asking event's own entry becomes the asking one, but PostToolBatch's counts
    # batches (--max-turns) or ends a --json-schema turn: it keeps that and gets a second.
    keeps = (contract.HOOK_POST_TOOL_BATCH,)
    events = [(e, " ask" if e in asking and e not in keeps else arg) for e, arg in events]
    events += [(event, " ask") for event in asking if (event, " ask") not in events]
    for event, arg in events:
        # `sh script` rather than exec: works even when TMPDIR is mounted noexec.
        command = f"/bin/sh {shlex.quote(script_path)} {event}{arg}"
        timeout = contract.ASK_TIMEOUT_SECS if arg == " ask" else contract.HOOK_TIMEOUT_SECS
        if arg.startswith(" wait-mcp"):
            timeout += contract.MCP_WAIT_SECS
        entry: Dict[str, Any] = {
            "hooks": [{"type": "command", "command": command, "timeout": timeout}]
        }
        if event in contract.TOOL_HOOKS:
            entry["matcher"] = "*"
        hooks.setdefault(event, []).append(entry)
    for hook in extra_hooks:
        command = f"/bin/sh {shlex.quote(script_path)} {hook.event} ask {shlex.quote(hook.tag)}"
        entry = {
            "hooks": [
                {
                    "type": "command",
                    "command": command,
                    "timeout": hook.timeout or contract.ASK_TIMEOUT_SECS,
                }
            ]
        }
        if hook.matcher is not None:
            entry["matcher"] = hook.matcher
        hooks.setdefault(hook.event, []).append(entry)
    return {**(extra or {}), "hooks": hooks}


def merge_settings(user: Dict[str, Any], ours: Dict[str, Any]) -> Dict[str, Any]:
    """The user's --settings and claude-print's in one document: the TUI reads only the
    last --settings (measured), so both must be in it. Objects merge key by key, lists
    concatenate (hook matchers: the user's first, ours after; others without
    duplicates), and where both set a plain value claude-print's wins: the run needs it."""
    out = dict(user)
    for key, value in ours.items():
        mine = out.get(key)
        if isinstance(mine, dict) and isinstance(value, dict):
            out[key] = merge_settings(mine, value)
        elif isinstance(mine, list) and isinstance(value, list):
            out[key] = mine + [item for item in value if item not in mine]
        else:
            out[key] = value
    return out


def hook_script(directory: str) -> str:
    return _HOOK_SCRIPT.format(
        dir=shlex.quote(directory),
        permission_request=contract.HOOK_PERMISSION_REQUEST,
        deny_json=shlex.quote(json.dumps(deny_decision(), separators=(",", ":"))),
        post_tool_batch=contract.HOOK_POST_TOOL_BATCH,
        subagent_key=shlex.quote(contract.SUBAGENT_PAYLOAD_KEY),
        stop_json=shlex.quote(json.dumps(contract.MAX_TURNS_STOP, separators=(",", ":"))),
        fifo=FIFO_NAME,
        batches=BATCHES_NAME,
        prompt_submit=contract.HOOK_USER_PROMPT_SUBMIT,
        mcp_ready=MCP_READY_PREFIX,
        mcp_settled=MCP_SETTLED_NAME,
        mcp_ticks=int(contract.MCP_WAIT_SECS / 0.05),
        mcp_settle=contract.MCP_SETTLE_SECS,
        stop_turn=STOP_TURN_NAME,
        structured_stop=shlex.quote(json.dumps(contract.STRUCTURED_STOP, separators=(",", ":"))),
    )
