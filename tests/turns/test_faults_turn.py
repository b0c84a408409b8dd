"""Fault injection (issue 4): unattended runs never hang and never leak. The turn goes
wrong: the child crashes in it, the API fails, a tool is denied, the Stop hook comes
twice, late or malformed, the transcript is missing, the answer never comes, --max-turns
is reached. Each case runs claude-print against a mock_claude scenario and checks it
with mock_runs.check.
"""

from __future__ import annotations

import json
import time

import pytest
from harness import Sandbox
from mock_runs import HUNG, ack, check, child_argv, json_out, run_mock, submitted


def test_crash_mid_turn(sandbox: Sandbox) -> None:
    proc = run_mock(sandbox, ["hi"], "crash_mid_turn")
    check(sandbox, proc, 2, "exited (status 1) before answering", "dying in the middle of a turn")
    assert submitted(sandbox) == [b"hi"]
    assert proc.stdout == b""


def test_api_error_exits_1(sandbox: Sandbox) -> None:
    proc = run_mock(sandbox, ["hi"], "api_error")
    check(sandbox, proc, 1)
    assert proc.stdout.decode() == "API Error: 400 fake 400 failure\n"
    proc = run_mock(sandbox, ["--output-format", "json", "hi"], "api_error")
    check(sandbox, proc, 1)
    obj = json_out(proc)
    assert obj["is_error"] is True
    assert obj["api_error_status"] == 400
    assert obj["result"] == "API Error: 400 fake 400 failure"


def test_tool_is_denied_and_listed(sandbox: Sandbox) -> None:
    proc = run_mock(sandbox, ["--output-format", "json", "hi"], "tool")
    check(sandbox, proc, 0)
    obj = json_out(proc)
    assert obj["result"] == "Tool turn done."
    assert obj["num_turns"] == 2
    [denial] = obj["permission_denials"]
    assert denial["tool_name"] == "Bash"
    assert denial["tool_input"]["command"] == "touch /tmp/x"
    assert denial["tool_use_id"].startswith("toolu_")


def test_late_flush_still_reads_the_answer(sandbox: Sandbox) -> None:
    proc = run_mock(sandbox, ["--output-format", "json", "hi"], "late_flush")
    check(sandbox, proc, 0)
    obj = json_out(proc)
    assert obj["result"] == ack("hi")
    assert obj["usage"]["output_tokens"] > 0  # from the transcript, not a fallback
    assert obj["stop_reason"] == "end_turn"


@pytest.mark.parametrize("fmt", ["text", "json", "stream-json"])
def test_hook_twice_prints_one_result(sandbox: Sandbox, fmt: str) -> None:
    proc = run_mock(sandbox, ["--output-format", fmt, "hi"], "hook_twice")
    check(sandbox, proc, 0)
    out = proc.stdout.decode()
    if fmt == "text":
        assert out == ack("hi") + "\n"
        return
    results = [json.loads(line) for line in out.splitlines() if '"type":"result"' in line]
    assert len(results) == 1
    assert results[0]["result"] == ack("hi")


@pytest.mark.parametrize("variant", ["malformed_stop", "malformed_stop:missing"])
def test_malformed_stop_trusts_the_transcript(sandbox: Sandbox, variant: str) -> None:
    """A Stop payload that is not JSON (or lacks its fields) still says "the turn
    ended"; the transcript, not the payload, holds the answer. So: exit 0."""
    proc = run_mock(sandbox, ["--output-format", "json", "hi"], variant)
    check(sandbox, proc, 0)
    obj = json_out(proc)
    assert obj["result"] == ack("hi")
    assert obj["usage"]["output_tokens"] > 0


def test_malformed_stop_and_no_transcript_is_a_clear_error(sandbox: Sandbox) -> None:
    """Nothing says what the answer was: a clear error, never a made-up result."""
    proc = run_mock(sandbox, ["hi"], "malformed_stop,no_transcript")
    check(sandbox, proc, 2, "the turn ended but its transcript has no answer")
    assert proc.stdout == b""


def test_no_transcript_falls_back_to_the_stop_payload(sandbox: Sandbox) -> None:
    proc = run_mock(sandbox, ["hi"], "no_transcript")
    check(sandbox, proc, 0)
    assert proc.stdout.decode() == ack("hi") + "\n"


def test_slow_answer_times_out_json(sandbox: Sandbox) -> None:
    started = time.monotonic()
    proc = run_mock(sandbox, ["--timeout", "2", "--output-format", "json", "hi"], "slow:30")
    assert time.monotonic() - started < 25  # the mock would answer after 30 s
    check(sandbox, proc, 124, "timed out after 2s")
    obj = json_out(proc)
    assert obj["subtype"] == "error_timeout"
    assert obj["is_error"] is True


@pytest.mark.parametrize("fmt", ["text", "stream-json"])
def test_hang_times_out(sandbox: Sandbox, fmt: str) -> None:
    started = time.monotonic()
    proc = run_mock(sandbox, ["--timeout", "2", "--output-format", fmt, "hi"], "hang")
    assert time.monotonic() - started < HUNG
    check(sandbox, proc, 124, "timed out after 2s")
    if fmt == "text":
        assert proc.stdout == b""
    else:
        last = json.loads(proc.stdout.decode().splitlines()[-1])
        assert (last["type"], last["subtype"]) == ("result", "error_timeout")


def test_max_turns_json(sandbox: Sandbox) -> None:
    proc = run_mock(sandbox, ["--max-turns", "1", "--output-format", "json", "hi"], "tools:3")
    check(sandbox, proc, 1)
    obj = json_out(proc)
    assert obj["subtype"] == "error_max_turns"
    assert obj["is_error"] is True
    assert obj["num_turns"] == 2
    assert obj["errors"] == ["Reached maximum number of turns (1)"]
    assert "result" not in obj
    assert "--max-turns" not in (child_argv(sandbox) or [])


def test_max_turns_text(sandbox: Sandbox) -> None:
    proc = run_mock(sandbox, ["--max-turns", "1", "hi"], "tools:3")
    check(sandbox, proc, 1)
    assert proc.stdout.decode() == "Error: Reached max turns (1)"


@pytest.mark.parametrize("limit", [1, 2])
def test_max_turns_stops_before_the_call_claude_p_would_not_make(
    sandbox: Sandbox, limit: int
) -> None:
    proc = run_mock(
        sandbox, ["--max-turns", str(limit), "--output-format", "json", "hi"], "tools:3"
    )
    check(sandbox, proc, 1)
    obj = json_out(proc)
    assert (obj["subtype"], obj["num_turns"]) == ("error_max_turns", limit + 1)
    [path] = sandbox.transcripts()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    tool_uses = [
        block
        for r in records
        if r.get("type") == "assistant"
        for block in r["message"]["content"]
        if block.get("type") == "tool_use"
    ]
    assert len(tool_uses) == limit  # the PostToolBatch hook stopped the TUI there
    stopped = [
        r for r in records if r.get("attachment", {}).get("type") == "hook_stopped_continuation"
    ]
    # The result may come before the TUI has recorded the hook's stop: claude-print ends
    # the turn as soon as the transcript passes the limit (it failed so in one CI run).
    assert len(stopped) <= 1
