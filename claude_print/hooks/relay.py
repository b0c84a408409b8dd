"""The hook relay: a private temp dir, a settings file, a hook script and a FIFO.

Claude Code runs the hook script for Stop, StopFailure and PermissionRequest.
The script saves its JSON payload to a file in the private dir and writes one
short line (``<event> <file>``) into the FIFO; lines under PIPE_BUF are
atomic, so concurrent hooks never interleave. PermissionRequest is also
answered with a deny decision, as `claude -p` denies tools it may not use.

An *asking* hook (``<event> <file> ask``) waits for claude-print's decision: it
reads one JSON line from its own reply FIFO (``<file>.reply``) and prints it as
the hook's output. claude-print answers with `Relay.answer` once it has decided
(a budget check against the transcript, a question to an SDK client, ...).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import tempfile
from typing import Any, Dict, FrozenSet, List, NamedTuple, Optional, Sequence

from claude_print import contract
from claude_print.errors import ClaudePrintError
from claude_print.hooks import hook_events, leftovers, replies
from claude_print.hooks.hook_events import HookRun, WatchedCommand

TEMP_PREFIX = "claude-print-"
FIFO_NAME = leftovers.FIFO_NAME  # the sweep of a killed run opens it too
SCRIPT_NAME = "hook.sh"
SETTINGS_NAME = "settings.json"
# --json-schema: files claude-print's MCP server creates in the relay dir.
SCHEMA_NAME = "schema.json"
MCP_CONFIG_NAME = "mcp.json"
# An MCP server whose tools the TUI has listed (or that ended) creates one of these:
# claude-print's StructuredOutput server and each gated server of --mcp-config.
MCP_READY_PREFIX = "mcp-ready."
MCP_SETTLED_NAME = "mcp-settled"  # the first prompt has waited: later turns need not
USER_MCP_CONFIG_NAME = "user-mcp.json"  # the user's --mcp-config, stdio servers gated
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


PROMPT_NAME = "prompt.txt"
EDITOR_NAME = "editor.sh"
# The editor the user had, for a tool the model runs after the prompt went in.
USER_EDITOR_VAR = "CLAUDE_PRINT_USER_EDITOR"
# The editor script's line on the FIFO once it has handed the staged text over.
EDITOR_EVENT = "claude-print-editor"

_EDITOR_SCRIPT = """\
#!/bin/sh
# claude-print: Claude Code's input box runs this as $VISUAL/$EDITOR on Ctrl+G. While the
# prompt is staged, it becomes the box's text; after that the user's own editor runs.
for file; do :; done
if [ -f {prompt} ]; then
  cat {prompt} > "$file" || exit 1
  # The TUI loads the file once this script has exited: claude-print's cue for Enter.
  printf '%s -\\n' {editor_event} > {fifo}
  exit 0
fi
if [ -n "${{{user_editor}:-}}" ]; then
  exec /bin/sh -c "${user_editor} \\"\\$@\\"" sh "$@"
fi
exit 1
"""


class HookEvent(NamedTuple):
    name: str
    payload: Dict[str, Any]
    error: Optional[str] = None  # set when the payload could not be read as a JSON object
    reply: Optional[str] = None  # an asking hook's reply FIFO: it waits for `Relay.answer`
    tag: str = ""  # which asking hook entry fired (the caller's hooks: "sdk:<index>")
    run: Optional[HookRun] = None  # a watched user hook started or ended (not an event of ours)


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


class Relay:
    """Owns the private dir and the FIFO's read end; `close()` removes everything."""

    def __init__(
        self,
        tmp_root: Optional[str] = None,
        extra_settings: Optional[Dict[str, Any]] = None,
        max_turns: Optional[int] = None,
        asking: Sequence[str] = (),
        user_settings: Optional[Dict[str, Any]] = None,
        structured: bool = False,
        extra_hooks: Sequence[ExtraHook] = (),
        watch_hooks: bool = False,
        watched_events: Optional[FrozenSet[str]] = None,
        user_mcp: Optional[Dict[str, Dict[str, Any]]] = None,
        sdk_bridge: bool = False,
    ) -> None:
        """With `watch_hooks`, the command hooks of `user_settings` for `watched_events`
        (None: all) run through the watch script, which reports each run (`HookRun`).
        `user_mcp` (the servers of --mcp-config) goes to `user_mcp_path`, its stdio
        servers gated (`mcp_gate`): the first prompt waits for their tools. With
        `sdk_bridge` its `sdk` servers are bridged to the caller (`sdk_mcp`)."""
        where = tmp_root or temp_root()
        try:
            self.dir = tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-", dir=where)
        except OSError as exc:
            raise ClaudePrintError(
                f"cannot create a private temp dir in {where}: {exc.strerror or exc}"
            ) from exc
        self.read_fd = -1
        self._keeper_fd = -1
        self._lock_fd = -1
        self._buffer = b""
        self._unanswered: List[str] = []
        self.watched: List[WatchedCommand] = []
        self.user_mcp_path: Optional[str] = None
        self.mcp_names: List[str] = list(user_mcp or {})  # the --mcp-config servers
        self.mcp_waits = 0  # MCP servers whose ready files the first prompt waits for
        try:
            # First: the lock that tells another run's sweep this dir is live.
            self._lock_fd = leftovers.hold_lock(self.dir)
            self.script_path = os.path.join(self.dir, SCRIPT_NAME)
            self.settings_path = os.path.join(self.dir, SETTINGS_NAME)
            self.fifo_path = os.path.join(self.dir, FIFO_NAME)
            _write_private(self.script_path, hook_script(self.dir))
            waits = self.mcp_waits = 1 if structured else 0
            if user_mcp is not None:
                from claude_print.mcp import mcp_gate

                bridge_dir = self.dir if sdk_bridge else None
                config, gated = mcp_gate.gated_config(user_mcp, self._mcp_ready_path, bridge_dir)
                self.user_mcp_path = os.path.join(self.dir, USER_MCP_CONFIG_NAME)
                _write_private(self.user_mcp_path, json.dumps(config))
                waits = self.mcp_waits = waits + gated
            settings = hook_settings(
                self.script_path,
                extra_settings,
                max_turns,
                asking,
                structured,
                extra_hooks,
                mcp_servers=waits,
            )
            if user_settings and watch_hooks:
                watch_path = os.path.join(self.dir, hook_events.WATCH_SCRIPT_NAME)
                user_settings, self.watched = hook_events.watch_settings(
                    user_settings, watch_path, watched_events
                )
                _write_private(watch_path, hook_events.watch_script(self.dir, FIFO_NAME))
                for index, watched in enumerate(self.watched):
                    name = hook_events.COMMAND_FILE.format(index)
                    _write_private(os.path.join(self.dir, name), watched.command)
            if user_settings:
                settings = merge_settings(user_settings, settings)
            _write_private(self.settings_path, json.dumps(settings))
            os.mkfifo(self.fifo_path, 0o600)
            self.read_fd = os.open(self.fifo_path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            # Our own write end keeps the FIFO open, so the reader never sees EOF
            # between two hooks.
            self._keeper_fd = os.open(self.fifo_path, os.O_WRONLY | os.O_CLOEXEC)
        except OSError as exc:
            self.close()
            raise ClaudePrintError(f"cannot set up the hook relay in {self.dir}: {exc}") from exc

    def stage_structured(self, schema: Dict[str, Any], max_failures: int) -> str:
        """--json-schema: the schema and the `--mcp-config` file that starts claude-print's
        StructuredOutput server; returns the config file's path."""
        from claude_print.mcp import mcp_structured

        schema_path = os.path.join(self.dir, SCHEMA_NAME)
        config_path = os.path.join(self.dir, MCP_CONFIG_NAME)
        config = mcp_structured.mcp_config(
            schema_path,
            self._mcp_ready_path("structured"),
            stop_path=os.path.join(self.dir, STOP_TURN_NAME),
            max_failures=max_failures,
        )
        try:
            _write_private(schema_path, json.dumps(schema))
            _write_private(config_path, json.dumps(config))
        except OSError as exc:
            raise ClaudePrintError(f"cannot stage the --json-schema server: {exc}") from exc
        return config_path

    def _mcp_ready_path(self, server: object) -> str:
        return os.path.join(self.dir, f"{MCP_READY_PREFIX}{server}")

    def mcp_pending(self) -> int:
        """MCP servers that have not yet created their ready files."""
        if not self.mcp_waits:
            return 0
        try:
            ready = sum(name.startswith(MCP_READY_PREFIX) for name in os.listdir(self.dir))
        except OSError:
            return 0
        return max(0, self.mcp_waits - ready)

    def mcp_settled(self) -> None:
        """The first prompt has waited: the UserPromptSubmit hook need not wait again."""
        with contextlib.suppress(OSError):
            _write_private(os.path.join(self.dir, MCP_SETTLED_NAME), "")

    def editor_command(self) -> str:
        """The $EDITOR command that hands the staged prompt to the input box (Ctrl+G)."""
        editor_path = os.path.join(self.dir, EDITOR_NAME)
        prompt_path = os.path.join(self.dir, PROMPT_NAME)
        try:
            _write_private(
                editor_path,
                _EDITOR_SCRIPT.format(
                    prompt=shlex.quote(prompt_path),
                    user_editor=USER_EDITOR_VAR,
                    editor_event=EDITOR_EVENT,
                    fifo=shlex.quote(self.fifo_path),
                ),
            )
        except OSError as exc:
            raise ClaudePrintError(f"cannot write the editor script in {self.dir}: {exc}") from exc
        # `sh script` rather than exec: works even when TMPDIR is mounted noexec.
        return f"/bin/sh {shlex.quote(editor_path)}"

    def stage_prompt(self, prompt: str) -> None:
        """Put the prompt where the editor script hands it to the input box (a private
        file, never argv or the environment), once per turn."""
        self.unstage_prompt()
        try:
            _write_private(os.path.join(self.dir, PROMPT_NAME), prompt)
        except OSError as exc:
            raise ClaudePrintError(f"cannot stage the prompt in {self.dir}: {exc}") from exc

    def new_turn(self) -> None:
        """--max-turns counts tool batches per turn (`claude -p` per query), not per session."""
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(self.dir, BATCHES_NAME))

    def unstage_prompt(self) -> None:
        """The box holds the prompt: a later $EDITOR (a tool the model runs) is the user's."""
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(self.dir, PROMPT_NAME))

    def read_events(self) -> List[HookEvent]:
        """Events (and watched hook runs) whose lines have arrived; never blocks."""
        while True:
            try:
                chunk = os.read(self.read_fd, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        return [self._load(line.decode("utf-8", "replace")) for line in lines if line.strip()]

    def _load(self, line: str) -> HookEvent:
        words = line.split(" ")
        run = hook_events.read_run(self.dir, words)
        if run is not None:
            return HookEvent(run.phase, run.payload, run=run)
        if words[0] == EDITOR_EVENT:
            return HookEvent(EDITOR_EVENT, {})
        name, file_name, *flags = words
        path = os.path.join(self.dir, os.path.basename(file_name))
        reply = None
        tag = flags[1] if len(flags) > 1 else ""
        if flags[:1] == ["ask"]:
            reply = path + replies.REPLY_SUFFIX
            self._unanswered.append(reply)
        try:
            with open(path, encoding="utf-8") as f:
                payload = json.load(f)
            os.unlink(path)
        except (OSError, ValueError) as exc:
            return HookEvent(name, {}, f"unreadable {name} hook payload: {exc}", reply, tag)
        if not isinstance(payload, dict):
            return HookEvent(name, {}, f"{name} hook payload is not a JSON object", reply, tag)
        return HookEvent(name, payload, None, reply, tag)

    def answer(self, event: HookEvent, decision: Optional[Dict[str, Any]]) -> bool:
        """Hand an asking hook its output (None: no decision, Claude Code's default).
        False when the hook is gone (Claude Code gave up on it)."""
        if event.reply is None or event.reply not in self._unanswered:
            return False
        self._unanswered.remove(event.reply)
        line = json.dumps(decision, separators=(",", ":")) if decision is not None else ""
        return replies.send_reply(event.reply, line)

    def close(self) -> None:
        # No hook may wait on us after we are gone. First the FIFO goes, while we still
        # hold its read end: a late hook then fails to open it (ENOENT) instead of
        # blocking forever in open() on a reader-less FIFO, and a late asking hook gives
        # up instead of waiting for an answer. Then every asking hook still waiting is
        # answered, whether or not we read its line (a keeper stopped mid-turn never did).
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(self.dir, FIFO_NAME))
        replies.release_waiting(self.dir)
        self._unanswered.clear()
        shutil.rmtree(self.dir, ignore_errors=True)
        for fd in (self.read_fd, self._keeper_fd, self._lock_fd):
            if fd >= 0:
                os.close(fd)
        self.read_fd = self._keeper_fd = self._lock_fd = -1


# Claude Code 2.1.197 splits $VISUAL on spaces and undoes no quoting (2.1.331 fails on a
# quote too), so the editor script's path must need no shell quoting: a TMPDIR that does
# is passed over for the first of these that is a writable directory.
PLAIN_ROOTS = ("/tmp", "/var/tmp", "/dev/shm")


def temp_root(environ: Optional[Dict[str, str]] = None) -> str:
    """Where relay dirs go: $TMPDIR when it is set, else the system default; a TMPDIR
    that needs shell quoting gives way to a plain one (PLAIN_ROOTS).

    tempfile.gettempdir() silently falls back to /tmp (or the cwd) when $TMPDIR is
    missing or unwritable; a user who set TMPDIR should hear that it does not work.
    """
    env = (os.environ if environ is None else environ).get("TMPDIR")
    if not env:
        return tempfile.gettempdir()
    if not os.path.isdir(env):
        what = "does not exist" if not os.path.exists(env) else "is not a directory"
        raise ClaudePrintError(f"TMPDIR={env} {what}: claude-print needs a private temp dir there")
    if shlex.quote(env) == env:
        return env
    for root in PLAIN_ROOTS:
        if os.path.isdir(root) and os.access(root, os.W_OK | os.X_OK):
            return root
    raise ClaudePrintError(
        f"TMPDIR={env!r} needs shell quoting, which Claude Code's $EDITOR handling cannot "
        f"take, and none of {', '.join(PLAIN_ROOTS)} is writable: set TMPDIR to a path of "
        "letters, digits and ./_-+ only"
    )


def _write_private(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
