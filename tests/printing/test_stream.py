"""stream-json conversion, pinned on real `claude -p ... stream-json --verbose` (2.1.197)."""

from __future__ import annotations

import json
import random
from typing import Any, Dict, List

import pytest
from harness import TESTS

from claude_print import contract
from claude_print.printing import output, stream

DATA = TESTS / "data" / "cc-2.1.197"

# (TUI transcript, `claude -p` stream of the same prompt)
PAIRS = [
    ("tui_plain.transcript.jsonl", "p_plain.stream.jsonl"),
    ("tui_plain.reordered.transcript.jsonl", "p_plain.stream.jsonl"),
    ("tui_tool_denied.transcript.jsonl", "p_tool_denied.stream.jsonl"),
    ("tui_error400.transcript.jsonl", "p_error400.stream.jsonl"),
    ("tui_texts.transcript.jsonl", "p_texts.stream.jsonl"),
    ("tui_texttool_allowed.transcript.jsonl", "p_texttool.stream.jsonl"),
    ("tui_texttool_denied.reordered.transcript.jsonl", "p_texttool.stream.jsonl"),
    ("tui_unicode.reordered.transcript.jsonl", "p_unicode_trailing.stream.jsonl"),
]


def load_jsonl(name: str) -> List[Dict[str, Any]]:
    with open(DATA / name, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def session_of(records: List[Dict[str, Any]]) -> str:
    return str(next(r["sessionId"] for r in records if "sessionId" in r))


def convert(records: List[Dict[str, Any]], **kwargs: Any) -> List[Dict[str, Any]]:
    converter = stream.StreamConverter(session_of(records), **kwargs)
    events: List[Dict[str, Any]] = []
    for record in records:
        events.extend(converter.feed(record))
    return events + converter.flush()


def block_gist(block: Dict[str, Any]) -> Any:
    """What must agree between runs (ids, tool output and denial differ)."""
    if block["type"] == "text":
        return ("text", block["text"])
    if block["type"] == "tool_use":
        return ("tool_use", block["name"], block["input"]["description"])
    return (block["type"],)


@pytest.mark.parametrize(("tui", "printed"), PAIRS)
def test_events_match_claude_p(tui: str, printed: str) -> None:
    # As printed: conformed to the release's shapes (2.1.197 has no is_api_error_message).
    ours = [output.conform(e, "2.1.197", streamed=True) for e in convert(load_jsonl(tui))]
    real = [e for e in load_jsonl(printed) if e["type"] not in ("system", "result")]
    assert [e["type"] for e in ours] == [e["type"] for e in real]
    for mine, theirs in zip(ours, real):
        assert list(mine) == list(theirs)  # key set and order
        assert list(mine["message"]) == list(theirs["message"])
        assert [block_gist(b) for b in mine["message"]["content"]] == [
            block_gist(b) for b in theirs["message"]["content"]
        ]
        assert mine["parent_tool_use_id"] is None
        if mine["type"] == "assistant" and "error" not in theirs:
            assert mine["message"]["stop_reason"] is None  # as emitted at content_block_stop
            assert mine["message"]["context_management"] is None
        denied = [b.get("is_error") for b in mine["message"]["content"]]
        if mine["type"] == "user" and denied == [
            b.get("is_error") for b in theirs["message"]["content"]
        ]:
            assert type(mine["tool_use_result"]) is type(theirs["tool_use_result"])


def test_denied_tool_result_is_an_error_result() -> None:
    ours = convert(load_jsonl("tui_tool_denied.transcript.jsonl"))
    real = load_jsonl("p_tool_denied.stream.jsonl")
    [mine] = [e["message"]["content"][0] for e in ours if e["type"] == "user"]
    [theirs] = [e["message"]["content"][0] for e in real if e["type"] == "user"]
    assert mine["is_error"] is theirs["is_error"] is True
    assert list(mine) == list(theirs)


def test_api_error_event_is_passed_through() -> None:
    [ours] = convert(load_jsonl("tui_error400.transcript.jsonl"))
    [theirs] = [e for e in load_jsonl("p_error400.stream.jsonl") if e["type"] == "assistant"]
    assert ours["message"] == dict(theirs["message"], id=ours["message"]["id"])
    assert (ours["error"], ours["request_id"]) == (theirs["error"], theirs["request_id"])


def test_event_uuids_and_timestamps_come_from_the_transcript() -> None:
    records = load_jsonl("tui_tool_denied.transcript.jsonl")
    by_uuid = {r.get("uuid"): r for r in records}
    for event in convert(records):
        record = by_uuid[event["uuid"]]
        assert event["session_id"] == record["sessionId"]
        if event["type"] == "user":
            assert event["timestamp"] == record["timestamp"]
            assert event["tool_use_result"] == record["toolUseResult"]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_feed_order_does_not_matter(seed: int) -> None:
    records = load_jsonl("tui_texttool_allowed.transcript.jsonl")
    expected = convert(records)
    shuffled = records[:]
    random.Random(seed).shuffle(shuffled)
    converter = stream.StreamConverter(session_of(records))
    events: List[Dict[str, Any]] = []
    for record in shuffled:
        events.extend(converter.feed(record))
    assert events == expected  # parents arrive eventually: nothing left for flush()
    assert converter.flush() == []


def test_held_records_wait_for_their_parent() -> None:
    records = load_jsonl("tui_plain.transcript.jsonl")
    answer = next(r for r in records if r["type"] == "assistant")
    converter = stream.StreamConverter(session_of(records))
    assert converter.feed(answer) == []  # its parent chain is not there yet
    events: List[Dict[str, Any]] = []
    for record in records:
        events.extend(converter.feed(record))
    assert [e["uuid"] for e in events] == [answer["uuid"]]


def test_flush_releases_orphans() -> None:
    records = load_jsonl("tui_tool_denied.transcript.jsonl")
    # Without the attachments, the first answer's parent never arrives.
    kept = [r for r in records if r.get("type") != "attachment"]
    converter = stream.StreamConverter(session_of(records))
    events: List[Dict[str, Any]] = []
    for record in kept:
        events.extend(converter.feed(record))
    assert events == []  # the first answer hangs on the missing attachment
    events.extend(converter.flush())
    assert [e["type"] for e in events] == ["assistant", "user", "assistant"]


def test_skips_prompt_duplicates_other_sessions_and_known_uuids() -> None:
    records = load_jsonl("tui_plain.transcript.jsonl")
    events = convert(records + records)
    assert [e["type"] for e in events] == ["assistant"]
    other = [dict(r, sessionId="other") if "sessionId" in r else r for r in records]
    converter = stream.StreamConverter(session_of(records))
    assert [e for r in other for e in converter.feed(r)] + converter.flush() == []
    known = [r["uuid"] for r in records if "uuid" in r]
    assert convert(records, known_uuids=known) == []


def test_second_turn_only_with_known_uuids() -> None:
    records = load_jsonl("tui_plain.transcript.jsonl")
    sid = session_of(records)
    last = records[-2]["uuid"]  # the turn_duration record of turn 1
    turn2 = [
        {
            "type": "user",
            "uuid": "u2",
            "parentUuid": last,
            "sessionId": sid,
            "timestamp": "2026-11-22T12:00:00.000Z",
            "message": {"role": "user", "content": "again"},
        },
        {
            "type": "assistant",
            "uuid": "a2",
            "parentUuid": "u2",
            "sessionId": sid,
            "timestamp": "2026-11-22T12:00:01.000Z",
            "message": {"id": "m2", "content": [{"type": "text", "text": "second"}]},
        },
    ]
    known = [r["uuid"] for r in records if "uuid" in r]
    events = convert(records + turn2, known_uuids=known)
    assert [e["uuid"] for e in events] == ["a2"]
    assert len(convert(records + turn2)) == 2  # without it, turn 1 is replayed too


def test_multi_block_records_are_split_like_claude_code() -> None:
    sid = "s"
    prompt = {
        "type": "user",
        "uuid": "p",
        "parentUuid": None,
        "sessionId": sid,
        "message": {"role": "user", "content": "hi"},
    }
    answer = {
        "type": "assistant",
        "uuid": "0123456789abcdef01234567-89ab-cdef0123",
        "parentUuid": "p",
        "sessionId": sid,
        "requestId": "req_1",
        "message": {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-8",
            "content": [
                {"type": "text", "text": "one"},
                {"type": "text", "text": "  "},  # blank: dropped, as claude -p does
                {"type": "tool_use", "id": "t", "name": "Bash", "input": {}},
            ],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 2},
            "stop_details": None,
        },
    }
    meta = {
        "type": "user",
        "uuid": "m1",
        "parentUuid": answer["uuid"],
        "sessionId": sid,
        "isMeta": True,
        "timestamp": "t",
        "message": {"role": "user", "content": "Output token limit hit."},
    }
    events = convert([prompt, answer, meta])
    assert [e["uuid"] for e in events] == [
        "0123456789abcdef01234567000000000000",
        "0123456789abcdef01234567000000000002",
        "m1",
    ]
    first = events[0]
    assert list(first["message"]) == [
        "id",
        "type",
        "role",
        "model",
        "content",
        "stop_reason",
        "stop_sequence",
        "usage",
        "context_management",
    ]
    assert first["request_id"] == "req_1" and "error" not in first
    assert events[2]["isSynthetic"] is True
    assert events[2]["message"]["content"] == [{"type": "text", "text": "Output token limit hit."}]


def test_init_event_shape() -> None:
    real = load_jsonl("p_plain.stream.jsonl")[0]
    ours = stream.init_event(
        cwd=real["cwd"],
        session_id=real["session_id"],
        model=real["model"],
        permission_mode=real["permissionMode"],
        claude_version=real["claude_code_version"],
        api_key_source=real["apiKeySource"],
        tools=real["tools"],
        memory_paths=real["memory_paths"],
        analytics_disabled=True,
        product_feedback_disabled=True,
    )
    assert list(ours) == list(real)
    for key, value in real.items():
        assert type(ours[key]) is type(value), key
    same = {k: v for k, v in real.items() if k not in ("uuid", "slash_commands", "agents")}
    same = {k: v for k, v in same.items() if k != "skills"}
    assert {k: ours[k] for k in same} == same
    bare = stream.init_event(
        cwd="/x",
        session_id="s",
        model="m",
        permission_mode="default",
        claude_version="2.1.197",
        api_key_source="none",
    )
    assert "memory_paths" not in bare
    assert [k for k in real if k != "memory_paths"] == list(bare)
    assert bare["tools"] == [] and bare["fast_mode_state"] == "off"


def test_an_api_error_event_has_the_error_keys_of_the_release() -> None:
    """2.1.330's `claude -p` adds is_api_error_message, api_error_status and api_error_type
    to an API error's assistant event (the Agent SDK reads `error`); 2.1.197 has neither."""
    [event] = [e for e in convert(load_jsonl("tui_error400.transcript.jsonl"))]
    newest = output.conform(event, "2.1.330", streamed=True)
    real = next(
        json.loads(line)
        for line in (DATA.parent / "cc-2.1.330" / "p_error400.stream.jsonl")
        .read_text()
        .splitlines()
        if '"assistant"' in line
    )
    assert list(newest) == list(real)
    assert (newest["error"], newest["api_error_status"], newest["api_error_type"]) == (
        "unknown",
        400,
        "invalid_request_error",
    )


# --- tool_use_meta / tool_result_meta ------------------------------------------------


@pytest.mark.parametrize(
    ("name", "shown"),
    [  # node: (n.split('__').pop()||n).replace(/_/g,' ').replace(/\b\w/g, c => c.toUpperCase())
        ("mcp__calc__add", "Add"),
        ("mcp__x__get_weather", "Get Weather"),
        ("mcp__a__get-city", "Get-City"),
        ("mcp__s__déjà_vu", "DéJà Vu"),  # JavaScript's \b and \w are ASCII
        ("Bash", "Bash"),
    ],
)
def test_tool_display_names_are_claude_codes(name: str, shown: str) -> None:
    assert stream.readable_tool_name(name) == shown


def test_an_mcp_call_has_its_display_meta_and_a_built_in_none() -> None:
    block = {"type": "tool_use", "id": "t1", "name": "mcp__calc__add", "input": {}}
    assert stream.tool_use_meta(block, names_tool=True) == {
        "id": "t1",
        "display_name": "Add",
        "server_display_name": "calc",
        "tool_name": "add",
    }
    assert "tool_name" not in (stream.tool_use_meta(block, names_tool=False) or {})
    assert stream.tool_use_meta({**block, "name": "Bash"}, names_tool=True) is None


def test_tool_result_meta_says_what_claude_p_would() -> None:
    result = {"type": "tool_result", "tool_use_id": "t1"}
    ours = {"toolUseResult": f"Error: {contract.DENY_MESSAGE}", "toolDenialKind": "permission-rule"}
    assert stream.tool_result_meta(ours, result, "decision") == {
        "id": "t1",
        "non_execution_kind": "user-rejected",  # print mode's refusal, not the hook's
        "permission_decision": {"decision": "reject", "source": "config"},
    }
    assert stream.tool_result_meta(ours, result, "kind") == {
        "id": "t1",
        "non_execution_kind": "user-rejected",
    }
    assert stream.tool_result_meta(ours, result, "") is None  # before 2.1.221
    ruled = {"permissionDecision": {"decision": "accept", "source": "config", "reasonType": "rule"}}
    assert stream.tool_result_meta(ruled, result, "decision") == {
        "id": "t1",
        "permission_decision": {"decision": "accept", "source": "config", "reason_type": "rule"},
    }
    asked = {
        "permissionDecision": {
            "decision": "accept",
            "source": "hook",
            "reasonType": "hook",
            "reasonCode": "hook:PermissionRequest",
        }
    }
    assert stream.tool_result_meta(asked, result, "decision") == {
        "id": "t1",
        "permission_decision": {"decision": "accept", "source": "user_temporary"},
    }
    assert stream.tool_result_meta({}, result, "decision") is None  # nothing to say
