"""The orchestrator: the phases of a run, in order, over one event loop.

A run reads as phases:

- boot: set up the relay, spawn Claude Code on a PTY, answer probes and startup screens
  until the input box is up (`launch`, `boot`; an argv prompt submits itself there);
- turn, once per prompt: deliver it (`delivery`, behind `mcp_wait`), await the Stop hook
  and read the transcript until the verdict (`turn_watch`), emit the result (`turn_end`):
  the one prompt of `claude -p`, or each `user` message of stream-json input;
- shutdown: tear the child and the relay down.

Each phase is an object with a `step(now)` that `Pump.run` calls after every batch of I/O
until it returns a value. The Session composes three parts: the run's state
(`run_state.RunState`), the I/O owner (`pump.Pump`: the child, the relay, the signal
pipe, the keys, the one `select`) and where what it reads goes (`routes.Routes`); this
module says which phase comes when.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Optional, TypeVar, Union, cast

from claude_print import contract
from claude_print.errors import EXIT_OK, ClaudePrintError
from claude_print.hooks import hook_events, leftovers
from claude_print.hooks.hook_events import HookWatch
from claude_print.options import Options
from claude_print.printing.emit import Emitter, Trace
from claude_print.run import launch, result_out
from claude_print.run.pump import Pump
from claude_print.run.routes import Routes
from claude_print.run.run_plan import plan_run
from claude_print.run.run_state import RunState
from claude_print.tui import release
from claude_print.tui.boot import READY, Boot, StartupScreens
from claude_print.tui.delivery import DELIVERED, Delivery
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
    from claude_print.sdk.stream_input import Prompt
    from claude_print.tui.images import Clipboard

T = TypeVar("T")
# stream-json input: the Agent SDK sends `initialize` at once and waits 60 s for the answer.
FIRST_MESSAGE_WAIT = 60.0


class Session:
    """One run of the TUI. `run()` returns the exit code; `close()` always cleans up.

    It composes the run's state (`state`, a `RunState`), its I/O owner (`pump`, a `Pump`:
    the child, the relay, the signal pipe, the keys, the one `select`) and the routing of
    what the pump reads into the state (`routes`), and runs the phases in order."""

    def __init__(self, options: Options, trace: Trace, emitter: Emitter, started: float) -> None:
        self.state = state = RunState()
        self.pump = Pump(state, started + options.timeout, Keyboard(started))
        self.routes = Routes(state, self.pump)
        self.pump.routes = self.routes
        state.options = options
        state.trace = trace
        state.emitter = emitter
        state.started = started
        # The choices the parts below need, made once (run_plan): each part is handed
        # the plain values it uses, not the options.
        self.plan = plan = plan_run(options)
        self.delivery = plan.delivery
        self.clipboard: Optional[Clipboard] = None  # stream-json input: images by Ctrl+V
        state.tui = TuiScreen()
        # Between turns the screen must stay true for the next prompt's input box.
        self.pump.keeps_screen = plan.multi_turn
        # The turn's parts: the release's facts are read through `state` when they are
        # needed (it may be learned late, `_answered_here`).
        state.transcript = TranscriptFeed(
            plan.session_id, lambda record: state.stream.feed(record), self.pump.hook_runs_first
        )
        state.stream = StreamOut(
            emitter,
            lambda: state.facts,
            lambda: state.hook_watch,
            options.model or "",
            state.transcript,
            lambda: state.turn,
            lambda: state.channel.permission_mode if state.channel else plan.permission_mode,
        )
        state.stream.model = options.model or ""
        state.turn = Turn(options.prompt, plan.delivery, started)
        state.delivering = None
        state.watch = None
        # stream-json input: the wait for a turn the TUI starts by itself after the last
        # one (background work's notification), while background work is left.
        self.after: Optional[background.BackgroundWait] = None
        self.follower = background.Follower(
            state.transcript, lambda: state.facts, os.environ, trace
        )
        state.results = Results(emitter, trace, multi_turn=plan.multi_turn)
        # The installed release, then what is built on it: the stream-json channel (many
        # turns in one TUI, prompts typed in as they arrive) and the hooks that ask
        # through it.
        state.facts = contract.facts_for(release.installed_version(options.claude_binary))
        emitter.release = state.facts.version
        state.channel = None
        if plan.multi_turn:
            from claude_print.sdk.stream_input import open_channel

            state.channel = open_channel(
                emitter,
                trace,
                state.facts,
                plan.permission_mode,
                plan.can_use_tool,
                plan.wants_bypass,
                plan.session_id or "",
            )
            if not options.replay_user_messages:
                from claude_print.turns.batching import joinable

                state.channel.joinable = joinable
        state.asks = AskingHooks(self.routes.answer, trace, options.max_budget_usd, state.channel)
        screen_error = self.routes.screen_error
        startup = StartupScreens(plan.wants_bypass, screen_error, trace)
        self.boot = Boot(startup, plan.argv_prompt, started, screen_error, trace)
        self.mcp: Optional[McpWait] = None  # holds the first prompt for the MCP servers
        self.rules = Rules()  # the limits every turn is watched with (start())
        state.files_pending = bool(options.files)
        # stream-json shows runs of the user's hooks (SessionStart's, or all of them).
        state.reports_hooks = options.output_format == "stream-json"
        state.reported_hooks = hook_events.reported_events(options.include_hook_events)
        state.hook_watch = HookWatch([])
        state.later_stops = []

    def close(self) -> None:
        """Shutdown: the child, the transcript (--no-session-persistence), the relay."""
        state = self.state
        self.pump.close_child()
        if state.options.no_session_persistence:
            for path in state.transcript.forget():
                state.trace(f"--no-session-persistence: removed {path}")
        self.pump.close()

    def start(self) -> None:
        """Boot up to the spawn: checks, --file downloads, the caller's `initialize`, the
        relay, the TUI's command line and environment (`launch.prepare`)."""
        state = self.state
        options = state.options
        self.pump.signals.install()
        if state.files_pending:
            from claude_print.run import file_downloads

            file_downloads.require_token()
            self.routes.download_files(
                file_downloads.session_before_start(options.forwarded, state.session_id)
            )
        leftovers.sweep_at_start()  # relay dirs of runs killed with SIGKILL
        if state.channel is not None:
            # The caller's `initialize` names the hooks it wants: they must be in the
            # TUI's settings from the start.
            deadline = min(self.pump.deadline, time.monotonic() + FIRST_MESSAGE_WAIT)
            state.channel.take_first(deadline, self.pump.signals.fd)
            self.pump.signals.check()
        plan = launch.prepare(
            options,
            state.facts,
            self.delivery,
            state.channel,
            state.session_id,
            state.reported_hooks,
            state.trace,
        )
        self.pump.relay = plan.relay
        self.clipboard = plan.clipboard
        state.stream.mcp_servers = plan.relay.mcp_names
        if state.channel is not None:
            state.channel.mcp_servers = plan.relay.mcp_names  # mcp_status, mcp_* requests
        state.hook_watch = HookWatch(plan.relay.watched)
        self.mcp = McpWait(plan.relay, state.started, state.trace)
        self.rules = plan.rules
        source = "stdin, stream-json" if state.multi_turn else options.prompt_source
        state.trace(f"relay dir {plan.relay.dir}; prompts via {self.delivery} ({source})")
        self.pump.child = PtyChild(plan.argv, plan.env, cwd=os.getcwd())
        state.trace(f"spawned {options.claude_binary} as pid {self.pump.child.pid}")
        if state.claude_version:
            drift = contract.drift_note(state.facts)
            state.trace(f"Claude Code {state.claude_version} (from its package){drift}")
        guess = state.transcript.guessed_path()
        if guess is not None:
            self.routes.open_transcript(guess)
        # While the TUI boots: what the turn's end needs (a few ms), imported on its
        # critical path otherwise.
        from claude_print.records import summary  # noqa: F401
        from claude_print.turns import tui_cost  # noqa: F401

    # --- the phases ---------------------------------------------------------

    def run(self) -> int:
        state = self.state
        if not state.multi_turn:
            code = self._answered_here(state.turn)
            if code is not None:
                return code
        self.boot_up()
        if not state.multi_turn:
            return self._run_turn(state.turn)
        assert state.channel is not None
        code = EXIT_OK
        while True:
            # (mypy joins the union to `object` through the generic pump)
            taken = cast("Union[Prompt, Turn]", self.pump.run(self._next_input))
            if isinstance(taken, Turn):
                code = self._run_turn(taken)
                continue
            prompt = taken
            if prompt.text is None:  # stdin ended: so does the session, once its work has
                return self._after_input(code)
            self.after = None  # the caller's turn comes first: the TUI queues the rest
            state.later_stops = []
            turn = Turn(prompt.text, self.delivery, prompt.arrived, len(state.transcript.records))
            turn.images = prompt.images
            if state.options.replay_user_messages:
                turn.replay = prompt.message
            answered = self._answered_here(turn, prompt.error)
            if answered is not None:  # never in the TUI: nothing to interrupt
                state.channel.interrupts.clear()
            code = self._run_turn(turn) if answered is None else answered

    def boot_up(self) -> None:
        """Boot: the spawn, then probes and screens until the input box is up."""
        self.start()
        self.pump.run(self.pump.keyed(self._boot_step, READY))
        if self.delivery == "argv":  # it went in by itself at the box
            advance(self.state.turn, Submitted(time.monotonic()))

    def take_turn(self, turn: Turn) -> int:
        """One prompt of a booted one-prompt session (a warm keeper's, keeper.py)."""
        code = self._answered_here(turn)
        return self._run_turn(turn) if code is None else code

    def _answered_here(self, turn: Turn, error: str = "") -> Optional[int]:
        """A prompt that never reaches the TUI: refused (its text would act as keys, or
        it names a command the TUI would run otherwise than `claude -p`), or one that
        `claude -p` answers without a model turn (`slash.decide`). None: it goes in."""
        state = self.state
        from claude_print.turns import prompt_gate, slash

        options = state.options
        gate = prompt_gate.judge(
            turn.prompt, turn.delivery, error, state.facts, options.claude_binary, options.forwarded
        )
        if gate.facts is not state.facts:  # learned from the binary
            state.facts = gate.facts
            state.emitter.release = gate.facts.version
        decision = gate.decision
        if decision.kind == slash.REFUSE:
            state.trace(f"/{decision.command}: refused by the slash-command rules")
        if gate.refusal:
            if not state.multi_turn:
                raise ClaudePrintError(gate.refusal)
            return self._refuse_turn(turn, gate.refusal)
        if decision.kind != slash.ANSWER:
            return None
        state.turn = turn
        state.trace(f"/{decision.command}: answered as claude -p {state.facts.version} does")
        code = self._end(ended_early(decision.text, state.trace))
        advance(turn, ResultOut())
        return code

    def _boot_step(self, now: float) -> Optional[Union[bytes, str]]:
        exists = self.delivery == "argv" and self.state.transcript.exists()
        return self.boot.step(now, self.state.tui.lines(), self.pump.keys, exists)

    def _refuse_turn(self, turn: Turn, message: str) -> int:
        """A message the TUI cannot take: an error result for it, the session goes on."""
        state = self.state
        state.turn = turn
        state.trace(f"message refused: {message}")
        return state.results.emit(turn_end.refused(self._context(), message))

    def _run_turn(self, turn: Turn) -> int:
        state = self.state
        state.turn = turn
        if self.pump.relay is not None:
            self.pump.relay.new_turn()
        if turn.submitted_at is None:
            self.pump.rendering = True
            if state.channel is not None and state.channel.pending_mode is not None:
                self._switch_mode(state.channel.pending_mode)
                state.channel.pending_mode = None
            state.delivering = Delivery(
                turn.prompt,
                turn.delivery,
                state.facts,
                self._stage_prompt,
                self.routes.screen_error,
                state.trace,
                time.monotonic(),
                turn.images,
                self.clipboard,
            )
            self.pump.run(self.pump.keyed(self._deliver_step, DELIVERED))
            state.delivering = None
            submitted = time.monotonic()
            advance(turn, Submitted(submitted))
            if state.multi_turn and state.emitter.streams_events:
                state.stream.init_at_submission()  # as the CLI does
            self.routes.press_interrupt(submitted, " (it came before the prompt went in)")
        self.pump.rendering = False
        state.watch = self._watch(turn)
        verdict = self.pump.run(state.watch.step)
        if not state.multi_turn:
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
        state = self.state
        every = state.options.output_format == "stream-json" or (
            state.options.output_format == "text" and state.facts.text_every_result
        )
        while True:
            wait = self.follower.after(turn, verdict, time.monotonic())
            if wait is None:
                break
            ctx = self._context()
            code = self._end(verdict, ctx, final=False) if every else None
            advance(turn, ResultOut())
            if not self._follows(wait):
                state.turn = turn
                return self._end(verdict, ctx) if code is None else code
            if code is None:  # counted in the run's totals, never printed
                state.results.emit(verdict.build(ctx), show=False)
            turn = wait.turn
            state.watch = self._watch(turn)
            verdict = self.pump.run(state.watch.step)
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
        self.pump.idle_poll = background.WAIT_POLL
        return self.follower.follows(wait, self.pump.run, time.monotonic)

    def _hand_over(self, turn: Turn) -> None:
        """The TUI's next turn is ours to watch: its hooks go to it, those read early too."""
        state = self.state
        state.turn = turn
        now = time.monotonic()
        for event in state.later_stops:
            advance(turn, Stopped(event, now))
        state.later_stops = []

    def _next_input(self, now: float) -> Optional[Union[Prompt, Turn]]:
        """Between the caller's turns: its next message, or a turn the TUI started by
        itself for background work's notification (claude -p runs it as it comes)."""
        assert self.state.channel is not None
        prompt = self.state.channel.next_prompt(now)
        if prompt is None and self.after is not None and self.after.started():
            self._hand_over(self.after.turn)
            return self.follower.begun(self.after, now)
        return prompt

    def _switch_mode(self, mode: str) -> None:
        """set_permission_mode, before the next prompt: Shift+Tab until the footer shows it."""
        switch = ModeSwitch(mode, self.routes.screen_error, self.state.trace)
        self.pump.run(
            self.pump.keyed(
                lambda now: switch.step(now, self.state.tui.lines(), self.pump.keys), DONE
            )
        )

    def _watch(self, turn: Turn) -> TurnWatch:
        state = self.state
        return TurnWatch(
            turn,
            self.rules,
            state.transcript,
            self.pump.keys,
            state.tui.lines,
            self.pump.child_gone,
            state.hook_watch,
            lambda: bool(state.asks.waiting),
            state.channel.interrupts if state.channel is not None else [],
            self.routes.screen_error,
            state.trace,
            self._tui_status,
        )

    def _tui_status(self) -> Optional[str]:
        from claude_print.tui import session_status

        return session_status.status(self.pump.child.pid if self.pump.child else None, os.environ)

    def _deliver_step(self, now: float) -> Optional[Union[bytes, str]]:
        """Editor or paste: load the prompt, press Enter, until UserPromptSubmit shows it."""
        delivering = self.state.delivering
        assert delivering is not None and self.mcp is not None
        if delivering.loading_at is None and self.mcp.holding(now):
            return None
        return delivering.step(
            now, self.state.tui.lines, self.pump.keys.last_output, self.pump.keys.last_key
        )

    def _stage_prompt(self, text: str) -> None:
        assert self.pump.relay is not None
        self.pump.relay.stage_prompt(text)

    def _end(
        self, verdict: Verdict, ctx: Optional[turn_end.Context] = None, final: bool = True
    ) -> int:
        """The turn's result (result_out.emit); `final`: a one-shot run's last turn, whose
        TUI may shut down now."""
        one_shot = self.pump.child if not self.state.multi_turn and final else None
        return result_out.emit(self.state, verdict, one_shot, ctx)

    def _context(self) -> turn_end.Context:
        return result_out.context(self.state)


__all__ = ["Session"]
