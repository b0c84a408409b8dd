"""SubagentStream: a subagent's own messages in stream-json, as `claude -p` prints them.

Fed with real records (tests/data/subagents/<release>/<case>/, README there): what the
TUI wrote for a delegating prompt, run through claude-print (the session's messages,
the subagent's transcript and its meta file), and, for the expected events, what
`claude -p` of the same release printed for the same prompt (`claude-p.jsonl`: its
subagent messages and task events). Cases: `hello` (the SDK case: a subagent that only
answers), `tool` (it says a text, runs a command and answers), on 2.1.197 in the
foreground (its default), on 2.1.270 and 2.1.332 in the background; `bg` on 2.1.197
and `fg` on 2.1.270 and 2.1.332 the other way round (`run_in_background`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from harness import TESTS

from claude_print import contract
from claude_print.printing import output
from claude_print.printing.stream import StreamConverter
from claude_print.turns.subagent_stream import SubagentStream

DATA = TESTS / "data" / "subagents"
CASES = sorted((d.parent.name, d.name) for d in DATA.glob("*/*") if d.is_dir())
# Known difference: from 2.1.270 (2.1.197 honours it) the TUI's Agent tool runs a
# subagent in the background also when the call says `run_in_background: false` (its
# interactive schema has no such parameter), where `claude -p` waits for it; claude-print
# prints what the TUI did (test_run_in_background_false_is_the_tuis_background_subagent).
TUI_BACKGROUNDS = [("2.1.270", "fg"), ("2.1.332", "fg")]
SAME_AS_CLI = [c for c in CASES if c not in TUI_BACKGROUNDS]
Event = Dict[str, Any]

# The CLI's events claude-print does not print (docs/compatibility.md, "Background
# work"): a task's status changes and a subagent's progress lines.
NOT_REPORTED = ("task_updated", "task_progress", "background_tasks_changed")


# A task event's fields compared (ids and paths: test_ids_tie_the_messages_to_their_task).
TASK_FIELDS = (
    "subtype",
    "status",
    "description",
    "subagent_type",
    "is_backgrounded",
    "spawn_depth",
    "task_type",
    "prompt",
    "summary",
    "summary_is_report",
)


def records(path: Path) -> List[Event]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class Case:
    """One capture laid out as the TUI writes it: `<session>.jsonl`, and beside it
    `<session>/subagents/agent-<id>.jsonl` and `.meta.json`."""

    def __init__(self, tmp_path: Path, release: str, name: str, agent_lines: int = -1) -> None:
        source = DATA / release / name
        self.main = records(source / "main.jsonl")
        self.agent = records(source / "agent.jsonl")
        self.real = records(source / "claude-p.jsonl")
        session = str(self.main[0]["sessionId"])
        agent_id = str(self.agent[0]["agentId"])
        self.path = tmp_path / f"{session}.jsonl"
        folder = tmp_path / session / "subagents"
        folder.mkdir(parents=True)
        shutil.copy(source / "agent.meta.json", folder / f"agent-{agent_id}.meta.json")
        self.agent_path = folder / f"agent-{agent_id}.jsonl"
        lines = (source / "agent.jsonl").read_text().splitlines(keepends=True)
        self.agent_path.write_text("".join(lines if agent_lines < 0 else lines[:agent_lines]))
        self.release = release
        self.converter = StreamConverter(session)
        self.converter.facts = contract.facts_for(release)
        self.now = 0.0
        self.stream = SubagentStream(self.converter, lambda: str(self.path), lambda: self.now)

    def feed(self, record: Event) -> List[Event]:
        events = self.stream.around(self.converter.feed(record)) + self.stream.poll()
        return [self.printed(e) for e in events]

    def printed(self, event: Event) -> Event:
        """As the emitter prints it (conformed to the release's shapes)."""
        return output.conform(event, self.release, streamed=True)

    def run(self) -> List[Event]:
        events = [e for record in self.main for e in self.feed(record)]
        last = self.stream.around(self.converter.flush()) + self.stream.flush()
        return events + [self.printed(e) for e in last]


def subagent_side(events: List[Event]) -> List[Event]:
    """The subagent's messages and its task events, in order."""
    return [
        e
        for e in events
        if e.get("parent_tool_use_id")
        or (str(e.get("subtype", "")).startswith("task_") and e["subtype"] not in NOT_REPORTED)
    ]


def block(event: Event) -> Tuple[Any, ...]:
    """A message's one content block, without the ids of the run."""
    (content,) = event["message"]["content"]
    kind = content["type"]
    if kind == "tool_use":
        return (kind, content["name"], json.dumps(content["input"], sort_keys=True))
    if kind == "tool_result":
        return (kind, json.dumps(content["content"]), content.get("is_error"))
    return (kind, content.get("text"))


def view(event: Event) -> Tuple[Any, ...]:
    if event["type"] in ("user", "assistant"):
        return (event["type"], block(event), event["subagent_type"], event["task_description"])
    return tuple(event.get(name) for name in TASK_FIELDS)


@pytest.mark.parametrize(("release", "name"), SAME_AS_CLI)
def test_the_subagents_messages_are_the_real_clis(tmp_path: Path, release: str, name: str) -> None:
    case = Case(tmp_path, release, name)
    ours, theirs = subagent_side(case.run()), subagent_side(case.real)
    assert [view(e) for e in ours] == [view(e) for e in theirs]
    for mine, real in zip(ours, theirs):
        if mine["type"] in ("user", "assistant"):
            assert list(mine) == list(real), view(real)  # the same keys, in the same order
        else:
            # run_id: known difference (tests/support/sdk_harness.KEYS_MAY_MISS)
            assert set(mine) == set(real) - {"run_id"}, view(real)
            assert set(mine.get("usage", {})) == set(real.get("usage", {}))


@pytest.mark.parametrize(("release", "name"), SAME_AS_CLI)
def test_ids_tie_the_messages_to_their_task(tmp_path: Path, release: str, name: str) -> None:
    """parent_tool_use_id is the Agent call's id, agent_id (2.1.332) the task's; a
    notification's output file is the task's, as the CLI's, but a foreground one's."""
    case = Case(tmp_path, release, name)
    ours, theirs = subagent_side(case.run()), subagent_side(case.real)
    for events in (ours, theirs):
        started = events[0]
        assert started["subtype"] == "task_started"
        for event in events[1:-1]:
            assert event["parent_tool_use_id"] == started["tool_use_id"]
            assert event.get("agent_id", started["task_id"]) == started["task_id"]
        notification = events[-1]
        assert (notification["task_id"], notification["tool_use_id"]) == (
            started["task_id"],
            started["tool_use_id"],
        )
    mine, real = ours[-1]["output_file"], theirs[-1]["output_file"]
    if not real:
        assert mine == ""
    else:
        assert mine.rsplit("/tasks/")[1] == real.rsplit("/tasks/")[1].replace(
            theirs[0]["task_id"], ours[0]["task_id"]
        )


def test_a_background_subagent_is_read_as_its_transcript_grows(tmp_path: Path) -> None:
    """2.1.332, `tool`: nothing of the subagent before its task starts; each record it
    writes comes out at the next look; the rest before its notification; once."""
    case = Case(tmp_path, "2.1.332", "tool", agent_lines=0)
    written = (DATA / "2.1.332" / "tool" / "agent.jsonl").read_text().splitlines(keepends=True)
    out: List[Event] = []
    main = iter(case.main)
    for record in main:
        out += case.feed(record)
        if "toolUseResult" in record:
            break
    assert [e.get("subtype") for e in out if e.get("subtype")] == ["task_started"]
    assert not subagent_side(out)[1:]
    with case.agent_path.open("a") as handle:
        for line in written[:3]:  # its prompt, its text, its tool call
            handle.write(line)
    call = {"command": "echo hi", "description": "Run the requested command"}
    assert [block(case.printed(e)) for e in case.stream.poll()] == [
        ("text", "Looking"),
        ("tool_use", "Bash", json.dumps(call, sort_keys=True)),
    ]
    assert case.stream.poll() == []
    with case.agent_path.open("a") as handle:
        handle.writelines(written[3:])
    for record in main:
        out += case.feed(record)
    tail = [e.get("subtype") or block(e)[0] for e in subagent_side(out)]
    assert tail == ["task_started", "tool_result", "text", "task_notification"]


@pytest.mark.parametrize(("release", "name"), TUI_BACKGROUNDS)
def test_run_in_background_false_is_the_tuis_background_subagent(
    tmp_path: Path, release: str, name: str
) -> None:
    """Written out: claude -p waits for the subagent and prints its prompt and tool calls;
    the TUI ran it in the background, so claude-print prints all its messages but the
    prompt, as for any background subagent."""
    case = Case(tmp_path, release, name)
    ours, theirs = subagent_side(case.run()), subagent_side(case.real)
    assert [e.get("is_backgrounded") for e in (ours[0], theirs[0])] == [True, False]
    assert [block(e) for e in ours[1:-1]] == [
        ("text", "Looking"),
        *[block(e) for e in theirs[2:-1]],  # the CLI's tool call and result
        ("text", "Tool turn done."),
    ]
    assert block(theirs[1]) == ("text", "Do [[texttool:Looking|Bash:echo hi]]")


def test_a_foreground_subagent_written_late_holds_the_turn_until_its_answer(
    tmp_path: Path,
) -> None:
    """2.1.197, `hello`: the TUI wrote the subagent's file after the tool result that ends
    it (measured in the SDK case: 0.25 s later). The tool result, and what follows it,
    wait for the subagent's final answer; then all of it in the CLI's order."""
    case = Case(tmp_path, "2.1.197", "hello", agent_lines=0)
    out: List[Event] = []
    for record in case.main:
        out += case.feed(record)
    assert [e.get("subtype") or e["type"] for e in out] == ["assistant", "task_started"]
    case.now += 1.0
    assert case.stream.poll() == []  # still waiting
    case.agent_path.write_text((DATA / "2.1.197" / "hello" / "agent.jsonl").read_text())
    out += [case.printed(e) for e in case.stream.poll()]
    kinds = [e.get("subtype") or e["type"] for e in out]
    assert kinds == ["assistant", "task_started", "user", "task_notification", "user", "assistant"]
    assert block(out[2]) == ("text", "Say hello") and out[2]["parent_tool_use_id"]
    assert out[4]["parent_tool_use_id"] is None  # the Agent call's own tool result


def test_a_subagent_transcript_that_never_ends_holds_the_turn_no_longer_than_the_wait(
    tmp_path: Path,
) -> None:
    case = Case(tmp_path, "2.1.197", "hello", agent_lines=1)  # its prompt, no answer
    out: List[Event] = []
    for record in case.main:
        out += case.feed(record)
    assert [e.get("subtype") or e["type"] for e in out] == ["assistant", "task_started", "user"]
    case.now += SubagentStream.WRITE_WAIT - 0.1
    assert case.stream.poll() == []
    case.now += 0.1
    out += [case.printed(e) for e in case.stream.poll()]
    kinds = [e.get("subtype") or e["type"] for e in out[3:]]
    assert kinds == ["task_notification", "user", "assistant"]


def test_the_turns_end_releases_what_waits(tmp_path: Path) -> None:
    case = Case(tmp_path, "2.1.197", "hello", agent_lines=0)
    for record in case.main:
        case.feed(record)
    released = case.stream.around(case.converter.flush()) + case.stream.flush()
    assert [e.get("subtype") or e["type"] for e in released] == [
        "task_notification",
        "user",
        "assistant",
    ]
