"""The run's state: what the phases (`runner.Session`) and the routing of what the pump
reads (`routes.Routes`) read and write. It holds no I/O: the child, the relay, the signal
pipe and the keys are the pump's (`pump.Pump`), which alone reads and closes them.

`runner.Session` fills it in, in the order its fields depend on each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, FrozenSet, List, Optional

if TYPE_CHECKING:
    from claude_print import contract
    from claude_print.hooks.hook_events import HookWatch
    from claude_print.hooks.relay import HookEvent
    from claude_print.options import Options
    from claude_print.printing.emit import Emitter, Trace
    from claude_print.sdk.stream_input import ControlChannel
    from claude_print.tui.delivery import Delivery
    from claude_print.tui.tui_screen import TuiScreen
    from claude_print.turns.asking import AskingHooks
    from claude_print.turns.results import Results
    from claude_print.turns.stream_out import StreamOut
    from claude_print.turns.transcript_feed import TranscriptFeed
    from claude_print.turns.turn import Turn
    from claude_print.turns.turn_watch import TurnWatch


class RunState:
    """One run's state (runner.Session sets it up); no methods but what it tells."""

    options: Options
    trace: Trace
    emitter: Emitter
    started: float
    facts: contract.Facts
    channel: Optional[ControlChannel]  # stream-json input
    tui: TuiScreen  # the screen model the pump feeds
    transcript: TranscriptFeed
    stream: StreamOut
    turn: Turn
    delivering: Optional[Delivery]  # the prompt on its way into the box
    watch: Optional[TurnWatch]  # the turn after its submission
    results: Results
    asks: AskingHooks
    files_pending: bool  # --file downloads not made yet
    reports_hooks: bool
    reported_hooks: Optional[FrozenSet[str]]
    hook_watch: HookWatch
    later_stops: List[HookEvent]  # Stops of a turn the TUI started before ours was over

    @property
    def session_id(self) -> Optional[str]:
        return self.transcript.session_id

    @property
    def claude_version(self) -> str:
        return self.facts.version

    @property
    def multi_turn(self) -> bool:
        return self.channel is not None
