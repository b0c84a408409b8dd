"""After a turn: is Claude Code's work over, as `claude -p` of this release would judge it?

A model can leave work running when its turn ends: a command started with
`run_in_background`, a subagent (in the background by default from 2.1.332). `claude -p`
does not exit then. It waits, hands the model each task's outcome as a new prompt (a
task notification) and prints a result for that turn too; it exits once nothing is left,
or when only work it does not wait for is left (`contract.BACKGROUND_GRACE_SECS` later,
killing it), or at its ceiling. The TUI runs the same tasks and submits the same
notifications by itself, but never exits.

So after each turn claude-print reads what Claude Code says is still going on, never a
timer of its own:

- the Stop hook's `background_tasks` (each with its kind and status);
- the transcript's queue (`queue-operation` records): notifications waiting for the
  turn to end;

and waits as that release's `claude -p` would (`contract.Facts.background_holds`). A
new turn shows as its prompt in the transcript (`origin.kind` "task-notification") or
as its hooks.
"""

from __future__ import annotations

from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Tuple,
)

from claude_print import contract
from claude_print.turns.turn_state import Submitted, advance

if TYPE_CHECKING:
    from claude_print.hooks.relay import HookEvent
    from claude_print.turns.transcript_feed import TranscriptFeed
    from claude_print.turns.turn import Turn
    from claude_print.turns.turn_watch import Verdict

Pump = Callable[[Callable[[float], Optional[str]]], str]

WAIT_POLL = 0.05  # how often the transcript is read for the next turn's prompt
CAME = "turn"  # the TUI started the next turn
OVER = "over"  # nothing `claude -p` would wait for is left
SHELL = "shell"  # a command run in the background, as the Stop hook names its kind
# A task's status while it may still send a notification.
LIVE_STATUSES = ("running", "pending")


class Outlook(NamedTuple):
    """What Claude Code says is left when a turn ends."""

    running: Tuple[str, ...]  # "shell b3x9 (bg)": tasks still running, for the trace
    holding: bool  # one of them is of a kind `claude -p` waits for
    queued: int  # notifications queued, not yet answered in a turn
    spared: bool = False  # one holds past the ceiling (a command with its own time limit)

    @property
    def pending(self) -> bool:
        return bool(self.running) or self.queued > 0

    def describe(self) -> str:
        parts = list(self.running)
        if self.queued:
            parts.append(f"{self.queued} notification(s) queued")
        return ", ".join(parts)


def live_tasks(payload: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """The Stop payload's background tasks that are still running."""
    tasks = payload.get("background_tasks")
    if not isinstance(tasks, list):
        return []
    return [t for t in tasks if isinstance(t, dict) and t.get("status") in LIVE_STATUSES]


def outlook(
    stop: Optional[HookEvent], run_records: List[Dict[str, Any]], facts: contract.Facts
) -> Outlook:
    """What is left after the turn that `stop` ended, `run_records` being the run's
    records from its caller's prompt on (no Stop: nothing claude-print can read, so
    nothing it waits for)."""
    from claude_print.records.transcript import notifications_due

    if stop is None:
        return Outlook((), False, 0)
    tasks = live_tasks(stop.payload)
    running = tuple(
        f"{t.get('type', '?')} {t.get('id', '?')} ({t.get('description', '')})" for t in tasks
    )
    kinds = {t.get("type") for t in tasks}
    holding = any(kind in facts.background_holds for kind in kinds)
    spared = facts.ceiling_spares_shells and SHELL in kinds and SHELL in facts.background_holds
    return Outlook(running, holding, notifications_due(run_records), spared)


def ceiling_secs(environ: Mapping[str, str]) -> Optional[float]:
    """`claude -p`'s ceiling on the wait for work it holds for (None: no ceiling)."""
    raw = environ.get(contract.BACKGROUND_CEILING_VAR, "")
    try:
        millis = float(raw) if raw.strip() else float(contract.BACKGROUND_CEILING_MS)
    except ValueError:
        millis = float(contract.BACKGROUND_CEILING_MS)
    return millis / 1000 if millis > 0 else None


def next_turn(previous: Turn, prompt_uuid: Optional[str], now: float) -> Turn:
    """The turn the TUI will start by itself after `previous` (its prompt not seen yet)."""
    from claude_print.turns.turn import Turn

    turn = Turn("", "notification", now, previous.first_record)
    turn.after = prompt_uuid
    return turn


class BackgroundWait:
    """The pump phase between a turn's end and the next turn the TUI starts by itself:
    CAME when it starts, OVER when `claude -p` would have exited."""

    def __init__(
        self,
        seen: Outlook,
        turn: Turn,
        transcript: TranscriptFeed,
        since: float,
        ceiling: Optional[float],
        trace: Callable[[str], None],
    ) -> None:
        self.seen = seen
        self.turn = turn
        self.transcript = transcript
        self.since = since
        self.ceiling_at = since + ceiling if ceiling is not None else None
        self.trace = trace

    def started(self) -> bool:
        from claude_print.records.transcript import turn_records

        if self.turn.hooks_seen:
            return True
        self.transcript.poll()
        session_id = self.transcript.session_id or ""
        return bool(turn_records(self.transcript.of(self.turn), session_id, self.turn.after))

    def step(self, now: float) -> Optional[str]:
        if self.started():
            return CAME
        if not self.seen.spared and self.ceiling_at is not None and now >= self.ceiling_at:
            self.trace("background work still running at claude -p's ceiling: the run ends")
            return OVER
        if self.seen.holding:
            return None
        # A queued notification starts its turn at once (~0.1 s): the grace bounds it too.
        if now >= self.since + contract.BACKGROUND_GRACE_SECS:
            self.trace(
                "only background work claude -p does not wait for is left "
                f"({self.seen.describe()}): the run ends"
            )
            return OVER
        return None


class Follower:
    """The orchestrator's side of the wait: after a turn, the wait for the next one the
    TUI starts by itself (None when nothing is left), and the pump until it starts."""

    def __init__(
        self,
        transcript: TranscriptFeed,
        facts: Callable[[], contract.Facts],
        environ: Mapping[str, str],
        trace: Callable[[str], None],
    ) -> None:
        self.transcript = transcript
        self.facts = facts
        self.environ = environ
        self.trace = trace

    def after(self, turn: Turn, verdict: Verdict, now: float) -> Optional[BackgroundWait]:
        """The wait for the turn the TUI starts by itself after `turn`, or None. Work left
        (`outlook`) makes one; so does a notification turn the TUI has started already:
        a subagent that ended just before its parent's answer has its notification taken
        ~0.1 s after the Stop, and once that turn's prompt is on disk the queue nets out
        to nothing (seen on 2.1.277 in 5 runs of 6), yet `claude -p` answers it."""
        uuid = verdict.summary.prompt_uuid
        if uuid is None:
            return None
        seen = outlook(turn.stop_event, self.transcript.of(turn), self.facts())
        follow = next_turn(turn, uuid, now)
        ceiling = ceiling_secs(self.environ)
        wait = BackgroundWait(seen, follow, self.transcript, now, ceiling, self.trace)
        if seen.pending:
            self.trace(f"background work left: {seen.describe()}")
        elif wait.started():
            self.trace("the TUI has started a turn for a notification already")
        else:
            return None
        return wait

    def begun(self, wait: BackgroundWait, now: float) -> Turn:
        """The TUI started `wait.turn`: it is watched from now (its duration_ms too)."""
        self.trace("the TUI started a turn for a background task's notification")
        wait.turn.started = now
        advance(wait.turn, Submitted(now))
        return wait.turn

    def follows(self, wait: BackgroundWait, pump: Pump, now: Callable[[], float]) -> bool:
        """Pump until the TUI starts the next turn (True) or `claude -p` would have
        stopped waiting (False)."""
        if pump(wait.step) == OVER:
            return False
        self.begun(wait, now())
        return True
