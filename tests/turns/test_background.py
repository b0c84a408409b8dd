"""background: after a turn, what Claude Code says is left, and how long `claude -p` of
each release waits for it. Real TUI transcripts and Stop payloads (a background
`sleep 3`, captured on 2.1.197 and 2.1.332 with logging hooks) are in
tests/data/background/."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

import pytest
from harness import TESTS

from claude_print import contract
from claude_print.hooks.relay import HookEvent
from claude_print.records.transcript import notifications_due, turn_records
from claude_print.turns import background
from claude_print.turns.background import CAME, OVER, BackgroundWait, Outlook
from claude_print.turns.turn import Turn

DATA = TESTS / "data" / "background"
SESSION = "11111111-2222-3333-4444-555555555555"


def records(release: str) -> List[Dict[str, Any]]:
    path = DATA / f"shell-{release}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def stops(release: str) -> List[Dict[str, Any]]:
    return list(json.loads((DATA / f"shell-{release}.stops.json").read_text()))


def stop(tasks: Optional[List[Dict[str, Any]]]) -> HookEvent:
    payload: Dict[str, Any] = {"hook_event_name": "Stop"}
    if tasks is not None:
        payload["background_tasks"] = tasks
    return HookEvent("Stop", payload)


# The fake model's answer to the command's notification (tests/support/fake_api.py).
NOTED = 'Noted completed: Background command "bg" completed (exit code 0)'
SHELL = {"id": "b1", "type": "shell", "status": "running", "description": "bg"}
AGENT = {"id": "a1", "type": "subagent", "status": "running", "description": "sub job"}
DONE = {"id": "b2", "type": "shell", "status": "completed", "description": "old"}


# (release, tasks in the Stop payload) -> (pending, holding, spared), written out from
# the measurements in docs/compatibility.md: subagents hold on every release, background
# commands from 2.1.292 on, where their own time limit also keeps the ceiling off.
@pytest.mark.parametrize(
    "release, tasks, expected",
    [
        ("2.1.197", None, (False, False, False)),
        ("2.1.197", [], (False, False, False)),
        ("2.1.197", [DONE], (False, False, False)),
        ("2.1.197", [SHELL], (True, False, False)),
        ("2.1.197", [AGENT], (True, True, False)),
        ("2.1.291", [SHELL], (True, False, False)),
        ("2.1.291", [SHELL, AGENT], (True, True, False)),
        ("2.1.292", [SHELL], (True, True, True)),
        ("2.1.292", [AGENT], (True, True, False)),
        ("2.1.332", [SHELL], (True, True, True)),
        ("2.1.332", [{**SHELL, "status": "pending"}], (True, True, True)),
        ("2.1.332", [AGENT, DONE], (True, True, False)),
        ("9.9.9", [SHELL], (True, True, True)),  # newer than tested: the newest facts
    ],
)
def test_outlook_reads_the_stop_payload_by_release(
    release: str, tasks: Optional[List[Dict[str, Any]]], expected: Any
) -> None:
    seen = background.outlook(stop(tasks), [], contract.facts_for(release))
    assert (seen.pending, seen.holding, seen.spared) == expected


def test_no_stop_means_nothing_to_wait_for() -> None:
    seen = background.outlook(None, records("2.1.332"), contract.facts_for("2.1.332"))
    assert not seen.pending


NOTE = "<task-notification>\n<task-id>b1</task-id>\n</task-notification>"


def queue(operation: str, content: Optional[str] = None) -> Dict[str, Any]:
    record: Dict[str, Any] = {"type": "queue-operation", "operation": operation}
    if content is not None:
        record["content"] = content
    return record


def notified(uuid: str) -> Dict[str, Any]:
    origin = {"kind": "task-notification"}
    return {"type": "user", "uuid": uuid, "origin": origin, "message": {"content": NOTE}}


@pytest.mark.parametrize(
    "found, expected",
    [
        ([], 0),
        ([queue("enqueue", NOTE)], 1),
        # Taken (the dequeue is bookkeeping): due until its turn's prompt is read.
        ([queue("enqueue", NOTE), queue("dequeue")], 1),
        ([queue("enqueue", NOTE), queue("dequeue"), notified("n1")], 0),
        # 2.1.197 folds one into the running turn: no turn of its own follows.
        ([queue("enqueue", NOTE), queue("remove")], 0),
        ([queue("enqueue", NOTE), queue("enqueue", NOTE), notified("n1")], 1),
        # The same prompt read twice (a re-read file) answers one notification.
        ([queue("enqueue", NOTE), queue("enqueue", NOTE), notified("n1"), notified("n1")], 1),
        # A prompt of the caller's queued while a turn runs is no notification.
        ([queue("enqueue", "and then?"), queue("dequeue")], 0),
        ([queue("enqueue")], 0),
        ([notified("n1")], 0),  # never below zero
    ],
)
def test_notifications_due_counts_queued_less_answered(
    found: List[Dict[str, Any]], expected: int
) -> None:
    assert notifications_due([{"type": "user"}, *found]) == expected


def test_a_notification_taken_before_the_turn_end_was_read_is_still_due() -> None:
    """2.1.291, a subagent done before its parent's answer: the Stop says nothing runs,
    the TUI took the notification 0.13 s after the answer; the run must go on."""
    taken = [queue("enqueue", NOTE), queue("dequeue")]
    seen = background.outlook(stop([]), taken, contract.facts_for("2.1.291"))
    assert seen.pending and seen.queued == 1 and not seen.holding


@pytest.mark.parametrize("release", ["2.1.197", "2.1.332"])
def test_real_stops_say_what_is_left(release: str) -> None:
    """The first Stop lists the running command, the second (after its notification's
    turn) nothing; the transcript's queue is empty at the end."""
    first, last = stops(release)
    facts = contract.facts_for(release)
    assert background.outlook(HookEvent("Stop", first), [], facts).running == (
        f"shell {first['background_tasks'][0]['id']} (bg)",
    )
    assert not background.outlook(HookEvent("Stop", last), records(release), facts).pending


@pytest.mark.parametrize("release", ["2.1.197", "2.1.332"])
def test_turn_records_cut_a_run_into_its_turns(release: str) -> None:
    """The human turn ends where the TUI's own notification turn begins; that one is
    found after the human prompt's uuid and holds the last answer."""
    session = records(release)
    human = turn_records(session, SESSION)
    assert human[0]["origin"] == {"kind": "human"}
    answers = [r for r in human if r.get("type") == "assistant"]
    assert answers[-1]["message"]["content"][-1]["text"] == "Tool turn done."
    follow = turn_records(session, SESSION, after=human[0]["uuid"])
    assert follow[0]["origin"]["kind"] == "task-notification"
    assert follow[0]["message"]["content"].startswith("<task-notification>")
    texts = [r["message"]["content"][-1]["text"] for r in follow if r.get("type") == "assistant"]
    assert texts == [NOTED]
    # No third turn yet: [] until the TUI starts one.
    assert turn_records(session, SESSION, after=follow[0]["uuid"]) == []


def test_summary_of_a_notification_turn_counts_it_alone() -> None:
    from claude_print.records.summary import summarise

    session = records("2.1.332")
    human = turn_records(session, SESSION)
    first = summarise(human)
    follow = summarise(turn_records(session, SESSION, after=first.prompt_uuid))
    assert (first.num_turns, first.result_text, first.origin) == (2, "Tool turn done.", None)
    assert (follow.num_turns, follow.result_text) == (1, NOTED)
    assert follow.origin is not None and follow.origin["kind"] == "task-notification"


@pytest.mark.parametrize(
    "value, expected",
    [("", 600.0), ("4000", 4.0), ("0", None), ("junk", 600.0), (" 250 ", 0.25)],
)
def test_ceiling_follows_claude_p_s_variable(value: str, expected: Optional[float]) -> None:
    environ = {contract.BACKGROUND_CEILING_VAR: value} if value else {}
    assert background.ceiling_secs(environ) == expected


class FakeFeed:
    """TranscriptFeed's face for the wait: records, a session, nothing to poll."""

    def __init__(self, session: List[Dict[str, Any]]) -> None:
        self.records = session
        self.session_id = SESSION

    def poll(self) -> None:
        pass

    def of(self, turn: Turn) -> List[Dict[str, Any]]:
        return turn.records(self.records)


def waiting(seen: Outlook, ceiling: Optional[float], after: str = "nope") -> BackgroundWait:
    turn = Turn("", "notification", 100.0)
    turn.after = after
    feed: Any = FakeFeed([])
    return BackgroundWait(seen, turn, feed, 100.0, ceiling, lambda _: None)


GRACE = 5.0  # claude -p's, read in its code on every release (docs/compatibility.md)


@pytest.mark.parametrize(
    "seen, ceiling, at, expected",
    [
        # Only work claude -p does not wait for: over after its grace, not before.
        (Outlook(("shell",), False, 0), 600.0, 100 + GRACE - 0.01, None),
        (Outlook(("shell",), False, 0), 600.0, 100 + GRACE, OVER),
        # A queued notification's turn starts at once; the grace bounds it too.
        (Outlook((), False, 1), 600.0, 100 + GRACE - 0.01, None),
        (Outlook((), False, 1), 600.0, 100 + GRACE, OVER),
        # Work it waits for: up to the ceiling, on both sides of it.
        (Outlook(("subagent",), True, 0), 600.0, 100 + 599.99, None),
        (Outlook(("subagent",), True, 0), 600.0, 100 + 600.0, OVER),
        (Outlook(("subagent",), True, 0), None, 100 + 10**6, None),  # ceiling off
        # A ceiling below the grace ends unheld work first, as in claude -p.
        (Outlook(("shell",), False, 0), 3.0, 103.0, OVER),
        # A command with its own time limit keeps the ceiling off (2.1.292 on).
        (Outlook(("shell",), True, 0, True), 3.0, 100 + 10**6, None),
    ],
)
def test_the_wait_ends_where_claude_p_stops_waiting(
    seen: Outlook, ceiling: Optional[float], at: float, expected: Optional[str]
) -> None:
    assert waiting(seen, ceiling).step(at) == expected


def test_the_next_turn_shows_by_its_hooks_or_its_prompt() -> None:
    wait = waiting(Outlook(("subagent",), True, 0), 600.0)
    assert wait.step(101.0) is None
    wait.turn.hooks_seen = 1  # its UserPromptSubmit or Stop came first
    assert wait.step(101.0) == CAME
    session = records("2.1.332")
    human = turn_records(session, SESSION)
    wait = waiting(Outlook(("shell",), False, 0), 600.0, after=str(human[0]["uuid"]))
    wait.transcript.records = session
    assert wait.step(101.0) == CAME


def test_task_notification_event_carries_the_notification_fields() -> None:
    from claude_print.printing.task_events import notification_event

    text = (
        "<task-notification>\n<task-id>b5</task-id>\n<tool-use-id>toolu_1</tool-use-id>\n"
        "<output-file>/tmp/t/b5.output</output-file>\n<status>completed</status>\n"
        '<summary>Background command "bg" completed (exit code 0)</summary>\n'
        "</task-notification>"
    )
    assert notification_event(text, "s", "u") == {
        "type": "system",
        "subtype": "task_notification",
        "task_id": "b5",
        "tool_use_id": "toolu_1",
        "status": "completed",
        "output_file": "/tmp/t/b5.output",
        "summary": 'Background command "bg" completed (exit code 0)',
        "uuid": "u",
        "session_id": "s",
    }
    assert notification_event("hello <task-id>x</task-id>", "s", "u") is None
    assert notification_event("<task-notification></task-notification>", "s", "u") is None


def test_a_notification_turn_the_tui_started_already_is_followed() -> None:
    """The subagent ended before its parent's answer: the Stop lists no task, and by the
    time the turn is read the TUI has taken the notification and recorded its prompt, so
    the queue nets out. The run still follows that turn (2.1.277: claude -p answered it,
    claude-print printed the first answer in 5 runs of 6)."""
    from claude_print.records.summary import summarise
    from claude_print.turns.background import Follower
    from claude_print.turns.turn_state import Stopped, advance

    session = records("2.1.332")
    human = turn_records(session, SESSION)
    assert notifications_due(session) == 0  # the queue says nothing is left
    feed: Any = FakeFeed(session)
    follower = Follower(feed, lambda: contract.facts_for("2.1.277"), {}, lambda _: None)
    turn = Turn("hi", "editor", 100.0)
    verdict: Any = type("V", (), {"summary": summarise(human)})()
    advance(turn, Stopped(stop([]), 100.5))
    wait = follower.after(turn, verdict, 101.0)
    assert wait is not None and wait.step(101.0) == CAME
    # Nothing started and nothing left: the run ends there.
    feed.records = human
    assert follower.after(turn, verdict, 101.0) is None
