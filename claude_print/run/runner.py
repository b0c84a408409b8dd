"""The orchestrator: one event loop that owns the child, the relay and the clock.

A run reads as phases:

- boot: set up the relay, spawn Claude Code on a PTY, answer probes and startup screens
  until the input box is up (`launch`, `boot`; an argv prompt submits itself there);
- turn, once per prompt: deliver it (`delivery`, behind `mcp_wait`), await the Stop hook
  and read the transcript until the verdict (`turn_watch`), emit the result (`turn_end`):
  the one prompt of `claude -p`, or each `user` message of stream-json input;
- shutdown: tear the child and the relay down.

Each phase is an object with a `step(now)` that `_pump` calls after every batch of I/O
until it returns a value. The pump, and the routing of what it reads, is the Session's
base, `event_loop.EventLoop`; this module says which phase comes when.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, List, Optional, TypeVar, Union, cast

from claude_print import contract
from claude_print.errors import (
    EXIT_OK,
    ClaudePrintError,
)
from claude_print.hooks import hook_events, leftovers
from claude_print.hooks.hook_events import HookWatch
from claude_print.hooks.relay import HookEvent, Relay
from claude_print.options import Options, new_session_id, permission_mode
from claude_print.printing.emit import Emitter, Trace
from claude_print.run import launch
from claude_print.run.event_loop import EventLoop
from claude_print.run.signals import SignalPipe
from claude_print.tui import release
from claude_print.tui.boot import READY, Boot, StartupScreens
from claude_print.tui.delivery import DELIVERED, Delivery, choose_delivery, paste_refusal
from claude_print.tui.keys import Keyboard
from claude_print.tui.mode_switch import DONE, ModeSwitch
from claude_print.tui.pty_session import PtyChild
from claude_print.tui.tui_screen import TuiScreen
from claude_print.turns import background, turn_end
from claude_print.turns.asking import AskingHooks
from claude_print.turns.mcp_wait import McpWait
from claude_print.turns.results import Results
from claude_print.turns.stream_out import StreamOut
from claude_print.turns.transcript_feed import TranscriptFeed
from claude_print.turns.turn import Turn
from claude_print.turns.turn_state import ResultOut, Stopped, Submitted, advance
from claude_print.turns.turn_watch import Rules, TurnWatch, Verdict, ended_early

# output, stream and transcript (json, calendar, datetime ...) are imported where they
# are first used, after the TUI has been spawned: its boot hides their cost.
if TYPE_CHECKING:
    from claude_print.sdk.stream_input import ControlChannel, Prompt
    from claude_print.tui.images import Clipboard

T = TypeVar("T")
# stream-json input: the Agent SDK sends `initialize` at once and waits 60 s for the answer.
FIRST_MESSAGE_WAIT = 60.0


class Session(EventLoop):
    """One run of the TUI. `run()` returns the exit code; `close()` always cleans up."""

    def __init__(self, options: Options, trace: Trace, emitter: Emitter, started: float) -> None:
        self.options = options
        self.trace = trace
        self.emitter = emitter
        self.started = started
        self.deadline = started + options.timeout
        self.facts = contract.facts_for(release.installed_version(options.claude_binary))
        emitter.release = self.facts.version
        # stream-json input: many turns in one TUI, prompts typed in as they arrive.
        self.channel: Optional[ControlChannel] = None
        if options.input_format == "stream-json":
            from claude_print.sdk.stream_input import open_channel

            self.channel = open_channel(options, emitter, trace, self.facts)
        self.delivery = choose_delivery(options, multi_turn=self.channel is not None)
        self.relay: Optional[Relay] = None
        self.clipboard: Optional[Clipboard] = None  # stream-json input: images by Ctrl+V
        self.child: Optional[PtyChild] = None
        self.tui = TuiScreen()
        self.rendering = True  # the screen is read (boot, delivery); else bytes are kept
        # Between turns the screen must stay true for the next prompt's input box.
        self.keeps_screen = self.channel is not None
        self.idle_poll = 1.0  # seconds between looks at the files a waiting phase awaits
        self.keys = Keyboard(started)
        session_id = options.session_id or (None if options.resume else new_session_id())
        self.transcript = TranscriptFeed(
            session_id, lambda record: self.stream.feed(record), self._hook_runs_first
        )
        self.stream = StreamOut(
            emitter,
            lambda: self.facts,
            lambda: self.hook_watch,
            options,
            self.transcript,
            lambda: self.turn,
            lambda: self.channel.permission_mode if self.channel else permission_mode(options),
        )
        if self.channel is not None:
            self.channel.session_id = session_id or ""
            self.channel.may_bypass = launch.wants_bypass(options)
        self.stream.model = options.model or ""
        argv_prompt = options.prompt if self.delivery == "argv" else None
        startup = StartupScreens(launch.wants_bypass(options), self._screen_error, trace)
        self.boot = Boot(startup, argv_prompt, started, self._screen_error, trace)
        self.mcp: Optional[McpWait] = None  # holds the first prompt for the MCP servers
        self.turn = Turn(options.prompt, self.delivery, started)
        self.delivering: Optional[Delivery] = None  # the prompt on its way into the box
        self.watch: Optional[TurnWatch] = None  # the turn after its submission
        # stream-json input: the wait for a turn the TUI starts by itself after the last
        # one (background work's notification), while background work is left.
        self.after: Optional[background.BackgroundWait] = None
        self.follower = background.Follower(self.transcript, lambda: self.facts, os.environ, trace)
        self.rules = Rules()  # the limits every turn is watched with (start())
        self.results = Results(emitter, trace, multi_turn=self.channel is not None)
        self.asks = AskingHooks(self._answer, trace, options.max_budget_usd, self.channel)
        self.files_pending = bool(options.files)  # --file downloads not made yet
        # stream-json shows runs of the user's hooks (SessionStart's, or all of them).
        self.reports_hooks = options.output_format == "stream-json"
        self.reported_hooks = hook_events.reported_events(options.include_hook_events)
        self.hook_watch = HookWatch([])
        self.relay_pending: List[HookEvent] = []
        self.later_stops: List[HookEvent] = []
        self.draining = False
        self.signals = SignalPipe()

    def start(self) -> None:
        """Boot up to the spawn: checks, --file downloads, the caller's `initialize`, the
        relay, the TUI's command line and environment (`launch.prepare`)."""
        options = self.options
        self.signals.install()
        if self.files_pending:
            from claude_print.run import file_downloads

            file_downloads.require_token()
            self._download_files(
                file_downloads.session_before_start(options.forwarded, self.session_id)
            )
        leftovers.sweep_at_start()  # relay dirs of runs killed with SIGKILL
        if self.channel is not None:
            # The caller's `initialize` names the hooks it wants: they must be in the
            # TUI's settings from the start.
            deadline = min(self.deadline, time.monotonic() + FIRST_MESSAGE_WAIT)
            self.channel.take_first(deadline, self.signals.fd)
            self.signals.check()
        plan = launch.prepare(
            options,
            self.facts,
            self.delivery,
            self.channel,
            self.session_id,
            self.reported_hooks,
            self.trace,
        )
        self.relay = plan.relay
        self.clipboard = plan.clipboard
        self.stream.mcp_servers = plan.relay.mcp_names
        if self.channel is not None:
            self.channel.mcp_servers = plan.relay.mcp_names  # mcp_status, mcp_* requests
        self.hook_watch = HookWatch(plan.relay.watched)
        self.mcp = McpWait(plan.relay, self.started, self.trace)
        self.rules = plan.rules
        source = "stdin, stream-json" if self.multi_turn else options.prompt_source
        self.trace(f"relay dir {plan.relay.dir}; prompts via {self.delivery} ({source})")
        self.child = PtyChild(plan.argv, plan.env, cwd=os.getcwd())
        self.trace(f"spawned {options.claude_binary} as pid {self.child.pid}")
        if self.claude_version:
            drift = contract.drift_note(self.facts)
            self.trace(f"Claude Code {self.claude_version} (from its package){drift}")
        guess = self.transcript.guessed_path()
        if guess is not None:
            self._open_transcript(guess)
        # While the TUI boots: what the turn's end needs (~15 ms, `dataclasses` mostly),
        # imported on its critical path otherwise.
        from claude_print.records import summary  # noqa: F401
        from claude_print.turns import tui_cost  # noqa: F401

    # --- the phases ---------------------------------------------------------

    def run(self) -> int:
        if not self.multi_turn:
            code = self._answered_here(self.turn)
            if code is not None:
                return code
        self.boot_up()
        if not self.multi_turn:
            return self._run_turn(self.turn)
        assert self.channel is not None
        code = EXIT_OK
        while True:
            # (mypy joins the union to `object` through the generic pump)
            taken = cast("Union[Prompt, Turn]", self._pump(self._next_input))
            if isinstance(taken, Turn):
                code = self._run_turn(taken)
                continue
            prompt = taken
            if prompt.text is None:  # stdin ended: so does the session, once its work has
                return self._after_input(code)
            self.after = None  # the caller's turn comes first: the TUI queues the rest
            self.later_stops = []
            turn = Turn(prompt.text, self.delivery, prompt.arrived, len(self.transcript.records))
            turn.images = prompt.images
            if self.options.replay_user_messages:
                turn.replay = prompt.message
            answered = self._answered_here(turn, prompt.error)
            if answered is not None:  # never in the TUI: nothing to interrupt
                self.channel.interrupts.clear()
            code = self._run_turn(turn) if answered is None else answered

    def boot_up(self) -> None:
        """Boot: the spawn, then probes and screens until the input box is up."""
        self.start()
        self._pump(self.keyed(self._boot_step, READY))
        if self.delivery == "argv":  # it went in by itself at the box
            advance(self.turn, Submitted(time.monotonic()))

    def take_turn(self, turn: Turn) -> int:
        """One prompt of a booted one-prompt session (a warm keeper's, keeper.py)."""
        code = self._answered_here(turn)
        return self._run_turn(turn) if code is None else code

    def _answered_here(self, turn: Turn, error: str = "") -> Optional[int]:
        """A prompt that never reaches the TUI: refused (its text would act as keys, or
        it names a command the TUI would run otherwise than `claude -p`), or one that
        `claude -p` answers without a model turn (`slash.decide`). None: it goes in."""
        from claude_print.turns import slash

        paste = paste_refusal(turn.prompt) if turn.delivery == "paste" else None
        if not self.facts.version and slash.names_a_command(turn.prompt):
            # The rules are per release: ask the binary (a process start, only here).
            version = release.claude_version(self.options.claude_binary)
            self.facts = contract.facts_for(version)
            self.emitter.release = version
        forwarded = self.options.forwarded
        decision = slash.decide(
            turn.prompt, self.facts.version, os.getcwd(), dict(os.environ), forwarded
        )
        if decision.kind == slash.REFUSE:
            self.trace(f"/{decision.command}: refused by the slash-command rules")
        refusal = error or paste or (decision.text if decision.kind == slash.REFUSE else "")
        if refusal:
            if not self.multi_turn:
                raise ClaudePrintError(refusal)
            return self._refuse_turn(turn, refusal)
        if decision.kind != slash.ANSWER:
            return None
        self.turn = turn
        self.trace(f"/{decision.command}: answered as claude -p {self.facts.version} does")
        code = self._end(ended_early(decision.text, self.trace))
        advance(turn, ResultOut())
        return code

    def _boot_step(self, now: float) -> Optional[Union[bytes, str]]:
        exists = self.delivery == "argv" and self.transcript.exists()
        return self.boot.step(now, self.tui.lines(), self.keys, exists)

    def _refuse_turn(self, turn: Turn, message: str) -> int:
        """A message the TUI cannot take: an error result for it, the session goes on."""
        self.turn = turn
        self.trace(f"message refused: {message}")
        return self.results.emit(turn_end.refused(self._context(), message))

    def _run_turn(self, turn: Turn) -> int:
        self.turn = turn
        if self.relay is not None:
            self.relay.new_turn()
        if turn.submitted_at is None:
            self.rendering = True
            if self.channel is not None and self.channel.pending_mode is not None:
                self._switch_mode(self.channel.pending_mode)
                self.channel.pending_mode = None
            self.delivering = Delivery(
                turn.prompt,
                turn.delivery,
                self.facts,
                self._stage_prompt,
                self._screen_error,
                self.trace,
                time.monotonic(),
                turn.images,
                self.clipboard,
            )
            self._pump(self.keyed(self._deliver_step, DELIVERED))
            self.delivering = None
            submitted = time.monotonic()
            advance(turn, Submitted(submitted))
            if self.multi_turn and self.emitter.streams_events:
                self.stream.init_at_submission()  # as the CLI does
            self._press_interrupt(submitted, " (it came before the prompt went in)")
        self.rendering = False
        self.watch = self._watch(turn)
        verdict = self._pump(self.watch.step)
        if not self.multi_turn:
            return self._until_work_ends(turn, verdict)
        code = self._end(verdict)
        advance(turn, ResultOut())
        self.after = self.follower.after(turn, verdict, time.monotonic())
        return code

    def _until_work_ends(self, turn: Turn, verdict: Verdict) -> int:
        """A one-shot run ends when Claude Code's work ends (`background`): while the
        turn left background work `claude -p` waits for, the TUI's next turn (its own,
        for the work's notification) is watched too. Each turn's result goes out as
        `claude -p` prints it: at once in stream-json (and text where that release
        prints every result), else only the last."""
        every = self.options.output_format == "stream-json" or (
            self.options.output_format == "text" and self.facts.text_every_result
        )
        while True:
            wait = self.follower.after(turn, verdict, time.monotonic())
            if wait is None:
                break
            ctx = self._context()
            code = self._end(verdict, ctx, final=False) if every else None
            advance(turn, ResultOut())
            if not self._follows(wait):
                self.turn = turn
                return self._end(verdict, ctx) if code is None else code
            if code is None:  # counted in the run's totals, never printed
                self.results.emit(verdict.build(ctx), show=False)
            turn = wait.turn
            self.watch = self._watch(turn)
            verdict = self._pump(self.watch.step)
        code = self._end(verdict)
        advance(turn, ResultOut())
        return code

    def _after_input(self, code: int) -> int:
        """stream-json input ended: like `claude -p`, wait for the background work the
        last turn left and run the turns the TUI starts for it, each with its result."""
        while self.after is not None and self._follows(self.after):
            code = self._run_turn(self.after.turn)
        return code

    def _follows(self, wait: background.BackgroundWait) -> bool:
        self._hand_over(wait.turn)
        self.idle_poll = background.WAIT_POLL
        return self.follower.follows(wait, self._pump, time.monotonic)

    def _hand_over(self, turn: Turn) -> None:
        """The TUI's next turn is ours to watch: its hooks go to it, those read early too."""
        self.turn = turn
        now = time.monotonic()
        for event in self.later_stops:
            advance(turn, Stopped(event, now))
        self.later_stops = []

    def _next_input(self, now: float) -> Optional[Union[Prompt, Turn]]:
        """Between the caller's turns: its next message, or a turn the TUI started by
        itself for background work's notification (claude -p runs it as it comes)."""
        assert self.channel is not None
        prompt = self.channel.next_prompt(now)
        if prompt is None and self.after is not None and self.after.started():
            self._hand_over(self.after.turn)
            return self.follower.begun(self.after, now)
        return prompt

    def _switch_mode(self, mode: str) -> None:
        """set_permission_mode, before the next prompt: Shift+Tab until the footer shows it."""
        switch = ModeSwitch(mode, self._screen_error, self.trace)
        self._pump(self.keyed(lambda now: switch.step(now, self.tui.lines(), self.keys), DONE))

    def _watch(self, turn: Turn) -> TurnWatch:
        return TurnWatch(
            turn,
            self.rules,
            self.transcript,
            self.keys,
            self.tui.lines,
            self._child_gone,
            self.hook_watch,
            lambda: bool(self.asks.waiting),
            self.channel.interrupts if self.channel is not None else [],
            self._screen_error,
            self.trace,
            self._tui_status,
        )

    def _tui_status(self) -> Optional[str]:
        from claude_print.tui import session_status

        return session_status.status(self.child.pid if self.child else None, os.environ)

    def _deliver_step(self, now: float) -> Optional[Union[bytes, str]]:
        """Editor or paste: load the prompt, press Enter, until UserPromptSubmit shows it."""
        delivering = self.delivering
        assert delivering is not None and self.mcp is not None
        if delivering.loading_at is None and self.mcp.holding(now):
            return None
        return delivering.step(now, self.tui.lines, self.keys.last_output, self.keys.last_key)

    def _stage_prompt(self, text: str) -> None:
        assert self.relay is not None
        self.relay.stage_prompt(text)

    def _end(
        self, verdict: Verdict, ctx: Optional[turn_end.Context] = None, final: bool = True
    ) -> int:
        """The turn's result. A one-shot TUI may shut down now that its last turn is on
        disk (not before: a SIGTERM can drop records still in its write queue); the cost
        is settled and the stream flushed, then the result goes out. `ctx`: the turn's
        context when it ended (a result held while background work ran)."""
        from claude_print.turns import tui_cost

        one_shot = self.child if not self.multi_turn and final else None
        if one_shot is not None:
            one_shot.request_exit()
        if self.results.count:  # the TUI's cost-state is the run's: each turn is priced
            one_shot = None
        if self.options.output_format != "text":  # text shows no cost: nothing to wait for
            tui_cost.settle(verdict.summary, self.facts, one_shot, self.transcript, self.trace)
        self.stream.flush()
        if verdict.notice is not None:
            self.emitter.control(verdict.notice)
        return self.results.emit(verdict.build(ctx or self._context()))

    def _context(self) -> turn_end.Context:
        model_asked = bool(self.options.model or os.environ.get("ANTHROPIC_MODEL"))
        return turn_end.context(
            self.session_id or "", self.claude_version, self.facts, self.turn, model_asked
        )


__all__ = ["Session"]
