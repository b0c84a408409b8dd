"""The hook relay: a private temp dir, a settings file, a hook script and a FIFO.

Claude Code runs the hook script (hook_settings.py) for Stop, StopFailure,
PermissionRequest and the events of the run's options. The script saves its JSON
payload to a file in the private dir and writes one short line (``<event> <file>``)
into the FIFO; lines under PIPE_BUF are atomic, so concurrent hooks never interleave.

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

from claude_print.errors import ClaudePrintError
from claude_print.hooks import hook_events, leftovers, replies
from claude_print.hooks.hook_events import HookRun, WatchedCommand
from claude_print.hooks.hook_settings import (
    BATCHES_NAME,
    FIFO_NAME,
    MCP_READY_PREFIX,
    MCP_SETTLED_NAME,
    SCRIPT_NAME,
    STOP_TURN_NAME,
    ExtraHook,
    hook_script,
    hook_settings,
    merge_settings,
)

TEMP_PREFIX = "claude-print-"
SETTINGS_NAME = "settings.json"
# --json-schema: files claude-print's MCP server creates in the relay dir.
SCHEMA_NAME = "schema.json"
MCP_CONFIG_NAME = "mcp.json"
USER_MCP_CONFIG_NAME = "user-mcp.json"  # the user's --mcp-config, stdio servers gated

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
        self._watchdog: Optional[leftovers.Watchdog] = None
        self._buffer = b""
        self._unanswered: List[str] = []
        self.watched: List[WatchedCommand] = []
        self.user_mcp_path: Optional[str] = None
        self.mcp_names: List[str] = list(user_mcp or {})  # the --mcp-config servers
        self.mcp_waits = 0  # MCP servers whose ready files the first prompt waits for
        try:
            # First: the lock that tells another run's sweep this dir is live.
            self._lock_fd = leftovers.hold_lock(self.dir)
            self._watchdog = leftovers.Watchdog(self.dir)
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
        leftovers.release_hooks(self.dir)
        self._unanswered.clear()
        shutil.rmtree(self.dir, ignore_errors=True)
        for fd in (self.read_fd, self._keeper_fd, self._lock_fd):
            if fd >= 0:
                os.close(fd)
        self.read_fd = self._keeper_fd = self._lock_fd = -1
        if self._watchdog is not None:
            self._watchdog.close()
            self._watchdog = None


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
