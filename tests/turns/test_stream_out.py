"""StreamOut: when the turn's `system/init` line goes out, and what goes around it.

Fed with real TUI transcripts (tests/data/cc-*/tui_*.transcript.jsonl: 2.1.197 from the
first captures; 2.1.270 and 2.1.332 recorded for issue 31 from claude-print runs against
tests/support/fake_api.py), one record at a time as the transcript feed hands them over. The
expected events are written out: the init line's place among the records, its model (as
the release's own `claude -p` names it: tests/data/cc-*/p_plain.stream.jsonl), and the
`system/permission_denied` note before a denied tool's result.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Dict, List, Optional, Tuple, cast

import pytest
from harness import TESTS

from claude_print import contract
from claude_print.hooks.hook_events import HookWatch
from claude_print.printing.emit import Emitter, Finish
from claude_print.turns.stream_out import StreamOut
from claude_print.turns.transcript_feed import TranscriptFeed
from claude_print.turns.turn import Turn
from claude_print.turns.turn_state import DONE, RUNNING

DATA = TESTS / "data"
DENIED = "Permission to use this tool was not granted (claude-print runs non-interactively)."


def transcript(release: str, name: str) -> List[Dict[str, Any]]:
    path = DATA / f"cc-{release}" / f"tui_{name}.transcript.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class Recorder(Emitter):
    """The emitter, with its events kept instead of printed."""

    def __init__(self, output_format: str, verbose: bool = False) -> None:
        super().__init__(output_format, verbose)
        self.events: List[Dict[str, Any]] = []

    def event(self, obj: Dict[str, Any], finish: Optional[Finish] = None) -> None:
        self.events.append(obj)


class Feed:
    """What StreamOut reads of the transcript feed: the session, its path, its records."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.path = f"/nonexistent/projects/p/{session_id}.jsonl"
        self.records: List[Dict[str, Any]] = []

    def of(self, turn: Turn) -> List[Dict[str, Any]]:
        return self.records[turn.first_record :]


class NoHooks:
    def release(self, tool_names: Dict[str, str], turn_over: bool) -> List[Dict[str, Any]]:
        return []


def rig(
    release: str, records: List[Dict[str, Any]], output_format: str = "stream-json"
) -> Tuple[StreamOut, Recorder, Feed, Turn]:
    session = str(next(r["sessionId"] for r in records if "sessionId" in r))
    emitter = Recorder(output_format)
    feed = Feed(session)
    turn = Turn("What is 2+2?", "argv", 0.0)
    facts = contract.facts_for(release)
    out = StreamOut(
        emitter,
        lambda: facts,
        cast(Callable[[], HookWatch], lambda: NoHooks()),
        "",
        cast(TranscriptFeed, feed),
        lambda: turn,
        lambda: "default",
    )
    if emitter.streams_events:  # as the runner opens it
        out.open(session, reports=False, reported=None, own_dir="/nonexistent")
    return out, emitter, feed, turn


def play(
    release: str, name: str, output_format: str = "stream-json", submitted: bool = True
) -> Tuple[List[Tuple[str, List[str]]], Recorder]:
    """Submits the prompt, then feeds the records one by one: per record, its kind
    and the kinds of the events that went out on it; then the flush."""
    records = transcript(release, name)
    out, emitter, feed, _ = rig(release, records, output_format)
    steps: List[Tuple[str, List[str]]] = []
    if submitted:  # the runner calls it for stream-json input (every prompt a turn)
        out.init_at_submission()
        steps.append(("(submitted)", kinds(emitter.events)))
    for record in records:
        before = len(emitter.events)
        feed.records.append(record)
        out.feed(record)
        steps.append((record_kind(record), kinds(emitter.events[before:])))
    before = len(emitter.events)
    out.flush()
    steps.append(("(flush)", kinds(emitter.events[before:])))
    return [s for s in steps if s[1]], emitter


def record_kind(record: Dict[str, Any]) -> str:
    attachment = record.get("attachment")
    if isinstance(attachment, dict):
        return f"attachment/{attachment.get('type')}"
    content = record.get("message", {}).get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict):
        return f"{record.get('type')}/{content[0].get('type')}"
    return str(record.get("type"))


def kinds(events: List[Dict[str, Any]]) -> List[str]:
    """Kinds such as system/init, assistant/text, user/tool_result."""

    def kind(e: Dict[str, Any]) -> str:
        if e.get("subtype"):
            return f"{e['type']}/{e['subtype']}"
        return f"{e['type']}/{(e['message']['content'] or [{}])[0].get('type')}"

    return [kind(e) for e in events]


def init_model(emitter: Recorder) -> str:
    [init] = [e for e in emitter.events if e.get("subtype") == "init"]
    return str(init["model"])


def test_2_1_332_init_goes_out_with_the_request_shape() -> None:
    """2.1.330 on: the init line as the request goes out (an SDK program waits for it to
    interrupt), with the model the model attachment named before it."""
    steps, emitter = play("2.1.332", "plain")
    assert steps == [
        ("api-request-shape", ["system/init"]),
        ("assistant/text", ["assistant/text"]),
    ]
    assert init_model(emitter) == "claude-opus-5-5"  # cc-2.1.332/p_plain.stream.jsonl: same


def test_2_1_270_init_goes_out_with_the_model_attachment() -> None:
    """2.1.270 to 2.1.329: no request shape on record; the model attachment is the first
    sign the request is about to go."""
    steps, emitter = play("2.1.270", "plain")
    assert steps == [
        ("attachment/model", ["system/init"]),
        ("assistant/text", ["assistant/text"]),
    ]
    assert init_model(emitter) == "claude-opus-5[1m]"  # cc-2.1.270/p_plain.stream.jsonl


def test_2_1_197_init_goes_out_at_submission() -> None:
    """Before 2.1.270 the transcript never names the model before the answer: the init
    line goes as the prompt is submitted, with the model as 2.1.197's claude -p names it."""
    steps, emitter = play("2.1.197", "plain")
    assert steps == [("(submitted)", ["system/init"]), ("assistant/text", ["assistant/text"])]
    assert init_model(emitter) == "claude-opus-4-8[1m]"  # cc-2.1.197/p_plain.stream.jsonl


@pytest.mark.parametrize("release", ["2.1.270", "2.1.332"])
def test_without_events_there_is_no_early_init(release: str) -> None:
    """Plain json output: the runner does not open the stream; no event at all."""
    steps, emitter = play(release, "plain", output_format="json")
    assert emitter.events == [] and steps == []


def test_2_1_197_one_prompt_init_goes_out_with_the_answer() -> None:
    """One prompt (no init at submission): before 2.1.270 the first assistant record
    is the first to name the model, so the init line goes out just before its event."""
    steps, emitter = play("2.1.197", "plain", submitted=False)
    assert steps == [("assistant/text", ["system/init", "assistant/text"])]
    assert init_model(emitter) == "claude-opus-4-8"  # the transcript's answering model


def test_a_denied_tool_gets_its_note_before_its_result() -> None:
    """2.1.223 on (`permission_denied_event`): system/permission_denied, naming the tool
    of the call it answers, right before the tool result claude-print's hook denied."""
    steps, emitter = play("2.1.332", "tool_denied")
    assert steps == [
        ("api-request-shape", ["system/init"]),
        ("assistant/tool_use", ["assistant/tool_use"]),
        ("user/tool_result", ["system/permission_denied", "user/tool_result"]),
        ("assistant/text", ["assistant/text"]),
    ]
    [note] = [e for e in emitter.events if e.get("subtype") == "permission_denied"]
    [result] = [e for e in emitter.events if kinds([e]) == ["user/tool_result"]]
    tool_use_id = result["message"]["content"][0]["tool_use_id"]
    assert {k: v for k, v in note.items() if k != "uuid"} == {
        "type": "system",
        "subtype": "permission_denied",
        "tool_name": "Bash",
        "tool_use_id": tool_use_id,
        "message": DENIED,
        "session_id": emitter.events[0]["session_id"],
    }


def test_2_1_197_has_no_denial_note() -> None:
    steps, _ = play("2.1.197", "tool_denied")
    assert [s for s in steps if "system/permission_denied" in s[1]] == []
    assert ("user/tool_result", ["user/tool_result"]) in steps


def test_one_init_per_turn_and_flush_sends_it_when_nothing_did() -> None:
    """A turn whose records never came (the transcript was late): flush still sends the
    init line, once; a second turn gets its own."""
    records = transcript("2.1.332", "plain")
    out, emitter, feed, turn = rig("2.1.332", records)
    out.init_at_submission()  # 2.1.332 records the model: nothing yet
    assert emitter.events == []
    out.flush()
    out.flush()
    assert kinds(emitter.events) == ["system/init"]
    assert emitter.events[0]["model"] == ""  # no model known: as the run learns none
    turn.init_sent = False  # the next turn
    feed.records.extend(records)  # the first turn's, its request's shape among them
    out.model = "claude-opus-5-5"
    out.init_at_submission()  # a model known from the first turn: at once
    assert kinds(emitter.events) == ["system/init", "system/init"]
    assert emitter.events[1]["model"] == "claude-opus-5-5"


def test_a_first_turns_init_waits_for_the_tools_even_with_the_model_known() -> None:
    """2.1.332, stream-json input: the model is known at submission (--model, or its
    record read before the Enter on a loaded machine: a CI failure), but the tools come
    with the request's shape record; the init line waits for it and names them."""
    records = transcript("2.1.332", "plain")
    out, emitter, feed, _ = rig("2.1.332", records)
    out.model = "claude-opus-5-5"
    out.init_at_submission()
    assert emitter.events == []
    for record in records:
        feed.records.append(record)
        out.feed(record)
    [init] = [e for e in emitter.events if e.get("subtype") == "init"]
    assert "Bash" in init["tools"] and init["model"] == "claude-opus-5-5"


def test_an_answer_written_before_the_request_shape_waits_for_its_tools() -> None:
    """2.1.332 can write the answer's record before the request's shape record (measured:
    a fresh-clone CI's TS SDK case, under load; the init line went out with no tools).
    The answer is held until the shape is read: init first, with the tools, then it."""
    records = transcript("2.1.332", "plain")
    shape = next(i for i, r in enumerate(records) if r.get("type") == "api-request-shape")
    answer = next(i for i, r in enumerate(records) if r.get("type") == "assistant")
    assert shape < answer
    swapped = [r for i, r in enumerate(records) if i != answer]
    swapped.insert(shape, records[answer])  # as that run wrote them
    out, emitter, feed, _ = rig("2.1.332", swapped)
    steps = []
    for record in swapped:
        before = len(emitter.events)
        feed.records.append(record)
        out.feed(record)
        steps.append((record_kind(record), kinds(emitter.events[before:])))
    out.flush()
    assert [s for s in steps if s[1]] == [("api-request-shape", ["system/init", "assistant/text"])]
    [init] = [e for e in emitter.events if e.get("subtype") == "init"]
    assert "Bash" in init["tools"], init["tools"]
    assert init["model"] == "claude-opus-5-5"


def test_a_turn_with_no_shape_record_still_sends_what_it_read() -> None:
    """Where no shape record ever comes (an error before the request), what was held goes
    out at the turn's end, after its init line."""
    records = [r for r in transcript("2.1.332", "plain") if r.get("type") != "api-request-shape"]
    out, emitter, feed, _ = rig("2.1.332", records)
    for record in records:
        feed.records.append(record)
        out.feed(record)
    assert emitter.events == []
    out.flush()
    assert kinds(emitter.events) == ["system/init", "assistant/text"]


@pytest.mark.parametrize("release", ["2.1.197", "2.1.270"])
def test_a_turn_read_before_it_is_handed_over_goes_after_its_init(release: str) -> None:
    """The TUI's own next turn (a background task's notification) can be read together
    with its prompt while the last turn is over (DONE) and before the runner hands it
    over: its answer goes out after that turn's init line, as claude -p prints it
    (measured on 2.1.197 and 2.1.270: init, answer, result)."""
    records = transcript(release, "plain")
    out, emitter, feed, turn = rig(release, records)
    out.init_at_submission()
    for record in records:
        feed.records.append(record)
        out.feed(record)
    out.flush()
    first = len(emitter.events)
    assert "assistant/text" in kinds(emitter.events)
    turn.state = DONE  # its result is out; the next turn's records arrive
    for record in renamed(records):
        feed.records.append(record)
        out.feed(record)
    assert emitter.events[first:] == []  # nothing of it before it is ours
    turn.state, turn.init_sent = RUNNING, False  # handed over (the same object, as a new turn)
    out.init_at_submission()
    out.flush()
    assert kinds(emitter.events[first:])[:2] == ["system/init", "assistant/text"]


def renamed(records: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The same records as another turn's: every uuid and message id made new."""
    text = json.dumps(records)
    for old in set(re.findall(r'"(?:uuid|parentUuid|promptId|id)": "([^"]+)"', text)):
        text = text.replace(old, old + "-2")
    renamed: List[Dict[str, Any]] = json.loads(text)
    return renamed


def test_a_task_event_waits_with_the_call_it_is_about() -> None:
    """A background call's `task_started` goes out just before its tool result, after
    the call. When the call's record came before the request's shape record (seen in a
    fresh-clone CI on 2.1.332, the SDK's subagent case), the call is held for the tools,
    and its task event must wait with it. It went first, ahead of system/init."""
    records = [json.loads(line) for line in (DATA / "background" / "shell-2.1.332.jsonl").open()]
    records = [r for r in records if r.get("type") != "progress"]
    shape = next(i for i, r in enumerate(records) if r.get("type") == "api-request-shape")
    result = next(i for i, r in enumerate(records) if "toolUseResult" in r)
    late = [r for i, r in enumerate(records) if i != shape]
    late.insert(result, records[shape])  # the shape read after the call's result
    out, emitter, feed, _ = rig("2.1.332", late)
    out.init_at_submission()
    for record in late:
        feed.records.append(record)
        out.feed(record)
    assert kinds(emitter.events)[:4] == [
        "system/init",
        "assistant/tool_use",
        "system/task_started",
        "user/tool_result",
    ]
