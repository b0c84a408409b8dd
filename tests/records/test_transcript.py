"""Transcript reading, pinned on real Claude Code 2.1.197 transcripts and `claude -p` outputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from harness import TESTS

from claude_print.records import summary as sm
from claude_print.records import transcript as tr

DATA = TESTS / "data" / "cc-2.1.197"
OPUS_KEY = "claude-opus-4-8[1m]"  # the model `claude -p` keyed modelUsage by in these runs

# (TUI transcript, `claude -p --output-format json` output of the same prompt)
PAIRS = [
    ("tui_plain.transcript.jsonl", "p_plain.json"),
    ("tui_plain.reordered.transcript.jsonl", "p_plain.json"),
    ("tui_tool_denied.transcript.jsonl", "p_tool_denied.json"),
    ("tui_error400.transcript.jsonl", "p_error400.json"),
    ("tui_texts.transcript.jsonl", "p_texts.json"),
    ("tui_texttool_allowed.transcript.jsonl", "p_texttool.json"),
    ("tui_texttool_denied.reordered.transcript.jsonl", "p_texttool.json"),
]


def load_jsonl(name: str) -> List[Dict[str, Any]]:
    with open(DATA / name, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_json(name: str) -> Dict[str, Any]:
    with open(DATA / name, encoding="utf-8") as f:
        data: Dict[str, Any] = json.load(f)
    return data


def session_of(records: List[Dict[str, Any]]) -> str:
    return str(next(r["sessionId"] for r in records if "sessionId" in r))


def turn_of(name: str) -> Tuple[str, List[Dict[str, Any]]]:
    records = load_jsonl(name)
    sid = session_of(records)
    return sid, tr.turn_records(records, sid)


# --- slug and path -----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "slug"),
    [
        ("/home/u/work", "-home-u-work"),
        ("/a/b.c_d", "-a-b-c-d"),
        ("/tmp/exp/proj", "-tmp-exp-proj"),
        ("/tmp/é", "-tmp--"),
        ("/tmp/😀", "-tmp---"),  # a non-BMP character is two UTF-16 units
    ],
)
def test_project_slug_short(path: str, slug: str) -> None:
    assert tr.project_slug(path) == slug


def test_project_slug_long_matches_real_claude_code() -> None:
    # Directory name Claude Code 2.1.197 created for this cwd (real run).
    path = "/tmp/trx/long_é😀_" + "a" * 120 + "/" + "b.c_" * 30
    expected = (  # the directory name it created (cut at 200, then "-" + hash)
        "-tmp-trx-long-----" + "a" * 120 + "-b-c" * 15 + "-b" + "-h666kl"
    )
    slug = tr.project_slug(path)
    assert slug == expected
    assert len(slug) == 207
    assert tr.project_slug("/" + "x" * 199) == "-" + "x" * 199  # exactly 200: no suffix


def test_transcript_path_uses_realpath_and_config_dir(tmp_path: Path) -> None:
    real = tmp_path / "real.dir"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    slug = tr.project_slug(str(real.resolve()))
    assert tr.transcript_path("/h", str(link), "sid") == f"/h/.claude/projects/{slug}/sid.jsonl"
    assert (
        tr.transcript_path("/h", str(real), "sid", config_dir="/cfg")
        == f"/cfg/projects/{slug}/sid.jsonl"
    )


def test_hook_transcript_path_agrees_with_computed_one() -> None:
    hook = load_json("hook_stopfailure.json")
    assert hook["cwd"] == "/tmp/exp/proj"
    slug = tr.project_slug(hook["cwd"])
    assert hook["transcript_path"] == (
        f"/tmp/exp/home/.claude/projects/{slug}/{hook['session_id']}.jsonl"
    )


# --- tail --------------------------------------------------------------------


def test_tail_missing_file_then_partial_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    tail = tr.TranscriptTail(str(path))
    assert tail.poll() == []
    with open(path, "wb") as f:
        f.write(b'{"a": 1}\n{"b": ')
    assert tail.poll() == [{"a": 1}]
    assert tail.poll() == []
    with open(path, "ab") as f:
        f.write(b'2}\nnot json\n[1, 2]\n{"c": "\xc3')
    assert tail.poll() == [{"b": 2}]
    assert tail.skipped == 2  # "not json" and a non-object
    with open(path, "ab") as f:
        f.write(b'\xa9"}\n')  # a multi-byte character split across writes
    assert tail.poll() == [{"c": "é"}]
    assert tail.offset == path.stat().st_size


def test_tail_reads_only_new_bytes(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"old": 1}\n')
    tail = tr.TranscriptTail(str(path), offset=path.stat().st_size)  # skip what was there
    with open(path, "ab") as f:
        f.write(b'{"new": 1}\n')
    assert tail.poll() == [{"new": 1}]
    # Overwrite the already-read bytes in place: a tail that re-read would see them.
    with open(path, "r+b") as f:
        f.write(b'{"XXX": 1}\n')
    assert tail.poll() == []


def test_tail_restarts_when_file_shrinks(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": 2}\n')
    tail = tr.TranscriptTail(str(path))
    assert len(tail.poll()) == 2
    path.write_bytes(b'{"a": 1}\n')
    assert tail.poll() == [{"a": 1}]
    assert tail.resets == 1


def test_tail_reads_real_transcript_whole() -> None:
    tail = tr.TranscriptTail(str(DATA / "tui_tool_denied.transcript.jsonl"))
    assert tail.poll() == load_jsonl("tui_tool_denied.transcript.jsonl")
    assert tail.skipped == 0


# --- order and turn ----------------------------------------------------------


def test_real_transcript_lines_are_out_of_order() -> None:
    """Pins the fact that makes ordering necessary: the answer line precedes the prompt."""
    lines = [r.get("type") for r in load_jsonl("tui_plain.reordered.transcript.jsonl")]
    assert lines.index("assistant") < lines.index("user")


@pytest.mark.parametrize("name", [p for p, _ in PAIRS])
def test_turn_starts_with_prompt_and_keeps_causal_order(name: str) -> None:
    sid, turn = turn_of(name)
    assert tr.is_human_prompt(turn[0])
    seen = {turn[0]["uuid"]}
    for record in turn[1:]:
        assert record["parentUuid"] in seen  # parents come first
        assert record["sessionId"] == sid
        seen.add(record["uuid"])
    kinds = [r["type"] for r in turn if r["type"] in ("user", "assistant")]
    assert kinds[0] == "user" and kinds[-1] == "assistant"


def test_turn_records_takes_last_turn_and_ignores_other_sessions() -> None:
    records = load_jsonl("tui_tool_denied.transcript.jsonl")
    sid = session_of(records)
    last_uuid = records[-3]["uuid"]  # a system record closing turn 1
    prompt2 = {
        "type": "user",
        "uuid": "p2",
        "parentUuid": last_uuid,
        "sessionId": sid,
        "timestamp": "2026-11-22T11:21:00.000Z",
        "message": {"role": "user", "content": "second"},
        "origin": {"kind": "human"},
    }
    answer2 = {
        "type": "assistant",
        "uuid": "a2",
        "parentUuid": "p2",
        "sessionId": sid,
        "timestamp": "2026-11-22T11:21:01.000Z",
        "message": {"id": "m2", "model": "claude-opus-4-8", "content": [], "stop_reason": None},
    }
    foreign = dict(answer2, uuid="x", sessionId="other", parentUuid="p2")
    turn = tr.turn_records([answer2, foreign, *records, prompt2], sid)
    assert [r["uuid"] for r in turn] == ["p2", "a2"]
    assert tr.turn_records(records, "other-session") == []


def test_order_records_dedupes_by_uuid_last_wins() -> None:
    first = {"uuid": "a", "parentUuid": None, "timestamp": "t1", "v": 1}
    second = {"uuid": "b", "parentUuid": "a", "timestamp": "t0"}
    again = {"uuid": "a", "parentUuid": None, "timestamp": "t1", "v": 2}
    assert tr.order_records([second, first, again]) == [again, second]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("What is 2+2?", True),
        ([{"type": "text", "text": "hi"}], True),
        ([{"type": "tool_result", "tool_use_id": "t", "content": "x"}], False),
    ],
)
def test_is_human_prompt(text: Any, kind: bool) -> None:
    record = {"type": "user", "message": {"role": "user", "content": text}}
    assert tr.is_human_prompt(record) is kind
    assert not tr.is_human_prompt(dict(record, isMeta=True))
    assert not tr.is_human_prompt(dict(record, origin={"kind": "task-notification"}))


# --- summary against `claude -p` ------------------------------------------------


@pytest.mark.parametrize(("tui", "printed"), PAIRS)
def test_summary_matches_claude_p(tui: str, printed: str) -> None:
    _, turn = turn_of(tui)
    summary = sm.summarise(turn)
    expected = load_json(printed)
    assert summary.complete
    assert summary.turn_closed
    assert summary.result_text == expected["result"]
    assert summary.num_turns == expected["num_turns"]
    assert summary.stop_reason == expected["stop_reason"]
    assert summary.is_api_error is expected["is_error"]
    assert summary.api_error_status == expected["api_error_status"]
    assert summary.usage == expected["usage"]
    assert list(summary.usage) == list(expected["usage"])
    assert summary.total_cost_usd == expected["total_cost_usd"]  # exact float


def test_summary_models_and_model_usage() -> None:
    _, turn = turn_of("tui_tool_denied.transcript.jsonl")
    summary = sm.summarise(turn)
    assert summary.models == ["claude-opus-4-8"]
    entry = summary.model_usage["claude-opus-4-8"]
    expected = load_json("p_tool_denied.json")["modelUsage"][OPUS_KEY]
    assert list(entry) == list(expected)
    assert entry == expected  # opus 4.8 is natively 1M, so even the limits agree


def test_api_error_summary() -> None:
    _, turn = turn_of("tui_error400.transcript.jsonl")
    summary = sm.summarise(turn)
    assert summary.is_api_error and summary.api_error_status == 400
    assert summary.error == "unknown"
    assert summary.models == [] and summary.model_usage == {}
    assert summary.prompt_id == load_json("hook_stopfailure.json")["prompt_id"]


def test_tool_uses_results_and_denials() -> None:
    _, turn = turn_of("tui_tool_denied.transcript.jsonl")
    summary = sm.summarise(turn)
    [use] = summary.tool_uses
    assert use["name"] == "Bash"
    assert summary.tool_results == [{"tool_use_id": use["id"], "is_error": True}]
    [denial] = summary.permission_denials
    [printed] = load_json("p_tool_denied.json")["permission_denials"]
    assert list(denial) == list(printed)
    assert denial["tool_name"] == printed["tool_name"]
    assert denial["tool_input"] == printed["tool_input"]
    assert denial["tool_use_id"] == use["id"]
    _, allowed = turn_of("tui_texttool_allowed.transcript.jsonl")
    assert sm.summarise(allowed).permission_denials == []


def test_result_is_last_text_block_only() -> None:
    _, turn = turn_of("tui_texts.transcript.jsonl")
    texts = [b["text"] for r in turn if r["type"] == "assistant" for b in r["message"]["content"]]
    assert texts == ["First block.", "Second block."]
    assert sm.summarise(turn).result_text == "Second block."  # as claude -p, not joined


def test_usage_counted_once_per_message_id() -> None:
    _, turn = turn_of("tui_texts.transcript.jsonl")
    assert sm.summarise(turn).usage["output_tokens"] == 6  # both blocks say 6


def test_result_text_kept_byte_exact() -> None:
    _, turn = turn_of("tui_unicode.reordered.transcript.jsonl")
    assert sm.summarise(turn).result_text == "  héllo ✓ 日本 😀\ntrail\n\n"


# --- completeness --------------------------------------------------------------


def _without(turn: List[Dict[str, Any]], kinds: Tuple[str, ...]) -> List[Dict[str, Any]]:
    return [r for r in turn if r["type"] not in kinds]


def test_incomplete_while_answer_missing() -> None:
    _, turn = turn_of("tui_tool_denied.transcript.jsonl")
    last_answer = max(i for i, r in enumerate(turn) if r["type"] == "assistant")
    partial = turn[:last_answer]  # up to the tool result
    summary = sm.summarise(partial)
    assert not summary.complete and not summary.turn_closed
    tool_only = [r for r in partial if r["type"] != "user" or tr.is_human_prompt(r)]
    assert not sm.summarise(tool_only).complete  # last answer asks for a tool


def test_stop_hook_snapshot_has_no_turn_yet() -> None:
    # At Stop-hook time the real transcript held only the ai-title line.
    snapshot = [{"type": "ai-title", "aiTitle": "Fake title", "sessionId": "s"}]
    assert tr.turn_records(snapshot, "s") == []
    assert not sm.summarise([]).complete


def test_complete_without_turn_duration_needs_final_stop_reason() -> None:
    _, turn = turn_of("tui_plain.transcript.jsonl")
    open_turn = _without(turn, ("system",))
    assert sm.summarise(open_turn).complete
    assert not sm.summarise(open_turn).turn_closed
    answer = next(r for r in open_turn if r["type"] == "assistant")
    for stop in (None, "max_tokens", "tool_use", "pause_turn"):
        changed = dict(answer, message=dict(answer["message"], stop_reason=stop))
        records = [changed if r is answer else r for r in open_turn]
        assert not sm.summarise(records).complete, stop
        closed = [changed if r is answer else r for r in turn]
        assert sm.summarise(closed).complete, stop  # turn_duration after it: over


def test_turn_duration_must_follow_last_answer() -> None:
    _, turn = turn_of("tui_tool_denied.transcript.jsonl")
    closing = next(r for r in turn if r.get("subtype") == "turn_duration")
    answers = [r for r in turn if r["type"] == "assistant"]
    final = dict(answers[-1], message=dict(answers[-1]["message"], stop_reason=None))
    records = [final if r is answers[-1] else r for r in turn if r["type"] != "system"]
    assert not sm.summarise(records).complete
    # A closing record chained to an older answer does not close the turn.
    stale = dict(closing, parentUuid=answers[0]["uuid"])
    assert not sm.summarise([*records, stale]).turn_closed
    fresh = dict(closing, parentUuid=final["uuid"])
    assert sm.summarise([*records, fresh]).complete


def test_timestamp_ms() -> None:
    assert tr.timestamp_ms("1970-01-01T00:00:01.5Z") == 1500
    assert tr.timestamp_ms("1970-01-01T01:00:00+01:00") == 0
    assert tr.timestamp_ms("nope") is None
    assert tr.timestamp_ms(None) is None


def test_js_hash_matches_java_semantics() -> None:
    assert tr._js_string_hash("") == 0
    assert tr._js_string_hash("a") == 97
    assert tr._js_string_hash("hello") == 99162322  # Java "hello".hashCode()
    assert tr._js_string_hash("polygenelubricants") == -(2**31)  # Java: Integer.MIN_VALUE


def _user(uuid: str, content: Any, meta: bool = False) -> Dict[str, Any]:
    record = {"type": "user", "uuid": uuid, "message": {"role": "user", "content": content}}
    return {**record, "isMeta": True} if meta else record


def test_a_custom_command_s_expansion_is_not_a_turn() -> None:
    """The TUI records `/hello with arguments` as the command, then its expansion as a
    meta user message before the answer (2.1.332); claude -p says num_turns 1."""
    answer = {
        "type": "assistant",
        "uuid": "a1",
        "message": {"id": "msg_1", "role": "assistant", "content": [{"type": "text", "text": "A"}]},
    }
    expansion = [{"type": "text", "text": "Say hello to with arguments\n"}]
    records = [_user("u1", "<command-name>/hello</command-name>"), _user("u2", expansion, True)]
    assert sm.summarise([*records, answer]).num_turns == 1
    later = _user("u3", "later", True)
    assert sm.summarise([*records, answer, later]).num_turns == 2  # after an answer it counts


def test_the_feed_calls_before_once_new_records_are_read_and_ahead_of_them(
    tmp_path: Path,
) -> None:
    """What happened before the records were written (a hook's report on the relay) must
    go out before them: `before` runs after the read and before the first consume."""
    from claude_print.turns.transcript_feed import TranscriptFeed

    path = tmp_path / "s.jsonl"
    path.write_text("")
    calls: List[str] = []
    feed = TranscriptFeed(
        "s", lambda r: calls.append(f"record {r['n']}"), lambda: calls.append("before")
    )
    feed.open(str(path))
    feed.poll()
    assert calls == []  # nothing new: nothing to go ahead of
    with path.open("a") as f:
        f.write('{"sessionId": "s", "n": 1}\n{"sessionId": "s", "n": 2}\n')
    feed.poll()
    assert calls == ["before", "record 1", "record 2"]


def test_records_read_from_a_transcript_a_hook_moved_away_from_are_dropped(
    tmp_path: Path,
) -> None:
    from claude_print.turns.transcript_feed import TranscriptFeed

    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    old.write_text('{"sessionId": "s", "n": 1}\n')
    new.write_text('{"sessionId": "s", "n": 2}\n')
    seen: List[int] = []
    feed = TranscriptFeed("s", lambda r: seen.append(r["n"]), lambda: feed.open(str(new)))
    feed.open(str(old))
    feed.poll()  # `before` learns the real transcript (a hook named it): old's records go
    assert seen == []
    feed.before = lambda: None
    feed.poll()
    assert seen == [2]


# The TUI's wording of an API error and claude -p's, as each release printed them for the
# fake API's `[[error:N]]` (measured on 2.1.197, 2.1.270 and 2.1.332; written out).
WORDINGS = [
    (
        "Please run /login \u00b7 API Error: 401 fake 401 failure",
        "Failed to authenticate. API Error: 401 fake 401 failure",
    ),
    (
        "Please run /login \u00b7 API Error: 403 fake 403 failure",
        "Failed to authenticate. API Error: 403 fake 403 failure",
    ),
    (
        "There's an issue with the selected model (claude-opus-5-5). It may not exist or you "
        "may not have access to it. Run /model to pick a different model.",
        "There's an issue with the selected model (claude-opus-5-5). It may not exist or you "
        "may not have access to it. Run --model to pick a different model.",
    ),
    (
        "Request too large (max 32MB). Double press esc to go back and try with a smaller file.",
        "Request too large (max 32MB). Try with a smaller file.",
    ),
    (
        "Request too large (max 32MB). Accumulated images and attachments in the conversation "
        "pushed the request over the limit. Run /compact, or double press esc to go back and "
        "remove attachments.",
        "Request too large (max 32MB). Accumulated images and attachments in the conversation "
        "pushed the request over the limit. Remove older images or compact the conversation.",
    ),
    # Worded alike: left as they are.
    ("API Error: 400 fake 400 failure", "API Error: 400 fake 400 failure"),
    ("API Error: Request rejected (429) \u00b7 fake 429 failure",) * 2,
    ("Login expired \u00b7 Please run /login",) * 2,
]


@pytest.mark.parametrize("tui, claude_p", WORDINGS)
def test_an_api_error_is_worded_as_claude_p_words_it(tui: str, claude_p: str) -> None:
    assert tr.print_error_text(tui) == claude_p
