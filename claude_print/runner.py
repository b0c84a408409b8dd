"""The orchestrator: one event loop that owns the child, the relay and the clock.

A run reads as phases:

- boot: set up the relay, spawn Claude Code on a PTY, answer probes and startup screens
  until the input box is up (an argv prompt submits itself there);
- turn, once per prompt: deliver it, await the Stop hook, read the transcript, emit the
  result (the one prompt of `claude -p`, or each `user` message of stream-json input);
- shutdown: tear the child and the relay down.

Each phase is a step function that `_pump` calls after every batch of I/O until it
returns a value; the pump alone reads the PTY, the hook FIFO, stdin and the signal pipe.
Everything else is a plain function or a small class; only this module sees the whole.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time
from types import FrameType
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    List,
    Optional,
    TypeVar,
)

from claude_print import (
    contract,
    flags,
    hook_events,
    launch,
    leftovers,
    permissions,
    release,
    screens,
    turn_end,
)
from claude_print.asking import AskingHooks
from claude_print.boot import READY, StartupScreens
from claude_print.delivery import (
    DELIVERED,
    Delivery,
    normalisation_notes,
    paste_refusal,
    sent_forms,
)
from claude_print.delivery import GRACE as PROMPT_ARRIVAL_GRACE
from claude_print.emit import Emitter, Finish, Trace, report_failure
from claude_print.errors import (
    EXIT_ASSISTANT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TIMEOUT,
    ClaudePrintError,
)
from claude_print.hook_events import HookRun, HookWatch
from claude_print.options import Options, choose_delivery, new_session_id
from claude_print.pty_session import PtyChild, scrubbed_names
from claude_print.relay import EDITOR_EVENT, HookEvent, Relay
from claude_print.stream_out import StreamOut
from claude_print.tui_screen import TuiScreen
from claude_print.turn import Turn
from claude_print.turn_end import Ending

# output, stream and transcript (json, calendar, datetime ...) are imported where they
# are first used, after the TUI has been spawned: its boot hides their cost.
if TYPE_CHECKING:
    from claude_print.stream_input import ControlChannel, Prompt
    from claude_print.transcript import TranscriptTail, TurnSummary

T = TypeVar("T")
# stream-json input: the Agent SDK sends `initialize` at once and waits 60 s for the answer.
FIRST_MESSAGE_WAIT = 60.0
# After Esc, the interruption is reported after this at the latest.
INTERRUPT_SETTLE = 3.0

STARTUP_TIMEOUT = float(os.environ.get("CLAUDE_PRINT_STARTUP_TIMEOUT", "60"))
TRANSCRIPT_SETTLE = 3.0  # how long to wait for the final record after Stop
EXACT_HINT = " (use --prompt-via argv for a byte-exact prompt, up to 128 KiB)"
SLASH_HINT = (
    "; a prompt starting with '/' runs a slash command in the TUI, and built-in ones like "
    "/help or /cost start no model turn"
)
MISSING_HOOK_GRACE = 10.0  # a finished turn without a Stop hook: drift, not a hang
TRANSCRIPT_POLL = 0.01  # the TUI flushes its transcript queue every 100 ms
TAIL_INTERVAL = 0.05
STOP_SUMMARY_WAIT = 1.0  # --include-hook-events: how long a Stop waits for the hooks' summary
STUCK_DIALOG_QUIET = 1.5  # a turn this quiet is read off the screen for a dialog no hook answers
TEARDOWN_GRACE = 2.0
# The reasons of claude-print's own `continue: false` answers start with this.
OWN_STOP_PREFIX = "claude-print:"
# After Stop, a TUI this quiet is read off the screen: idle there, the turn is over.
STOP_CLOSE_QUIET = 1.5
# The TUI writes its cost-state record as it exits after SIGTERM (0.1-1.5 s alone, up to
# ~4 s with 20 at once, measured): how long the result waits for it.
COST_STATE_WAIT = 5.0
# --json-schema: `claude -p` rejects an unusable schema argument from this release (older
# ones run without the tool); measured on 2.1.330, not bisected.
STRICT_SCHEMA_FROM = (2, 1, 330)
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


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
        # stream-json input: many turns in one TUI, prompts typed in as they arrive.
        self.channel: Optional[ControlChannel] = None
        self.facts = contract.facts_for(release.installed_version(options.claude_binary))
        if options.input_format == "stream-json":
            from claude_print.stream_input import ControlChannel

            mode = options.permission_mode or (
                "bypassPermissions" if options.skip_permissions else "default"
            )
            self.channel = ControlChannel(self.emitter, self.trace, self.facts, mode)
            self.channel.can_use_tool = options.permission_prompt_tool == "stdio"
        self.delivery = "editor" if self.channel else choose_delivery(options)
        if self.channel and options.prompt_via == "paste":
            self.delivery = "paste"
        self.tui = TuiScreen()
        self.rendering = True  # the screen is read (boot, delivery); else bytes are kept
        self.relay: Optional[Relay] = None
        self.child: Optional[PtyChild] = None
        self.outbox = bytearray()
        # Keys wait in line, each sent once the TUI has been quiet for a moment.
        self.pending_keys: List[bytes] = []
        self.last_output = started
        self.last_key = started
        self.screens = StartupScreens(launch.wants_bypass(options), self._screen_error, trace)
        self.turn = Turn(options.prompt, self.delivery, started)
        self.delivering: Optional[Delivery] = None  # the prompt on its way into the box
        self.turns = 0  # results emitted
        self.totals = turn_end.SessionTotals()  # stream-json input: cost over the results
        self.tail: Optional[TranscriptTail] = None
        self.records: List[Dict[str, Any]] = []
        self.stream = StreamOut(
            emitter, lambda: self.facts, lambda: self.hook_watch, self._emit_init
        )
        self.stream.model = options.model or ""
        self.next_tail = 0.0
        self.claude_version = self.facts.version
        emitter.release = self.claude_version
        self.asks = AskingHooks(self._answer, trace, options.max_budget_usd, self.channel)
        self.structured_max: Optional[int] = None  # --json-schema: rejected calls allowed
        self.mcp_ready_at: Optional[float] = None  # the MCP servers' tools were listed
        self.mcp_settled = False  # the first prompt has waited for them
        self.files_done = False  # --file downloads made
        # stream-json shows runs of the user's hooks (SessionStart's, or all of them).
        self.reports_hooks = options.output_format == "stream-json"
        self.reported_hooks = hook_events.reported_events(options.include_hook_events)
        self.hook_watch = HookWatch([])
        self.others_stop_hooks = True  # a Stop of ours may not end the turn (start())
        self.interrupted: Optional[int] = None
        self._wake_r = self._wake_w = -1
        self._old_handlers: Dict[int, Any] = {}
        self._old_wakeup = -1

    @property
    def multi_turn(self) -> bool:
        return self.channel is not None

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

    def _on_signal(self, signum: int, frame: Optional[FrameType]) -> None:
        if self.interrupted is None:
            self.interrupted = signum

    def close(self) -> None:
        """Shutdown: the child, the transcript (--no-session-persistence), the relay."""
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
        too_new = flags.too_new(self.options.forwarded, self.claude_version)
        if too_new:
            raise ClaudePrintError(too_new)
        if self.options.files:
            from claude_print import file_downloads

            if not os.environ.get(file_downloads.TOKEN_VAR):
                raise ClaudePrintError(file_downloads.NO_TOKEN, EXIT_ASSISTANT_ERROR)
            self._download_files(self._files_session())
        leftovers.sweep_at_start()  # relay dirs of runs killed with SIGKILL
        if self.channel is not None:
            self._await_initialize()
        schema = self._json_schema()
        self.relay = relay = launch.make_relay(
            self.options, self.delivery, self.channel, schema is not None, self.reported_hooks
        )
        self.hook_watch = HookWatch(relay.watched)
        from claude_print.user_hooks import stop_hooks_possible

        self.others_stop_hooks = bool(self.channel and self.channel.relay_hooks()) or (
            stop_hooks_possible(
                permissions.setting_sources(self.options.inherit_hooks, self.options.forwarded),
                self.cwd,
                os.environ,
                self.options.user_settings,
            )
        )
        structured = None
        if schema is not None:
            from claude_print import mcp_structured

            self.structured_max = mcp_structured.max_attempts()
            structured = (schema, self.structured_max)
        own = launch.own_flags(self.options, relay, self.channel, structured)
        argv = launch.build_argv(
            self.options,
            self.options.claude_binary,
            relay,
            self.session_id,
            self.delivery,
            self.facts,
            own,
        )
        source = "stdin, stream-json" if self.multi_turn else self.options.prompt_source
        self.trace(f"relay dir {relay.dir}; prompts via {self.delivery} ({source})")
        if not self.multi_turn:
            forms = sent_forms(self.options.prompt, self.delivery, self.facts)
            if not any(form.strip() for form in forms):
                raise ClaudePrintError(
                    f"the prompt is empty once Claude Code {self.claude_version or '(newest)'} "
                    "has dropped "
                    "its control characters (claude -p would send them; the TUI cannot)"
                )
            for note in normalisation_notes(self.options.prompt, self.delivery, self.facts):
                self.trace(note + ("" if self.delivery == "argv" else EXACT_HINT))
        scrubbed = scrubbed_names(os.environ)
        if scrubbed:
            self.trace(f"not passed to Claude Code: {' '.join(scrubbed)}")
        # multi-turn: the editor key also clears the box
        uses_editor = self.delivery == "editor" or self.multi_turn
        env = launch.tui_environment(os.environ, self.options, relay, uses_editor)
        self.child = PtyChild(argv, env, cwd=self.cwd)
        self.trace(f"spawned {self.options.claude_binary} as pid {self.child.pid}")
        if self.claude_version:
            drift = contract.drift_note(self.facts)
            self.trace(f"Claude Code {self.claude_version} (from its package){drift}")
        if self.session_id is not None:
            from claude_print.transcript import transcript_path

            home = os.path.expanduser("~")
            config_dir = os.environ.get("CLAUDE_CONFIG_DIR")
            self._open_tail(transcript_path(home, self.cwd, self.session_id, config_dir=config_dir))

    def _open_tail(self, path: str) -> None:
        from claude_print.transcript import TranscriptTail

        self.tail = TranscriptTail(path)
        if self.emitter.streams_events and self.session_id:
            hook_runs = self._hook_runs_of if self.reports_hooks else None
            self.stream.open(self.session_id, hook_runs)

    def _emit_init(self, model: str = "") -> None:
        """stream-json's first line of a turn, once the first record tells the model."""
        if self.turn.init_sent or self.session_id is None:
            return
        self.turn.init_sent = True
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
        if self.turn.replay is not None:
            from claude_print.stream_input import replay_event
            from claude_print.transcript import is_human_prompt

            prompts = [r for r in self.turn.records(self.records) if is_human_prompt(r)]
            self.emitter.event(
                replay_event(self.turn.replay, self.session_id, prompts[0] if prompts else None)
            )

    # --- the phases ---------------------------------------------------------

    def run(self) -> int:
        from claude_print.slash import print_mode_answer

        answer = None if self.multi_turn else print_mode_answer(self.options.prompt)
        if answer is not None:  # claude -p answers it without a turn; the TUI cannot
            self.trace(f"{self.options.prompt.strip()}: answered as claude -p does")
            return self._ended_early(answer)
        self.start()
        self._pump(self._boot_step)
        if not self.multi_turn:
            return self._run_turn(self.turn)
        code = EXIT_OK
        while True:
            prompt = self._pump(self._next_prompt)
            if prompt.text is None:  # stdin ended: so does the session
                return code
            turn = Turn(prompt.text, self.delivery, prompt.arrived, len(self.records))
            if self.options.replay_user_messages:
                turn.replay = prompt.message
            code = self._refuse_turn(turn, prompt.error) if prompt.error else self._run_turn(turn)

    def _refuse_turn(self, turn: Turn, message: str) -> int:
        """A message the TUI cannot take: an error result for it, the session goes on."""
        self.turn = turn
        self.trace(f"message refused: {message}")
        ending = turn_end.refused(self._context(), message)
        self._emit_result(ending.obj)
        self.turns += 1
        return ending.code

    def _run_turn(self, turn: Turn) -> int:
        self.turn = turn
        if self.relay is not None:
            self.relay.new_turn()
        if turn.submitted_at is None:
            self.rendering = True
            refusal = paste_refusal(turn.prompt) if turn.delivery == "paste" else None
            if refusal is not None:  # stream-json input: its text would act as keys
                return self._refuse_turn(turn, refusal)
            self.delivering = Delivery(
                turn.prompt,
                turn.delivery,
                self.facts,
                self._stage_prompt,
                self._screen_error,
                self.trace,
                time.monotonic(),
            )
            self._pump(self._deliver_step)
            self.delivering = None
        self.rendering = False
        code = self._pump(self._turn_step)
        turn.done = True
        self.turns += 1
        return code

    def _pump(self, step: Callable[[float], Optional[T]]) -> T:
        """Run the event loop until `step(now)` returns a value (the phase's outcome)."""
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
            if self.channel is not None and self.channel.reading:
                readers.append(self.channel.fd)
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
                    if event.run is not None:
                        self._on_hook_run(event.run, now)
                    else:
                        self._on_hook(event, now)
            if self.channel is not None:
                if self.channel.fd in ready_r:
                    self._on_stdin(now)
                if self.channel.caller_gone():
                    raise ClaudePrintError(
                        "the caller is gone (stdin ended and stdout is closed): stopping "
                        "Claude Code",
                        EXIT_INTERRUPTED,
                        "error_interrupted",
                    )
            if self.asks.waiting:
                self._poll_tail()
                self.asks.serve(now, self.turn, self._summary(), self.delivering)
            outcome = step(now)
            if outcome is not None:
                return outcome
            if child.eof or child.returncode() is not None:
                self._on_child_exit()

    def _wait_time(self, now: float) -> float:
        wake = [self.deadline]
        live = not self.turn.done  # between turns only stdin, hooks and the child wake us
        if (live and self.turn.stop_event is not None) or self.asks.waiting:
            wake.append(now + TRANSCRIPT_POLL)
        if self.pending_keys:
            wake.append(max(self.last_output, self.last_key) + contract.QUIET_BEFORE_KEYS)
        if self.rendering:
            wake.append(now + 0.1)  # dialog quiet gaps, screen grace periods, startup deadline
        elif (
            live
            and self.tail is not None
            and (self.stream.converter or self.options.max_turns or self.structured_max is not None)
        ):
            wake.append(self.next_tail)
        else:
            wake.append(now + 1.0)  # child liveness
        return max(0.0, min(wake) - now)

    # --- boot: startup screens until the input box --------------------------

    def _boot_step(self, now: float) -> Optional[bool]:
        if self.pending_keys or self.outbox:
            return None
        lines = self.tui.lines()
        quiet_since = max(self.last_output, self.last_key)
        outcome = self.screens.step(lines, now, self.last_output, quiet_since)
        if isinstance(outcome, bytes):
            self.pending_keys.append(outcome)
            return None
        turn = self.turn
        if outcome == READY:
            if self.delivery == "argv":
                self.trace("input box ready; the argv prompt submits itself")
                turn.submitted_at = now
            return True
        if self.delivery == "argv" and self.tail is not None and os.path.exists(self.tail.path):
            turn.submitted_at = now  # the argv prompt went in by itself: its transcript exists
            return True
        if (
            self.delivery == "argv"
            and self.options.prompt.startswith("/")
            and now - self.started >= PROMPT_ARRIVAL_GRACE
        ):
            # 2.1.330 opens a built-in command's panel instead of the input box.
            raise self._screen_error(
                f"the prompt started no turn within {PROMPT_ARRIVAL_GRACE:g}s{SLASH_HINT}", lines
            )
        if now - self.started >= STARTUP_TIMEOUT:
            what = "drew nothing" if not any(lines) else "never showed its input box"
            raise self._screen_error(f"Claude Code {what} within {STARTUP_TIMEOUT:g}s", lines)
        return None

    # --- turn: deliver the prompt ------------------------------------------

    def _deliver_step(self, now: float) -> Optional[bool]:
        """Editor or paste: load the prompt, press Enter, until UserPromptSubmit shows it."""
        delivering = self.delivering
        assert delivering is not None
        if self.pending_keys or self.outbox:
            return None
        if delivering.loading_at is None and self._awaiting_mcp(now):
            return None
        outcome = delivering.step(now, self._lines, self.last_output, self.last_key)
        if isinstance(outcome, bytes):
            self.pending_keys.append(outcome)
            return None
        if outcome != DELIVERED:
            return None
        self.turn.submitted_at = now
        if self.multi_turn and self.emitter.streams_events and self.stream.model:
            self._emit_init(self.stream.model)  # as the CLI does at the start of each turn
        return True

    def _stage_prompt(self, text: str) -> None:
        assert self.relay is not None
        self.relay.stage_prompt(text)

    def _files_session(self) -> Optional[str]:
        """The session --file downloads go to, if known before the TUI starts: ours, or
        the resumed one (a fork's new id comes with the first hook)."""
        words = self.options.forwarded
        if self.session_id is None and "--resume" in words and "--fork-session" not in words:
            return words[words.index("--resume") + 1]
        return self.session_id

    def _download_files(self, session_id: Optional[str]) -> None:
        if not self.options.files or session_id is None or self.files_done:
            return
        self.files_done = True
        from claude_print import file_downloads  # urllib: only when asked for

        specs = file_downloads.parse_specs(self.options.files, self.trace)
        file_downloads.download_all(specs, session_id, self.cwd, os.environ, self.trace)

    def _awaiting_mcp(self, now: float) -> bool:
        """`claude -p` connects MCP servers before its first request, the TUI in the
        background: hold the first prompt until the servers' tools are listed (bounded),
        and a moment more for the TUI to take them in (for argv, the hook does this)."""
        assert self.relay is not None
        if not self.relay.mcp_waits or self.mcp_settled:
            return False
        if self.mcp_ready_at is None:
            pending = self.relay.mcp_pending()
            if pending and now - self.started < contract.MCP_WAIT_SECS:
                return True
            if pending:
                self.trace(f"{pending} MCP server(s) not ready after {contract.MCP_WAIT_SECS}s")
            self.mcp_ready_at = now
        if now - self.mcp_ready_at < contract.MCP_SETTLE_SECS:
            return True
        self.trace(f"MCP servers ready {now - self.started:.2f}s after start")
        self.relay.mcp_settled()
        self.mcp_settled = True
        return False

    # --- turn: await the hook, read the transcript, emit --------------------

    def _turn_step(self, now: float) -> Optional[int]:
        turn = self.turn
        if turn.budget_spent:
            return self._budget_exhausted(self._summary())
        if turn.stop_event is not None:
            assert self.child is not None
            gone = self.child.eof or self.child.returncode() is not None
            if not gone and (self.hook_watch.running(now) or self._stop_hooks_pending(now)):
                return None  # claude -p reports the user's Stop hooks before the result
            if not gone and self._turn_goes_on(now):
                return None
            return self._try_finish(force=gone or now >= turn.settle_until)
        if turn.interrupt_at is not None:
            code = self._interrupted_turn(now)
            if code is not None:
                return code
        if now < self.next_tail:
            return None
        self.next_tail = now + TAIL_INTERVAL
        self._poll_tail()
        from claude_print.transcript import hook_stopped, local_output, prompt_stopped

        stopped = prompt_stopped(turn.records(self.records))
        if stopped is not None:
            return self._ended_early(stopped)
        said = local_output(turn.records(self.records)) if turn.prompt.startswith("/") else None
        if said is not None:  # a slash command the TUI ran itself: claude -p's 0-turn result
            return self._ended_early(said)
        self._check_prompt_arrived(now)
        self._check_stuck_dialog(now)
        summary = self._summary()
        if self.options.max_turns and summary.num_turns > self.options.max_turns:
            return self._max_turns(summary)
        if self.structured_max is not None:
            code = self._structured_end(summary)
            if code is not None:
                return code
        if hook_stopped(turn.records(self.records), OWN_STOP_PREFIX):
            return self._ended_early(None, summary)
        if summary.turn_closed:
            # The transcript says the turn is over, yet no Stop/StopFailure came.
            turn.closed_at = turn.closed_at or now
            if now - turn.closed_at >= MISSING_HOOK_GRACE:
                raise self._screen_error(
                    f"the turn ended {MISSING_HOOK_GRACE:g}s ago in the transcript but no "
                    "Stop/StopFailure hook arrived: Claude Code's hooks may have changed",
                    self._lines(),
                )
        return None

    def _turn_goes_on(self, now: float) -> bool:
        """After Stop, the TUI still runs the other Stop hooks, and one that blocks sends
        the turn on (its reason goes to the model, as in `claude -p`). The turn is over
        once the transcript closes it (`turn_duration`, written after every Stop hook);
        a TUI quiet and idle without one has drifted: finish with what there is."""
        turn = self.turn
        if turn.stop_event is None or turn.stop_event.name != contract.HOOK_STOP:
            return False
        if not self.others_stop_hooks:
            return False
        self._poll_tail()
        if self._summary().turn_closed:
            return False
        if now - self.last_output < STOP_CLOSE_QUIET or not screens.is_idle(self._lines()):
            turn.settle_until = now + TRANSCRIPT_SETTLE
            return True
        self.trace("Stop came and the TUI is idle, but no turn_duration record closed the turn")
        return False

    def _stop_hooks_pending(self, now: float) -> bool:
        """--include-hook-events: the user's Stop hooks run beside ours, and a run that
        starts late would miss the result. The TUI writes a `stop_hook_summary` record once
        all have ended (not at all on 2.1.331 when ours is the only one): wait for it a
        little."""
        turn = self.turn
        if not (self.reports_hooks and self.options.include_hook_events):
            return False
        if turn.stop_event is None or turn.stop_event.name != contract.HOOK_STOP:
            return False
        self._poll_tail()
        records = turn.records(self.records)
        if any(r.get("subtype") == contract.STOP_HOOK_SUMMARY for r in records):
            return False
        return now < turn.stop_at + STOP_SUMMARY_WAIT

    def _check_stuck_dialog(self, now: float) -> None:
        """A dialog that no hook answers would hold the turn until the timeout: once the
        TUI has been quiet a while (and none of our hooks is waiting), read the screen."""
        quiet = self.last_output
        if (
            self.asks.waiting
            or now - quiet < STUCK_DIALOG_QUIET
            or self.turn.dialog_checked == quiet
        ):
            return
        self.turn.dialog_checked = quiet
        lines = self._lines()
        state = screens.classify(lines)
        if state.kind in screens.BLOCKING_ADVICE and state.selected is not None:
            raise self._screen_error(screens.BLOCKING_ADVICE[state.kind], lines)

    def _summary(self) -> TurnSummary:
        return self.turn.summary(self.records, self.session_id or "")

    def _check_prompt_arrived(self, now: float) -> None:
        """The TUI logs a submitted prompt at once; silence means it never got it."""
        turn = self.turn
        if (
            turn.records(self.records)
            or turn.hooks_seen
            or self.tail is None
            or turn.submitted_at is None
        ):
            return
        if now - turn.submitted_at >= PROMPT_ARRIVAL_GRACE:
            hint = SLASH_HINT if turn.prompt.startswith("/") else ""
            raise self._screen_error(
                f"the prompt did not reach Claude Code within {PROMPT_ARRIVAL_GRACE:g}s "
                f"(no transcript at {self.tail.path}{hint})",
                self._lines(),
            )

    def _turn_over(self) -> None:
        """The turn is on disk: a one-shot run lets the TUI shut down while we print.
        (Not before: a SIGTERM can drop records still in its write queue.)"""
        if self.child is not None and not self.multi_turn:
            self.child.request_exit()

    def _try_finish(self, force: bool) -> Optional[int]:
        """The result once the turn is on disk (or, with `force`, with what there is)."""
        event = self.turn.stop_event
        assert event is not None
        self._poll_tail()
        summary = self._summary()
        if not summary.complete and not force:
            return None
        if self.options.max_turns and summary.num_turns > self.options.max_turns:
            return self._max_turns(summary)
        budget = self.options.max_budget_usd
        if budget is not None and summary.complete and summary.total_cost_usd >= budget:
            return self._budget_exhausted(summary)
        if not summary.complete:
            where = self.tail.path if self.tail else "no transcript path"
            self.trace(f"transcript incomplete ({where}); using the hook's last_assistant_message")
        return self._end(summary, lambda ctx: turn_end.finished(summary, ctx, event))

    def _end(self, summary: TurnSummary, build: Callable[[turn_end.Context], Ending]) -> int:
        """The turn's result: the TUI may shut down (one-shot), the cost is settled and
        the stream flushed, then what `build` makes of the summary goes out."""
        self._turn_over()
        self._settle_cost(summary)
        self.stream.flush()
        ending = build(self._context())
        self._emit_result(ending.obj, ending.finish)
        self.trace(f"result printed ({ending.obj['subtype']}, is_error={ending.obj['is_error']})")
        return ending.code

    def _context(self) -> turn_end.Context:
        key = None
        if not (self.options.model or os.environ.get("ANTHROPIC_MODEL")):
            from claude_print.output import default_model_usage_key

            key = default_model_usage_key(self.claude_version)  # claude -p's, e.g. "...[1m]"
        return turn_end.Context(
            self.session_id or "", self.claude_version, self.facts, self.turn, time.monotonic(), key
        )

    def _emit_result(self, obj: Dict[str, Any], finish: Optional[Finish] = None) -> None:
        """The turn's result; with several turns, the cost and model usage are the
        session's so far and `result_index` counts the results, as `claude -p` does."""
        if not self.multi_turn:
            self.emitter.result(obj, finish)
            return

        def totals(conformed: Dict[str, Any]) -> Dict[str, Any]:
            return self.totals.add(finish(conformed) if finish else conformed, self.turns)

        self.emitter.result(obj, totals)

    def _settle_cost(self, summary: TurnSummary) -> None:
        """Report the TUI's own cost (its cost-state record, written as it exits) when it
        is `claude -p`'s cost too: no session-title request went into it (an `ai-title`
        record says one did), or claude-print's price table lacks a model."""
        from claude_print import pricing, tui_cost

        unpriced = [m for m in summary.model_usage if pricing.price_for(m) is None]
        if (
            not self.facts.cost_state
            or self.child is None
            or self.multi_turn  # the TUI stays up for the next turn: no record until it exits
            or (self._titled() and not unpriced)
        ):
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

    def _structured_end(self, summary: TurnSummary) -> Optional[int]:
        """--json-schema: the turn is over once the server accepted a call (success) or
        rejected the last allowed one (error_max_structured_output_retries)."""
        from claude_print import mcp_structured as ms

        value = ms.structured_result(summary.tool_uses, summary.tool_results)
        if value is not None:
            return self._end(summary, lambda ctx: turn_end.structured(summary, ctx, value))
        failed = ms.failed_attempts(summary.tool_uses, summary.tool_results)
        if self.structured_max is None or failed < self.structured_max:
            return None
        records = self.turn.records(self.records)
        return self._end(
            summary, lambda ctx: turn_end.structured_retries(summary, ctx, failed, records)
        )

    def _max_turns(self, summary: TurnSummary) -> int:
        limit = self.options.max_turns or 0
        return self._end(summary, lambda ctx: turn_end.max_turns(summary, ctx, limit))

    def _budget_exhausted(self, summary: TurnSummary) -> int:
        budget = self.options.max_budget_usd
        assert budget is not None
        return self._end(summary, lambda ctx: turn_end.budget_exhausted(summary, ctx, budget))

    def _ended_early(self, message: Optional[str], summary: Optional[TurnSummary] = None) -> int:
        from claude_print.transcript import TurnSummary

        self.trace(f"the turn ended without an answer{': ' + message if message else ''}")
        done = summary or TurnSummary(result_text=message or "", num_turns=0)
        return self._end(done, lambda ctx: turn_end.stopped_by_hook(done, ctx, message))

    # --- stream-json input ---------------------------------------------------------

    def _await_initialize(self) -> None:
        """Before the spawn: the first stdin message. An SDK's `initialize` names the hooks
        it wants, which must be in the TUI's settings from the start."""
        assert self.channel is not None
        deadline = min(self.deadline, time.monotonic() + FIRST_MESSAGE_WAIT)
        for message in self.channel.wait_first(deadline, self._wake_r):
            self.channel.take(message, time.monotonic(), busy=False)
        if self.interrupted is not None:
            raise Interrupted(self.interrupted)

    def _on_stdin(self, now: float) -> None:
        assert self.channel is not None
        turn = self.turn
        busy = turn.submitted_at is not None and not turn.done
        for message in self.channel.read():
            self.channel.take(message, now, busy=busy)
        if self.channel.interrupts and busy and turn.interrupt_at is None:
            self.trace("interrupt: pressing Esc")
            turn.interrupt_at = now
            self.outbox += contract.KEY_ESCAPE
            self.last_key = now

    def _next_prompt(self, now: float) -> Optional[Prompt]:
        """Between turns: the next `user` message, or the end of stdin."""
        from claude_print.stream_input import Prompt

        assert self.channel is not None
        if self.channel.prompts:
            return self.channel.prompts.popleft()
        if not self.channel.reading:
            return Prompt(None, now)
        return None

    def _interrupted_turn(self, now: float) -> Optional[int]:
        """After Esc: the TUI ends the turn without a Stop hook; its transcript records
        the interruption. The result is `claude -p`'s for an interrupted turn."""
        from claude_print.stream_input import interruption_event, is_interruption

        turn = self.turn
        assert turn.interrupt_at is not None and self.channel is not None
        self._poll_tail()
        stopped = any(is_interruption(record) for record in turn.records(self.records))
        if not stopped and self.last_output > turn.interrupt_at:
            # A frame drawn after Esc (an older one may predate the busy footer) that shows
            # the idle input box: the turn was dropped before any answer.
            stopped = screens.is_idle(self._lines())
        if not stopped and now - turn.interrupt_at < INTERRUPT_SETTLE:
            return None
        self.trace("interrupted" if stopped else "no sign of the interruption; reporting it")
        self.channel.interrupts.clear()
        summary = self._summary()
        # As `claude -p`: the interruption as a user message, then the error result.
        self.stream.flush()
        # Raw, as the CLI prints it: conforming would give it a tool result's keys.
        self.emitter.control(interruption_event(self.session_id or ""))
        return self._end(summary, lambda ctx: turn_end.interrupted(summary, ctx))

    # --- I/O ------------------------------------------------------------------

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
        # Between turns the screen must stay true for the next prompt's input box.
        self.outbox += self.tui.feed(data, self.rendering or self.multi_turn)
        if not self.claude_version and self.rendering and not self.turns:
            version = screens.claude_version_on_screen(self.tui.lines())
            if version:
                self._learn_version(version, "its welcome banner")

    def _learn_version(self, version: str, source: str) -> None:
        """A release learned after the spawn: later phases use its facts."""
        self.facts = contract.facts_for(version)
        self.claude_version = version
        self.emitter.release = version
        self.trace(f"Claude Code {version} (from {source}){contract.drift_note(self.facts)}")

    def _lines(self) -> List[str]:
        return self.tui.lines()

    def _screen_error(self, what: str, lines: List[str]) -> ClaudePrintError:
        return ClaudePrintError(self._screen_message(what, lines))

    def _screen_message(self, what: str, lines: List[str]) -> str:
        """A failure message with the screen's text and, if it drifted, Claude Code's version."""
        if not self.claude_version:
            with contextlib.suppress(ClaudePrintError):  # a process start: only on failure
                self.claude_version = release.claude_version(self.options.claude_binary)
        drift = ""
        if self.claude_version:
            tested = f"{contract.OLDEST_SUPPORTED} to {contract.NEWEST_TESTED}"
            drift = f" (Claude Code {self.claude_version}; tested {tested})"
        secrets = [os.environ.get(name, "") for name in screens.SECRET_VARS]
        excerpt = screens.screen_excerpt(lines, secrets=secrets)
        return f"{what}{drift}. Screen:\n{excerpt}" if excerpt else f"{what}{drift}."

    # --- hooks, transcript ------------------------------------------------

    def _on_hook(self, event: HookEvent, now: float) -> None:
        turn = self.turn
        if event.name == EDITOR_EVENT:
            if self.relay is not None:
                self.relay.unstage_prompt()  # a later $EDITOR (a tool the model runs) is the user's
            if self.delivering is not None:
                self.delivering.editor_done(now)
            return
        turn.hooks_seen += 1
        self.trace(f"hook {event.name}" + (f" ({event.error})" if event.error else ""))
        payload = event.payload
        if self.session_id is None and isinstance(payload.get("session_id"), str):
            self.session_id = payload["session_id"]
            self._download_files(self.session_id)
        reported = payload.get("transcript_path")
        if isinstance(reported, str) and (self.tail is None or self.tail.path != reported):
            # The hook knows where the transcript really is; our guess may differ
            # (HOME, CLAUDE_CONFIG_DIR, a resumed session).
            self.trace(f"transcript at {reported}")
            self.records = []
            turn.first_record = 0
            self._open_tail(reported)
        if event.reply is not None:
            self.asks.add(event, now)
            return
        if event.name == contract.HOOK_PERMISSION_REQUEST:
            turn.denials.append(
                {"tool_name": payload.get("tool_name"), "tool_input": payload.get("tool_input", {})}
            )
            return
        if event.name in (contract.HOOK_STOP, contract.HOOK_STOP_FAILURE):
            # Each Stop counts: a user's Stop hook that blocked the last one sent the
            # turn on (`_turn_goes_on`). Stop fires before the TUI's write queue has
            # flushed the turn: from here the loop goes on (reading the PTY, so the TUI
            # never blocks on it) until the transcript holds the whole turn.
            turn.stop_event = event
            turn.stop_at = time.monotonic()
            turn.settle_until = turn.stop_at + TRANSCRIPT_SETTLE

    def _hook_runs_of(self, record: Dict[str, Any]) -> List[Dict[str, Any]]:
        """Runs of hooks from settings files, from the transcript (not ours to watch)."""
        own = self.relay.dir if self.relay is not None else ""
        return hook_events.from_attachment(record, self.reported_hooks, own, self.session_id or "")

    def _on_hook_run(self, run: HookRun, now: float) -> None:
        """A watched hook of the user's started or ended: its stream-json event, after
        what the transcript already holds (the tool call a PreToolUse hook is about)."""
        self.trace(f"user hook {run.phase}: {run.payload.get('hook_event_name')}")
        self._poll_tail()
        self.hook_watch.take(run, now, self.session_id or "")
        self.stream.release_hooks()

    def _answer(self, event: HookEvent, decision: Optional[Dict[str, Any]]) -> None:
        assert self.relay is not None
        self.trace(f"answered {event.name}: {decision or 'no decision'}")
        self.relay.answer(event, decision)

    def _poll_tail(self) -> None:
        if self.tail is not None:
            for record in self.tail.poll():
                self._take(record)

    def _take(self, record: Dict[str, Any]) -> None:
        if record.get("sessionId") != self.session_id:
            return  # another session's record, or bookkeeping without a session
        self.records.append(record)
        self.stream.feed(record)

    def _on_child_exit(self) -> None:
        assert self.child is not None
        while True:  # its last words
            data = self.child.read()
            if not data:
                break
            self.tui.keep(data)
        code = self.child.terminate(0.5)
        self.child = None
        raise self._screen_error(
            f"Claude Code exited (status {code}) before answering", self._lines()
        )


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


def run(options: Options, started: Optional[float] = None) -> int:
    """The run; `started` (monotonic) is when claude-print began, for --timeout."""
    started = time.monotonic() if started is None else started
    # --verbose means what it means to claude -p (stream-json callers always pass it):
    # claude-print's own lines have their own switch.
    trace = Trace(options.trace, started)
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


__all__ = ["Emitter", "Session", "Trace", "report_failure", "run"]
