"""The orchestrator: one event loop that owns the child, the relay and the clock.

A run: set up the relay -> spawn Claude Code on a PTY -> answer probes and
startup screens -> deliver the prompt -> wait for a relayed hook -> read the
transcript -> print -> tear the child down. Everything it calls is a plain
function or a small class; only this module sees the whole picture.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time
from types import FrameType
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

from claude_print import contract, flags, leftovers, permissions, release, screens
from claude_print.cli import Options, choose_delivery, new_session_id
from claude_print.errors import (
    EXIT_ASSISTANT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TIMEOUT,
    ClaudePrintError,
)
from claude_print.probes import ProbeResponder
from claude_print.pty_session import PtyChild, child_environment, scrubbed_names
from claude_print.relay import HookEvent, Relay
from claude_print.terminal import Screen

# output, stream and transcript (json, calendar, datetime ...) are imported where they
# are first used, after the TUI has been spawned: its boot hides their cost.
if TYPE_CHECKING:
    from claude_print.stream import StreamConverter
    from claude_print.transcript import TranscriptTail, TurnSummary

STARTUP_TIMEOUT = float(os.environ.get("CLAUDE_PRINT_STARTUP_TIMEOUT", "60"))
UNKNOWN_SCREEN_GRACE = 2.0  # an unrecognised dialog that stays still this long blocks us
REANSWER_AFTER = 2.0  # a dialog still up this long after Enter gets Enter again
ARROW_RETRY = 0.3  # a caret that did not move this long after an arrow lost it
TRANSCRIPT_SETTLE = 3.0  # how long to wait for the final record after Stop
# Submitted, yet no record of it after this long: the keys were lost.
PROMPT_ARRIVAL_GRACE = float(os.environ.get("CLAUDE_PRINT_PROMPT_TIMEOUT", "20"))
# A pasted prompt still in the input box this long after Enter, with the TUI quiet,
# lost its Enter (seen under CPU load): press it again, a bounded number of times.
# An extra Enter on the emptied box of a running turn does nothing (measured).
ENTER_RETRY_AFTER = 2.0
ENTER_RETRY_QUIET = 0.5
ENTER_PRESSES = 4
SLASH_HINT = (
    "; a prompt starting with '/' runs a slash command in the TUI, and built-in ones like "
    "/help or /cost start no model turn"
)
MISSING_HOOK_GRACE = 10.0  # a finished turn without a Stop hook: drift, not a hang
TRANSCRIPT_POLL = 0.01  # the TUI flushes its transcript queue every 100 ms
UNRENDERED_LIMIT = 256 * 1024  # enough for the last screens of a failure message
TAIL_INTERVAL = 0.05
TEARDOWN_GRACE = 2.0
# The TUI writes its cost-state record as it exits after SIGTERM (0.1-1.5 s alone, up to
# ~4 s with 20 at once, measured): how long the result waits for it.
COST_STATE_WAIT = 5.0
# --json-schema: `claude -p` rejects an unusable schema argument from this release (older
# ones run without the tool); measured on 2.1.330, not bisected.
STRICT_SCHEMA_FROM = (2, 1, 330)
# An asking PreToolUse hook waits this long at most for its tool_use to reach the transcript.
ASK_SETTLE = 3.0
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Trace:
    """--verbose: timestamped lines on stderr, relative to the start of the run."""

    def __init__(self, enabled: bool, started: float) -> None:
        self.enabled = enabled
        self.started = started

    def __call__(self, message: str) -> None:
        if self.enabled:
            elapsed = time.monotonic() - self.started
            sys.stderr.write(f"[claude-print +{elapsed:7.3f}s] {message}\n")
            sys.stderr.flush()


class Interrupted(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class Emitter:
    """Writes results to stdout; a closed pipe (SIGPIPE) ends output quietly.

    `json --verbose` collects every event and prints them as one JSON array at
    the end, as `claude -p --output-format json --verbose` does.
    """

    def __init__(self, output_format: str, verbose: bool = False, release: str = "") -> None:
        self.output_format = output_format
        # The Claude Code release whose `claude -p` shapes the events ("" = the newest).
        self.release = release
        self.collected: Optional[List[Dict[str, Any]]] = (
            [] if output_format == "json" and verbose else None
        )
        self.broken = False

    @property
    def streams_events(self) -> bool:
        return self.output_format == "stream-json" or self.collected is not None

    def line(self, text: str) -> None:
        if self.broken:
            return
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            self.broken = True
            # Keep the interpreter's final flush from raising again.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)

    def event(
        self,
        obj: Dict[str, Any],
        finish: Optional[Callable[[Dict[str, Any]], Dict[str, Any]]] = None,
    ) -> None:
        """`finish` adds what the captured shapes cannot know, after conforming."""
        from claude_print import output

        obj = output.conform(obj, self.release, streamed=self.streams_events)
        if finish is not None:
            obj = finish(obj)
        if self.collected is not None:
            self.collected.append(obj)
        else:
            self.line(output.render_json(obj))

    def result(
        self,
        obj: Dict[str, Any],
        finish: Optional[Callable[[Dict[str, Any]], Dict[str, Any]]] = None,
    ) -> None:
        from claude_print import output

        if self.output_format == "text":
            self.line(output.render_text(finish(obj) if finish else obj))
        else:
            self.event(obj, finish)
            if self.collected is not None:
                self.line(output.render_json(self.collected))


def report_failure(exc: ClaudePrintError, output_format: str, **fields: Any) -> None:
    """An error before or outside a session: message on stderr, json object on stdout."""
    from claude_print import output

    sys.stderr.write(f"claude-print: error: {exc.message}\n")
    if output_format in ("json", "stream-json"):
        obj = output.error_object(
            exc.subtype,
            exc.message,
            session_id=fields.get("session_id", ""),
            duration_ms=fields.get("duration_ms", 0),
            claude_version=fields.get("claude_version", ""),
        )
        Emitter(output_format, release=fields.get("claude_version", "")).event(obj)


def build_argv(
    options: Options,
    binary: str,
    relay: Relay,
    session_id: Optional[str],
    delivery: str,
    facts: contract.Facts = contract.BASELINE,
    extra: Sequence[str] = (),
) -> List[str]:
    """The TUI's command line; `extra`: claude-print's own additions (--json-schema's
    MCP server), after the user's flags."""
    argv = [binary, "--settings", relay.settings_path]
    if not options.inherit_hooks:
        argv.append("--setting-sources=")
    if session_id is not None:
        argv += ["--session-id", session_id]
    argv += options.forwarded
    argv += extra
    argv += permissions.mode_flags(
        facts,
        asked=options.skip_permissions or options.permission_mode is not None,
        reads_user_settings=options.inherit_hooks,
        cwd=os.getcwd(),
        environ=os.environ,
    )
    if delivery == "argv":
        argv += ["--", options.prompt]
    return argv


def delivery_notes(prompt: str, delivery: str, facts: contract.Facts) -> List[str]:
    """What the model will receive differently from the prompt, for --verbose."""
    exact = " (use --prompt-via argv for a byte-exact prompt, up to 128 KiB)"
    notes = []
    trailing = len(prompt) - len(prompt.rstrip())
    if delivery in ("editor", "paste") and trailing:
        notes.append(
            f"the input box trims the prompt's {trailing} trailing whitespace character(s)" + exact
        )
    if delivery == "paste" and "\t" in prompt:
        notes.append(
            f"the prompt has {prompt.count(chr(9))} tab(s): a paste turns each into four "
            "spaces" + exact
        )
    if delivery == "paste" and facts.paste_wraps and (len(prompt) > 800 or prompt.count("\n") > 2):
        notes.append(
            f"Claude Code {facts.version or '(this release)'} hands a paste this large to the "
            "model inside <pasted_content> tags (--prompt-via editor does not)"
        )
    return notes


def paste_keys(prompt: str) -> bytes:
    """The prompt as one bracketed paste (Enter follows once the input box shows it)."""
    return contract.PASTE_START + prompt.encode("utf-8") + contract.PASTE_END


class Session:
    """One run of the TUI. `run()` returns the exit code; `close()` always cleans up."""

    def __init__(self, options: Options, trace: Trace, emitter: Emitter, started: float) -> None:
        self.options = options
        self.trace = trace
        self.emitter = emitter
        self.started = started
        self.deadline = started + options.timeout
        self.cwd = os.getcwd()
        self.session_id: Optional[str] = options.session_id or (
            None if options.resume else new_session_id()
        )
        self.delivery = choose_delivery(options)
        self.screen = Screen(contract.WINDOW_COLS, contract.WINDOW_ROWS)
        self.unrendered = bytearray()
        self.probes = ProbeResponder(
            rows=contract.WINDOW_ROWS,
            cols=contract.WINDOW_COLS,
            cursor=lambda: self.screen.cursor,
            # Unanswered, the TUI skips its follow-up queries (DECRQM, a second DA1)
            # and reports no terminal name in its telemetry.
            answer_xtversion=False,
        )
        self.relay: Optional[Relay] = None
        self.child: Optional[PtyChild] = None
        self.outbox = bytearray()
        # Keys wait in line, each sent once the TUI has been quiet for a moment.
        self.pending_keys: List[bytes] = []
        self.last_output = started
        self.last_key = started
        self.pasted_at: Optional[float] = None
        self.submitted_at: Optional[float] = None
        self.enter_presses = 0
        self.answered: Dict[str, Tuple[float, Optional[int]]] = {}  # kind -> (when, caret)
        self.unknown_since: Optional[float] = None
        self.denials: List[Dict[str, Any]] = []
        self._tool_names: Dict[str, str] = {}  # tool_use id -> tool name, for stream events
        self.tail: Optional[TranscriptTail] = None
        self.records: List[Dict[str, Any]] = []
        self.converter: Optional[StreamConverter] = None
        self.next_tail = 0.0
        self.facts = contract.facts_for(release.installed_version(options.claude_binary))
        self.claude_version = self.facts.version
        emitter.release = self.claude_version
        self.init_sent = False
        self.closed_at: Optional[float] = None
        self.hooks_seen = 0
        self.stop_event: Optional[HookEvent] = None
        # Asking hooks waiting for our decision, with when they arrived.
        self.asks: List[Tuple[HookEvent, float]] = []
        self.budget_spent = False
        self.structured_max: Optional[int] = None  # --json-schema: rejected calls allowed
        self.settle_until = 0.0
        self.interrupted: Optional[int] = None
        self._wake_r = self._wake_w = -1
        self._old_handlers: Dict[int, Any] = {}
        self._old_wakeup = -1

    # --- setup / teardown -------------------------------------------------

    def _install_signals(self) -> None:
        self._wake_r, self._wake_w = os.pipe()
        for fd in (self._wake_r, self._wake_w):
            os.set_blocking(fd, False)
            os.set_inheritable(fd, False)
        self._old_wakeup = signal.set_wakeup_fd(self._wake_w)
        for signum in SIGNALS:
            self._old_handlers[signum] = signal.signal(signum, self._on_signal)

    def _json_schema(self) -> Optional[Dict[str, Any]]:
        """--json-schema as this release's `claude -p` takes it (None: no tool)."""
        if self.options.json_schema is None:
            return None
        from claude_print import mcp_structured
        from claude_print.schema_check import SchemaError

        version = contract.parse_version(self.claude_version) or (99,)
        strict = version >= STRICT_SCHEMA_FROM
        try:
            schema = mcp_structured.parse_schema_argument(self.options.json_schema, strict)
        except SchemaError as exc:
            raise ClaudePrintError(str(exc)) from None
        if schema is not None and not strict and not mcp_structured.usable_schema(schema, True):
            self.trace("--json-schema: Claude Code of this release would ignore this schema")
            return None
        return schema

    @property
    def wants_bypass(self) -> bool:
        """Bypass mode was asked for: its warning screen is skipped (settings) or accepted."""
        return (
            self.options.skip_permissions
            or self.options.permission_mode == "bypassPermissions"
            or "--allow-dangerously-skip-permissions" in self.options.forwarded
        )

    def _on_signal(self, signum: int, frame: Optional[FrameType]) -> None:
        if self.interrupted is None:
            self.interrupted = signum

    def close(self) -> None:
        if self.child is not None:
            code = self.child.terminate(TEARDOWN_GRACE)
            self.trace(f"child {self.child.pid} ended with status {code}")
            self.child = None
        if self.options.no_session_persistence and self.tail is not None:
            from claude_print.transcript import forget_session

            for path in forget_session(self.tail.path):
                self.trace(f"--no-session-persistence: removed {path}")
        if self.relay is not None:
            self.relay.close()
            self.relay = None
        for signum, handler in self._old_handlers.items():
            signal.signal(signum, handler)
        self._old_handlers.clear()
        if self._wake_r >= 0:
            signal.set_wakeup_fd(self._old_wakeup)
            os.close(self._wake_r)
            os.close(self._wake_w)
            self._wake_r = self._wake_w = -1

    def start(self) -> None:
        self._install_signals()
        # Asked-for bypass mode: skip its warning through our settings file, because
        # answering the screen makes Claude Code write the choice into ~/.claude.
        extra = dict(contract.QUIET_TUI_SETTINGS)
        if self.wants_bypass:
            extra[contract.SKIP_BYPASS_SETTING] = True
        too_new = flags.too_new(self.options.forwarded, self.claude_version)
        if too_new:
            raise ClaudePrintError(too_new)
        leftovers.sweep_at_start()  # relay dirs of runs killed with SIGKILL
        asking = (contract.HOOK_PRE_TOOL_USE,) if self.options.max_budget_usd else ()
        schema = self._json_schema()
        self.relay = Relay(
            extra_settings=extra,
            max_turns=self.options.max_turns,
            asking=asking,
            user_settings=self.options.user_settings,
            structured=schema is not None,
        )
        own: List[str] = []
        if schema is not None:
            from claude_print import mcp_structured

            self.structured_max = mcp_structured.max_attempts()
            config = self.relay.stage_structured(schema, self.structured_max)
            # Pre-allowed: claude-print's PermissionRequest hook would deny it.
            own = ["--mcp-config", config, "--allowedTools", mcp_structured.QUALIFIED_NAME]
        argv = build_argv(
            self.options,
            self.options.claude_binary,
            self.relay,
            self.session_id,
            self.delivery,
            self.facts,
            own,
        )
        self.trace(
            f"relay dir {self.relay.dir}; prompt via {self.delivery} ({self.options.prompt_source})"
        )
        for note in delivery_notes(self.options.prompt, self.delivery, self.facts):
            self.trace(note)
        env = child_environment(os.environ)
        scrubbed = scrubbed_names(os.environ)
        if scrubbed:
            self.trace(f"not passed to Claude Code: {' '.join(scrubbed)}")
        if self.delivery == "editor":
            from claude_print.relay import USER_EDITOR_VAR

            user_editor = env.get("VISUAL") or env.get("EDITOR")
            if user_editor:
                env[USER_EDITOR_VAR] = user_editor
            env["VISUAL"] = env["EDITOR"] = self.relay.stage_prompt(self.options.prompt)
        self.child = PtyChild(argv, env, cwd=self.cwd)
        self.trace(f"spawned {self.options.claude_binary} as pid {self.child.pid}")
        if self.claude_version:
            self.trace(f"Claude Code {self.claude_version} (from its package){self._drift()}")
        if self.session_id is not None:
            from claude_print.transcript import transcript_path

            home = os.path.expanduser("~")
            config_dir = os.environ.get("CLAUDE_CONFIG_DIR")
            self._open_tail(transcript_path(home, self.cwd, self.session_id, config_dir=config_dir))

    def _open_tail(self, path: str) -> None:
        from claude_print.stream import StreamConverter
        from claude_print.transcript import TranscriptTail

        self.tail = TranscriptTail(path)
        if self.emitter.streams_events and self.session_id:
            self.converter = StreamConverter(self.session_id)

    def _emit_init(self, model: str = "") -> None:
        """stream-json's first line, sent once the first record tells the model in use."""
        if self.init_sent or self.session_id is None:
            return
        self.init_sent = True
        from claude_print.stream import init_event

        memory = os.path.join(os.path.dirname(self.tail.path), "memory", "") if self.tail else None
        self.emitter.event(
            init_event(
                cwd=self.cwd,
                session_id=self.session_id,
                model=model or self.options.model or "",
                permission_mode=self.options.permission_mode
                or ("bypassPermissions" if self.options.skip_permissions else "default"),
                claude_version=self.claude_version,
                api_key_source="ANTHROPIC_API_KEY"
                if os.environ.get("ANTHROPIC_API_KEY")
                else "none",
                analytics_disabled=bool(os.environ.get("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC")),
                memory_paths={"auto": memory} if memory else None,
            )
        )

    # --- the loop ---------------------------------------------------------

    def run(self) -> int:
        self.start()
        assert self.child is not None and self.relay is not None
        child, relay = self.child, self.relay
        while True:
            now = time.monotonic()
            if self.interrupted is not None:
                raise Interrupted(self.interrupted)
            if now >= self.deadline:
                raise ClaudePrintError(
                    f"timed out after {self.options.timeout:g}s", EXIT_TIMEOUT, "error_timeout"
                )
            self._flush_keys(now)
            readers = [child.fd, relay.read_fd, self._wake_r]
            writers = [child.fd] if self.outbox else []
            ready_r, ready_w, _ = select.select(readers, writers, [], self._wait_time(now))
            now = time.monotonic()
            if self._wake_r in ready_r:
                _drain(self._wake_r)
            if child.fd in ready_r:
                self._on_output(child.read(), now)
            if child.fd in ready_w and self.outbox:
                del self.outbox[: child.write_some(bytes(self.outbox[: contract.PASTE_CHUNK]))]
            if relay.read_fd in ready_r:
                for event in relay.read_events():
                    code = self._on_hook(event, now)
                    if code is not None:
                        return code
            if self.asks:
                self._serve_asks(now)
                if self.budget_spent:
                    return self._budget_exhausted(self._turn())
            if self.stop_event is not None:
                gone = child.eof or child.returncode() is not None
                code = self._try_finish(force=gone or now >= self.settle_until)
                if code is not None:
                    return code
                continue
            if self.submitted_at is None:
                self._on_screen(now)
            elif now >= self.next_tail:
                code = self._on_tail(now)
                if code is not None:
                    return code
            if child.eof or child.returncode() is not None:
                self._on_child_exit()

    def _wait_time(self, now: float) -> float:
        wake = [self.deadline]
        if self.stop_event is not None or self.asks:
            wake.append(now + TRANSCRIPT_POLL)
        if self.pending_keys:
            wake.append(max(self.last_output, self.last_key) + contract.QUIET_BEFORE_KEYS)
        if self.submitted_at is None:
            wake.append(now + 0.1)  # dialog quiet gaps, screen grace periods, startup deadline
        elif self.tail is not None and (
            self.converter or self.options.max_turns or self.structured_max is not None
        ):
            wake.append(self.next_tail)
        else:
            wake.append(now + 1.0)  # child liveness
        return max(0.0, min(wake) - now)

    def _flush_keys(self, now: float) -> None:
        quiet_since = max(self.last_output, self.last_key)
        if (
            self.pending_keys
            and not self.outbox
            and now - quiet_since >= contract.QUIET_BEFORE_KEYS
        ):
            self.outbox += self.pending_keys.pop(0)
            self.last_key = now

    def _on_output(self, data: bytes, now: float) -> None:
        if not data:
            return
        self.last_output = now
        if self.submitted_at is None:
            self.screen.feed(data)  # first, so a cursor-position reply sees this chunk
        else:
            # Nothing is read off the screen during the turn: keep the bytes and
            # render them only if a failure message needs the screen.
            self.unrendered += data
            if len(self.unrendered) > UNRENDERED_LIMIT:
                del self.unrendered[: len(self.unrendered) - UNRENDERED_LIMIT]
                self.screen = Screen(contract.WINDOW_COLS, contract.WINDOW_ROWS)
        for reply in self.probes.feed(data):
            self.outbox += reply
        if not self.claude_version and self.submitted_at is None:
            version = screens.claude_version_on_screen(self.screen.lines())
            if version:
                self._learn_version(version, "its welcome banner")

    def _learn_version(self, version: str, source: str) -> None:
        """A release learned after the spawn: later phases use its facts."""
        self.facts = contract.facts_for(version)
        self.claude_version = version
        self.emitter.release = version
        self.trace(f"Claude Code {version} (from {source}){self._drift()}")

    def _drift(self) -> str:
        """How the running release relates to the tested range ("" when inside it)."""
        if self.facts.tested:
            return ""
        if not self.facts.version:
            return f"; release unknown: using the facts of {contract.NEWEST_TESTED}"
        if contract.older_than_supported(self.facts.version):
            return (
                f"; older than the oldest supported release ({contract.OLDEST_SUPPORTED}): "
                "update Claude Code"
            )
        return (
            f"; newer than tested ({contract.OLDEST_SUPPORTED} to {contract.NEWEST_TESTED}): "
            f"using the facts of {contract.NEWEST_TESTED}"
        )

    # --- startup screens --------------------------------------------------

    def _on_screen(self, now: float) -> None:
        if self.pending_keys or self.outbox:
            return
        lines = self.screen.lines()
        if self.pasted_at is not None:
            self._await_paste(lines, now, self.pasted_at)
            return
        state = screens.classify(lines)
        if state.kind in ("trust", "bypass"):
            self.unknown_since = None
            self._answer(state, now)
        elif state.kind in screens.BLOCKING_ADVICE:
            raise ClaudePrintError(self._screen_message(screens.BLOCKING_ADVICE[state.kind], lines))
        elif state.kind == "ready":
            if self.delivery == "editor":
                self._open_editor(now)
            elif self.delivery == "paste":
                self._paste(now)
            else:
                self.trace("input box ready; the argv prompt submits itself")
                self.submitted_at = now
        elif state.kind == "choice":
            self.unknown_since = self.unknown_since or now
            if now - self.unknown_since >= UNKNOWN_SCREEN_GRACE and now - self.last_output >= 1.0:
                raise ClaudePrintError(
                    self._screen_message(
                        "Claude Code shows a screen claude-print does not know", lines
                    )
                )
        elif self.delivery == "argv" and self.tail is not None and os.path.exists(self.tail.path):
            self.submitted_at = now  # the argv prompt went in by itself: its transcript exists
        if (
            self.submitted_at is None
            and self.delivery == "argv"
            and self.options.prompt.startswith("/")
            and now - self.started >= PROMPT_ARRIVAL_GRACE
        ):
            # 2.1.330 opens a built-in command's panel instead of the input box.
            raise ClaudePrintError(
                self._screen_message(
                    f"the prompt started no turn within {PROMPT_ARRIVAL_GRACE:g}s{SLASH_HINT}",
                    lines,
                )
            )
        if self.submitted_at is None and now - self.started >= STARTUP_TIMEOUT:
            what = "drew nothing" if not any(lines) else "never showed its input box"
            raise ClaudePrintError(
                self._screen_message(f"Claude Code {what} within {STARTUP_TIMEOUT:g}s", lines)
            )

    def _answer(self, state: screens.ScreenState, now: float) -> None:
        if now - max(self.last_output, self.last_key) < contract.QUIET_BEFORE_DIALOG_KEYS:
            return  # the dialog may still be mounting: a key now can be lost
        if state.kind == "bypass":
            if not self.wants_bypass:
                raise ClaudePrintError(
                    self._screen_message(
                        "Claude Code asks to accept bypass-permissions mode (not asked for)",
                        self._lines(),
                    )
                )
            label = contract.BYPASS_ACCEPT
        else:
            label = contract.TRUST_ACCEPT
        key = screens.next_key(state, label)
        if key is None:
            raise ClaudePrintError(
                self._screen_message(
                    f"cannot find {label!r} on the {state.kind} screen", self._lines()
                )
            )
        # The same key again only when the screen did not react to it: an arrow that
        # left the caret where it was was lost; an Enter that left the dialog up, too.
        last = self.answered.get(state.kind)
        wait = REANSWER_AFTER if key == contract.KEY_ENTER else ARROW_RETRY
        if last is not None and last[1] == state.selected and now - last[0] < wait:
            return
        choice = state.choices[state.selected or 0]
        action = "Enter" if key == contract.KEY_ENTER else f"moving to {label!r}"
        self.trace(f"{state.kind} screen: caret on {choice!r}; {action}")
        self.answered[state.kind] = (now, state.selected)
        self.pending_keys.append(key)

    def _open_editor(self, now: float) -> None:
        """Ctrl+G: the box loads the staged prompt through our $EDITOR script."""
        self.pasted_at = now
        self.pending_keys.append(contract.KEY_EXTERNAL_EDITOR)
        self.trace(f"input box ready; loading {len(self.options.prompt)} chars with Ctrl+G")

    def _paste(self, now: float) -> None:
        self.pasted_at = now
        self.pending_keys.append(paste_keys(self.options.prompt))
        self.trace(f"input box ready; pasting {len(self.options.prompt)} chars")

    def _await_paste(self, lines: List[str], now: float, pasted_at: float) -> None:
        """Enter goes only once the input box shows the paste: an Enter that races a
        large paste under load can be lost."""
        if screens.input_box_text(lines):
            self.trace(f"the input box shows the prompt ({self.delivery}); pressing Enter")
            if self.delivery == "editor" and self.relay is not None:
                self.relay.unstage_prompt()
            self._press_enter(now)
        elif (
            self.delivery == "editor"
            and now - max(self.last_key, self.last_output) >= ENTER_RETRY_AFTER
            and not (self.pending_keys or self.outbox)
        ):
            self.trace("the input box is still empty; pressing Ctrl+G again")
            self.pending_keys.append(contract.KEY_EXTERNAL_EDITOR)
        elif now - pasted_at >= PROMPT_ARRIVAL_GRACE:
            raise ClaudePrintError(
                self._screen_message(
                    f"the pasted prompt did not show in Claude Code's input box within "
                    f"{PROMPT_ARRIVAL_GRACE:g}s",
                    lines,
                )
            )

    def _press_enter(self, now: float) -> None:
        # At once, not after the quiet gap: the box showing the paste is the frame this
        # key answers, and the TUI is quiet once it is drawn anyway (the gap cost 50 ms).
        self.submitted_at = self.submitted_at or now
        self.enter_presses += 1
        self.outbox += contract.KEY_ENTER
        self.last_key = now

    def _lines(self) -> List[str]:
        """The screen as it is now, rendering any output held back during the turn."""
        if self.unrendered:
            self.screen.feed(bytes(self.unrendered))
            self.unrendered.clear()
        return self.screen.lines()

    def _screen_message(self, what: str, lines: List[str]) -> str:
        """A failure message with the screen's text and, if it drifted, Claude Code's version."""
        if not self.claude_version:
            from claude_print.doctor import claude_version  # only on this failure path

            with contextlib.suppress(ClaudePrintError):
                self.claude_version = claude_version(self.options.claude_binary)
        drift = ""
        if self.claude_version:
            tested = f"{contract.OLDEST_SUPPORTED} to {contract.NEWEST_TESTED}"
            drift = f" (Claude Code {self.claude_version}; tested {tested})"
        excerpt = screens.screen_excerpt(lines)
        return f"{what}{drift}. Screen:\n{excerpt}" if excerpt else f"{what}{drift}."

    # --- hooks, transcript ------------------------------------------------

    def _on_hook(self, event: HookEvent, now: float) -> Optional[int]:
        self.hooks_seen += 1
        self.trace(f"hook {event.name}" + (f" ({event.error})" if event.error else ""))
        payload = event.payload
        if self.session_id is None and isinstance(payload.get("session_id"), str):
            self.session_id = payload["session_id"]
        reported = payload.get("transcript_path")
        if isinstance(reported, str) and (self.tail is None or self.tail.path != reported):
            # The hook knows where the transcript really is; our guess may differ
            # (HOME, CLAUDE_CONFIG_DIR, a resumed session).
            self.trace(f"transcript at {reported}")
            self.records = []
            self._open_tail(reported)
        if event.reply is not None:
            self.asks.append((event, now))
            return None
        if event.name == contract.HOOK_PERMISSION_REQUEST:
            self.denials.append(
                {"tool_name": payload.get("tool_name"), "tool_input": payload.get("tool_input", {})}
            )
            return None
        if event.name in (contract.HOOK_STOP, contract.HOOK_STOP_FAILURE) and not self.stop_event:
            # Stop fires before the TUI's write queue has flushed the turn: from here
            # the loop goes on (reading the PTY, so the TUI never blocks on it) until
            # the transcript holds the whole turn.
            self.stop_event = event
            self.settle_until = time.monotonic() + TRANSCRIPT_SETTLE
            return self._try_finish(force=False)
        return None

    def _serve_asks(self, now: float) -> None:
        """Answer the asking hooks whose decision is ready (in arrival order)."""
        assert self.relay is not None
        self._poll_tail()
        while self.asks:
            event, arrived = self.asks[0]
            if event.name != contract.HOOK_PRE_TOOL_USE:
                decision = None  # nothing of ours asks about other events yet
            elif self._awaits_tool_use(event) and now - arrived < ASK_SETTLE:
                return
            else:
                decision = self._budget_decision()
            self.asks.pop(0)
            self.trace(f"answered {event.name}: {decision or 'no decision'}")
            self.relay.answer(event, decision)

    def _awaits_tool_use(self, event: HookEvent) -> bool:
        """The transcript does not hold the message that asks for this tool yet (a
        subagent's tool calls go to its own transcript: nothing to wait for)."""
        if "agent_id" in event.payload:
            return False
        wanted = event.payload.get("tool_use_id")
        return not any(use.get("id") == wanted for use in self._turn().tool_uses)

    def _budget_decision(self) -> Optional[Dict[str, Any]]:
        """--max-budget-usd: `claude -p` checks the cost after each API call and runs
        no tool of a call that reached the budget; the PreToolUse hook stops there too."""
        budget = self.options.max_budget_usd
        if budget is None or self._turn().total_cost_usd < budget:
            return None
        self.budget_spent = True
        return dict(contract.BUDGET_STOP)

    def _on_tail(self, now: float) -> Optional[int]:
        self.next_tail = now + TAIL_INTERVAL
        self._poll_tail()
        self._check_prompt_arrived(now)
        summary = self._turn()
        if self.options.max_turns and summary.num_turns > self.options.max_turns:
            return self._max_turns(summary)
        if self.structured_max is not None:
            code = self._structured_end(summary)
            if code is not None:
                return code
        if summary.turn_closed:
            # The transcript says the turn is over, yet no Stop/StopFailure came.
            self.closed_at = self.closed_at or now
            if now - self.closed_at >= MISSING_HOOK_GRACE:
                raise ClaudePrintError(
                    self._screen_message(
                        f"the turn ended {MISSING_HOOK_GRACE:g}s ago in the transcript but no "
                        "Stop/StopFailure hook arrived: Claude Code's hooks may have changed",
                        self._lines(),
                    )
                )
        return None

    def _check_prompt_arrived(self, now: float) -> None:
        """The TUI logs a submitted prompt at once; silence means it never got it."""
        if self.records or self.hooks_seen or self.tail is None or self.submitted_at is None:
            return
        if self._enter_lost(now):
            self.trace("the prompt is still in the input box; pressing Enter again")
            self._press_enter(now)
        if now - self.submitted_at >= PROMPT_ARRIVAL_GRACE:
            hint = SLASH_HINT if self.options.prompt.startswith("/") else ""
            raise ClaudePrintError(
                self._screen_message(
                    f"the prompt did not reach Claude Code within {PROMPT_ARRIVAL_GRACE:g}s "
                    f"(no transcript at {self.tail.path}{hint})",
                    self._lines(),
                )
            )

    def _enter_lost(self, now: float) -> bool:
        return (
            self.delivery in ("editor", "paste")
            and self.enter_presses < ENTER_PRESSES
            and not (self.pending_keys or self.outbox)
            and now - self.last_key >= ENTER_RETRY_AFTER
            and now - self.last_output >= ENTER_RETRY_QUIET
            and bool(screens.input_box_text(self._lines()))
        )

    def _poll_tail(self) -> None:
        if self.tail is not None:
            for record in self.tail.poll():
                self._take(record)

    def _take(self, record: Dict[str, Any]) -> None:
        if record.get("sessionId") != self.session_id:
            return  # another session's record, or bookkeeping without a session
        self.records.append(record)
        if self.converter is not None:
            self._emit_stream(self.converter.feed(record))

    def _emit_stream(self, events: List[Dict[str, Any]]) -> None:
        for event in events:
            if event.get("type") == "assistant":
                self._emit_init(str(event.get("message", {}).get("model", "")))
                self._tool_names.update(_tool_names(event))
            self._emit_init()
            if event.get("type") == "user" and self.facts.permission_denied_event:
                for tool_use_id in _denied_tool_use_ids(event):
                    self.emitter.event(self._permission_denied(tool_use_id))
            self.emitter.event(event)

    def _permission_denied(self, tool_use_id: str) -> Dict[str, Any]:
        """stream-json's note on a denied tool (2.1.238 on), before its tool result."""
        from claude_print.cli import new_session_id

        return {
            "type": "system",
            "subtype": "permission_denied",
            "tool_name": self._tool_names.get(tool_use_id, ""),
            "tool_use_id": tool_use_id,
            "message": contract.DENY_MESSAGE,
            "uuid": new_session_id(),
            "session_id": self.session_id or "",
        }

    def _turn(self) -> TurnSummary:
        from claude_print.transcript import summarise, turn_records

        return summarise(turn_records(self.records, self.session_id or ""))

    def _try_finish(self, force: bool) -> Optional[int]:
        """The result once the turn is on disk (or, with `force`, with what there is)."""
        from claude_print.output import result_object

        assert self.stop_event is not None
        event = self.stop_event
        self._poll_tail()
        summary = self._turn()
        if not summary.complete and not force:
            return None
        if self.child is not None:
            # The turn is on disk: let the TUI shut down while we print. (Not
            # before: a SIGTERM can drop records still in its write queue.)
            self.child.request_exit()
        if self.options.max_turns and summary.num_turns > self.options.max_turns:
            return self._max_turns(summary)
        budget = self.options.max_budget_usd
        if budget is not None and summary.complete and summary.total_cost_usd >= budget:
            return self._budget_exhausted(summary)
        if not summary.complete:
            fallback = event.payload.get("last_assistant_message")
            if not isinstance(fallback, str):
                where = self.tail.path if self.tail else "no transcript path"
                raise ClaudePrintError(f"the turn ended but its transcript has no answer ({where})")
            self.trace("transcript incomplete; using the hook's last_assistant_message")
            summary.result_text = fallback
            summary.is_api_error = summary.is_api_error or event.name == contract.HOOK_STOP_FAILURE
        self._settle_cost(summary)
        self._flush_stream()
        denials = summary.permission_denials or _denials_with_ids(self.denials, summary.tool_uses)
        obj = result_object(
            summary,
            session_id=self.session_id or "",
            duration_ms=_ms(time.monotonic() - self.started),
            duration_api_ms=summary.api_duration_ms,
            permission_denials=denials,
            claude_version=self.claude_version,
        )
        self.emitter.result(obj)
        self.trace(f"result printed ({obj['subtype']}, is_error={obj['is_error']})")
        return EXIT_ASSISTANT_ERROR if obj["is_error"] else EXIT_OK

    def _settle_cost(self, summary: TurnSummary) -> None:
        """Report the TUI's own cost (its cost-state record, written as it exits) when it
        is `claude -p`'s cost too: no session-title request went into it (an `ai-title`
        record says one did), or claude-print's price table lacks a model."""
        from claude_print import pricing, tui_cost

        unpriced = [m for m in summary.model_usage if pricing.price_for(m) is None]
        if not self.facts.cost_state or self.child is None or (self._titled() and not unpriced):
            self.trace("cost from claude-print's price table")
            return
        self.child.request_exit()
        code = self.child.wait_exit(COST_STATE_WAIT)
        self._poll_tail()
        record = tui_cost.last_cost_state(self.records)
        if record is None or (self._titled() and not unpriced):
            why = "no cost-state record" if record is None else "the TUI's cost has a title request"
            missing = f", which does not know {', '.join(unpriced)}" if unpriced else ""
            self.trace(f"{why} (child status {code}); cost from the price table{missing}")
            return
        summary.total_cost_usd = tui_cost.apply(record, summary.total_cost_usd, summary.model_usage)
        extra = " (it includes the TUI's session-title request)" if self._titled() else ""
        self.trace(f"cost from the TUI's cost-state record: {summary.total_cost_usd}{extra}")

    def _titled(self) -> bool:
        return any(record.get("type") == "ai-title" for record in self.records)

    def _flush_stream(self) -> None:
        if self.converter is not None:
            self._emit_stream(self.converter.flush())
        if self.emitter.streams_events:
            self._emit_init()

    def _structured_end(self, summary: TurnSummary) -> Optional[int]:
        """--json-schema: the turn is over once the server accepted a call (success) or
        rejected the last allowed one (error_max_structured_output_retries)."""
        from claude_print import mcp_structured as ms
        from claude_print.output import ERROR_MAX_STRUCTURED_OUTPUT_RETRIES

        value = ms.structured_result(summary.tool_uses, summary.tool_results)
        version = contract.parse_version(self.claude_version) or (99,)
        if value is not None:
            return self._structured_success(summary, value, version)
        failed = ms.failed_attempts(summary.tool_uses, summary.tool_results)
        if self.structured_max is None or failed < self.structured_max:
            return None
        message = ms.retries_message(
            failed, ms.last_failure(self.records), detailed=version >= ms.DETAILED_FROM
        )
        reason = ms.RETRY_TERMINAL_REASON if self.facts.limit_terminal_reasons else None
        return self._cut_short(
            summary,
            ERROR_MAX_STRUCTURED_OUTPUT_RETRIES,
            message,
            summary.num_turns,
            reason,
            usage=summary.usage,
        )

    def _structured_success(
        self, summary: TurnSummary, value: Dict[str, Any], version: Tuple[int, ...]
    ) -> int:
        from claude_print import mcp_structured as ms
        from claude_print.output import result_object

        if self.child is not None:
            self.child.request_exit()
        self._settle_cost(summary)
        self._flush_stream()
        summary.stop_reason = "tool_use"
        obj = result_object(
            summary,
            session_id=self.session_id or "",
            duration_ms=_ms(time.monotonic() - self.started),
            duration_api_ms=summary.api_duration_ms,
            permission_denials=summary.permission_denials
            or _denials_with_ids(self.denials, summary.tool_uses),
            claude_version=self.claude_version,
        )
        self.emitter.result(obj, lambda o: ms.with_structured_output(o, value, version))
        self.trace("result printed (success, structured_output)")
        return EXIT_OK

    def _max_turns(self, summary: TurnSummary) -> int:
        """`claude -p` stops before the API call that would pass the limit; so do we."""
        from claude_print.output import ERROR_MAX_TURNS

        limit = self.options.max_turns or 0
        message = f"Reached maximum number of turns ({limit})"
        return self._cut_short(
            summary, ERROR_MAX_TURNS, message, limit + 1, "max_turns", usage=summary.usage
        )

    def _budget_exhausted(self, summary: TurnSummary) -> int:
        """`claude -p --max-budget-usd`: the result of the call that reached the budget,
        with its cost but zero `usage` and API time, as `claude -p` reports it."""
        from claude_print.output import ERROR_MAX_BUDGET_USD, budget_message

        assert self.options.max_budget_usd is not None
        message = budget_message(self.options.max_budget_usd)
        return self._cut_short(
            summary,
            ERROR_MAX_BUDGET_USD,
            message,
            summary.num_turns,
            "budget_exhausted" if self.facts.limit_terminal_reasons else None,
        )

    def _cut_short(
        self,
        summary: TurnSummary,
        subtype: str,
        message: str,
        num_turns: int,
        terminal_reason: Optional[str],
        usage: Optional[Dict[str, Any]] = None,
    ) -> int:
        """An error result for a turn claude-print ended on `claude -p`'s terms."""
        from claude_print.output import error_object

        if self.child is not None:
            self.child.request_exit()
        self._settle_cost(summary)
        self._flush_stream()
        obj = error_object(
            subtype,
            message,
            session_id=self.session_id or "",
            duration_ms=_ms(time.monotonic() - self.started),
            num_turns=num_turns,
            usage=usage,
            total_cost_usd=summary.total_cost_usd,
            model_usage=summary.model_usage,
            permission_denials=summary.permission_denials
            or _denials_with_ids(self.denials, summary.tool_uses),
            stop_reason=summary.stop_reason,
            claude_version=self.claude_version,
            terminal_reason=terminal_reason,
        )
        self.emitter.result(obj)
        self.trace(f"result printed ({subtype})")
        return EXIT_ASSISTANT_ERROR

    def _on_child_exit(self) -> None:
        assert self.child is not None
        while True:  # its last words
            data = self.child.read()
            if not data:
                break
            self.unrendered += data
        code = self.child.terminate(0.5)
        self.child = None
        raise ClaudePrintError(
            self._screen_message(
                f"Claude Code exited (status {code}) before answering", self._lines()
            )
        )


def _tool_names(event: Dict[str, Any]) -> Dict[str, str]:
    content = event.get("message", {}).get("content")
    blocks = content if isinstance(content, list) else []
    return {
        str(b.get("id")): str(b.get("name"))
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "tool_use"
    }


def _denied_tool_use_ids(event: Dict[str, Any]) -> List[str]:
    """Tool results that carry claude-print's own PermissionRequest denial."""
    content = event.get("message", {}).get("content")
    blocks = content if isinstance(content, list) else []
    return [
        str(b.get("tool_use_id"))
        for b in blocks
        if isinstance(b, dict)
        and b.get("type") == "tool_result"
        and b.get("is_error")
        and b.get("content") == contract.DENY_MESSAGE
    ]


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


def _denials_with_ids(
    denials: List[Dict[str, Any]], tool_uses: List[Dict[str, Any]]
) -> List[Dict[str, Any]]:
    """Match each denied PermissionRequest to its tool_use block for the id `claude -p` reports."""
    out = []
    used: List[str] = []
    for denial in denials:
        tool_id = ""
        for use in tool_uses:
            if (
                use.get("id") not in used
                and use.get("name") == denial["tool_name"]
                and use.get("input") == denial["tool_input"]
            ):
                tool_id = str(use.get("id"))
                used.append(tool_id)
                break
        out.append(
            {
                "tool_name": denial["tool_name"],
                "tool_use_id": tool_id,
                "tool_input": denial["tool_input"],
            }
        )
    return out


def run(options: Options) -> int:
    started = time.monotonic()
    trace = Trace(options.verbose, started)
    emitter = Emitter(options.output_format, options.verbose)
    try:
        session = Session(options, trace, emitter, started)
    except ClaudePrintError as exc:
        report_failure(exc, options.output_format)
        return exc.exit_code
    try:
        return session.run()
    except ClaudePrintError as exc:
        report_failure(
            exc,
            options.output_format,
            session_id=session.session_id or "",
            duration_ms=_ms(time.monotonic() - started),
            claude_version=session.claude_version,
        )
        return exc.exit_code
    except Interrupted as exc:
        if session.child is not None:
            session.child.signal_group(exc.signum)
        report_failure(
            ClaudePrintError(f"interrupted by {exc}", EXIT_INTERRUPTED, "error_interrupted"),
            options.output_format,
            session_id=session.session_id or "",
            duration_ms=_ms(time.monotonic() - started),
            claude_version=session.claude_version,
        )
        return EXIT_INTERRUPTED
    finally:
        session.close()


__all__ = ["report_failure", "run"]
