"""The run's face for warm start: a run whose TUI boots before its prompt is known.

A keeper (warm_start/keeper.py) boots a TUI as a cold run would, holds it at its input
box, and later gives it one run's prompt. It does that through `HeldRun` alone: boot,
wait, adopt the run's prompt and clock, run the turn, close. The session behind it
(`runner.Session`) stays the run package's own: this face uses its phases (`boot_up`,
`take_turn`, `close`), its state (`run_state.RunState`) and its pump (`pump.Pump`).
"""

from __future__ import annotations

import os
import time
from typing import Callable, List, Optional, TypeVar, Union

from claude_print.errors import ClaudePrintError
from claude_print.options import Options
from claude_print.printing.emit import Emitter, Trace
from claude_print.run import launch
from claude_print.run.entry import guarded
from claude_print.run.runner import Session
from claude_print.tui.delivery import DELIVERED, Delivery
from claude_print.turns.turn import Turn

T = TypeVar("T")

# The prompt the held session is built with; never typed (prompts come by the editor).
PLACEHOLDER = "(warm start: the prompt comes later)"
MCP_POLL = 0.05  # seconds between looks for the MCP servers' ready files
# Loaded with importlib, which the import graph cannot see: every module of the package
# but these entry points (tests/project/test_import_graph.py reads this declaration).
NOT_PRELOADED = (
    "claude_print.__main__",
    "claude_print.run.file_downloads",
    "claude_print.needle.__main__",
)


class HeldRun:
    """One run's session, booted before its prompt; given the prompt once (`take`)."""

    def __init__(self, options: Options, started: float) -> None:
        held = options._replace(prompt=PLACEHOLDER, prompt_source="stdin", prompt_via="editor")
        self.trace = Trace(options.trace, started)
        emitter = Emitter(options.output_format, options.verbose)
        self._session = Session(held, self.trace, emitter, started)
        self._state, self._pump = self._session.state, self._session.pump
        self._turn: Optional[Turn] = None

    @property
    def session_id(self) -> str:
        return self._state.session_id or ""

    @property
    def claude_version(self) -> str:
        return self._state.claude_version

    def boot(self, until: float) -> None:
        """Spawn, answer the screens, reach the input box (by `until`), wait for the MCP
        servers as a cold run's first prompt does, and prime the ways in: a run's prompt
        then goes in at once."""
        self._pump.deadline = until
        self._session.boot_up()
        _import_the_rest()
        self._pump.wait(self._mcp_settled, [], MCP_POLL)
        self._prime_delivery()

    def wait(self, step: Callable[[float], Optional[T]], fds: List[int], until: float) -> T:
        """The held session's pump until `step` has a value or `until` (ClaudePrintError)."""
        self._pump.deadline = until
        return self._pump.wait(step, fds)

    def adopt(self, prompt: str, via: str, started: float, timeout: float, trace: bool) -> None:
        """From here on the session is the run's: its prompt, its clock, its deadline; the
        prompt goes in by `via` (delivery.warm_delivery)."""
        state = self._state
        self.trace.enabled = trace
        state.options = state.options._replace(prompt=prompt, timeout=timeout, trace=trace)
        state.started = self.trace.started = started
        self._pump.deadline = started + timeout
        self.trace(f"warm start: keeper {os.getpid()} took the prompt")
        self._turn = Turn(prompt, via, started)

    def run_turn(self) -> int:
        """The adopted prompt's turn, to its exit code (failures reported as a cold run's)."""
        turn, session = self._turn, self._session
        assert turn is not None, "adopt() first"

        def body() -> int:
            launch.check_prompt(turn.prompt, turn.delivery, self._state.facts, self.trace)
            return session.take_turn(turn)

        return guarded(session, body)

    def close(self) -> None:
        self._session.close()

    # --- inside the boot -------------------------------------------------------

    def _mcp_settled(self, now: float) -> Optional[bool]:
        mcp = self._session.mcp
        return None if mcp is not None and mcp.holding(now) else True

    def _prime_delivery(self) -> None:
        """A dry run of each way a prompt goes in: a paste of one character, then the
        editor with nothing staged (which empties the box again). The TUI's first paste
        and first load from the editor after its boot are its slowest (~50 ms more each
        on 2.1.332): a run's prompt then goes in at the later speed (bench.py, decision
        57). Nothing is submitted: no request, no record."""
        for text, method in (("x", "paste"), ("", "editor")):
            self._dry_run(text, method)

    def _dry_run(self, text: str, method: str) -> None:
        """`text` into the box by `method`, until the TUI has drawn it; no Enter."""
        state, pump = self._state, self._pump
        assert pump.relay is not None
        relay, keys = pump.relay, pump.keys
        loading = Delivery(
            text,
            method,
            state.facts,
            relay.stage_prompt,
            lambda what, lines: ClaudePrintError(f"warm start: {what}"),
            self.trace,
            time.monotonic(),
            submit=False,
        )

        def step(now: float) -> Optional[Union[bytes, str]]:
            return loading.step(now, state.tui.lines, keys.last_output, keys.last_key)

        state.delivering = loading  # the editor script's report reaches it
        try:
            pump.wait(pump.keyed(step, DELIVERED), [], MCP_POLL)
        finally:
            state.delivering = None
            relay.unstage_prompt()


def _import_the_rest() -> None:
    """A cold run imports what its turn's end needs while its TUI boots; a held run
    would import it on its critical path (about 35 ms), so the keeper does it now."""
    import importlib
    import pkgutil

    import claude_print

    for module in pkgutil.walk_packages(claude_print.__path__, "claude_print."):
        if module.name not in NOT_PRELOADED:
            importlib.import_module(module.name)
