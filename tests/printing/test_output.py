"""The result object, text/json rendering and pricing, pinned on real `claude -p` 2.1.197 output."""

from __future__ import annotations

import json
import uuid
from typing import Any, Dict, List, Optional

import pytest
from harness import TESTS

from claude_print.printing import output
from claude_print.records import pricing
from claude_print.records import summary as sm
from claude_print.records import transcript as tr

DATA = TESTS / "data" / "cc-2.1.197"
OPUS_KEY = "claude-opus-4-8[1m]"
SUCCESS_SAMPLES = ["p_plain.json", "p_tool_denied.json", "p_texts.json", "p_texttool.json"]


def read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def load_json(name: str) -> Dict[str, Any]:
    data: Dict[str, Any] = json.loads(read(name))
    return data


def summary_of(name: str) -> sm.TurnSummary:
    records = [json.loads(line) for line in read(name).splitlines() if line.strip()]
    sid = next(r["sessionId"] for r in records if "sessionId" in r)
    return sm.summarise(tr.turn_records(records, sid))


def build(name: str, status: Optional[int] = None, **kwargs: Any) -> Dict[str, Any]:
    """The result as claude-print prints it for 2.1.197 (conformed to that release);
    `status`: the API error's HTTP status instead of the transcript's."""
    summary = summary_of(name)
    if status is not None:
        summary.api_error_status = status
    raw = output.result_object(
        summary,
        session_id="11111111-2222-3333-4444-555555555555",
        duration_ms=1234,
        duration_api_ms=summary.api_duration_ms,
        permission_denials=summary.permission_denials,
        claude_version="2.1.197",
        model_usage_key=OPUS_KEY,
        **kwargs,
    )
    return output.conform(raw, "2.1.197")


def shape(value: Any) -> Any:
    """Key order and value types, recursively (lists by their first element)."""
    if isinstance(value, dict):
        return [(k, shape(v)) for k, v in value.items()]
    if isinstance(value, list):
        return ["list", shape(value[0]) if value else None]
    if isinstance(value, float) and value.is_integer():
        return "number"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "number"
    return type(value).__name__


# --- result object ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("tui", "printed"),
    [
        ("tui_plain.transcript.jsonl", "p_plain.json"),
        ("tui_tool_denied.transcript.jsonl", "p_tool_denied.json"),
        ("tui_error400.transcript.jsonl", "p_error400.json"),
        ("tui_texts.transcript.jsonl", "p_texts.json"),
        ("tui_texttool_allowed.transcript.jsonl", "p_texttool.json"),
        ("tui_plain.reordered.transcript.jsonl", "p_plain.json"),
    ],
)
def test_result_object_has_claude_p_shape_and_values(tui: str, printed: str) -> None:
    ours = build(tui)
    real = load_json(printed)
    assert list(ours) == [*real, "claude_version"]
    assert ours.pop("claude_version") == "2.1.197"
    assert shape(ours) == shape(real)
    for key in (
        "type",
        "subtype",
        "is_error",
        "api_error_status",
        "num_turns",
        "result",
        "stop_reason",
        "total_cost_usd",
        "usage",
        "modelUsage",
        "terminal_reason",
        "fast_mode_state",
    ):
        assert ours[key] == real[key], key
    assert [list(d) for d in ours["permission_denials"]] == [
        list(d) for d in real["permission_denials"]
    ]
    assert str(uuid.UUID(ours["uuid"])) == ours["uuid"]


def test_api_error_result_leaves_timings_out() -> None:
    ours = build("tui_error400.transcript.jsonl")
    assert "ttft_ms" not in ours and "time_to_request_ms" not in ours
    assert ours["is_error"] is True and ours["subtype"] == "success"
    assert ours["modelUsage"] == {} and ours["total_cost_usd"] == 0
    assert output.render_json(ours).count('"total_cost_usd":0,') == 1


@pytest.mark.parametrize(
    "status, reason",
    [(400, "completed"), (412, "completed"), (413, "image_error"), (414, "completed")],
)
def test_a_request_too_large_ends_with_claude_p_s_terminal_reason(status: int, reason: str) -> None:
    """claude -p says "image_error" for a 413 (measured on 2.1.197, 2.1.270, 2.1.332); the
    TUI records no reason. Other statuses keep the release's own (2.1.197: "completed")."""
    ours = build("tui_error400.transcript.jsonl", status=status)
    assert ours["terminal_reason"] == reason


def test_timings_from_start_time() -> None:
    summary = summary_of("tui_plain.transcript.jsonl")
    assert summary.prompt_at_ms is not None and summary.first_answer_at_ms is not None
    started = (summary.prompt_at_ms - 500) / 1000
    ours = build("tui_plain.transcript.jsonl", started_at=started)
    gap = summary.first_answer_at_ms - summary.prompt_at_ms
    assert ours["time_to_request_ms"] == 500
    assert ours["ttft_ms"] == ours["ttft_stream_ms"] == 500 + gap
    plain = build("tui_plain.transcript.jsonl")
    assert (plain["time_to_request_ms"], plain["ttft_ms"]) == (0, gap)
    fixed = build("tui_plain.transcript.jsonl", ttft_ms=7, ttft_stream_ms=6, time_to_request_ms=5)
    assert (fixed["ttft_ms"], fixed["ttft_stream_ms"], fixed["time_to_request_ms"]) == (7, 6, 5)


def test_model_usage_key_defaults_to_answering_model() -> None:
    summary = summary_of("tui_plain.transcript.jsonl")
    ours = output.result_object(
        summary,
        session_id="s",
        duration_ms=1,
        duration_api_ms=1,
        permission_denials=[],
        claude_version="2.1.197",
    )
    assert list(ours["modelUsage"]) == ["claude-opus-4-8"]
    other = output.result_object(
        summary,
        session_id="s",
        duration_ms=1,
        duration_api_ms=1,
        permission_denials=[],
        claude_version="2.1.197",
        model_usage_key="claude-sonnet-4-5",  # another family: entries keep their model
    )
    assert list(other["modelUsage"]) == ["claude-opus-4-8"]


# --- error object ----------------------------------------------------------------


def test_error_object_has_claude_p_max_turns_shape() -> None:
    real = load_json("p_maxturns.json")
    ours = output.error_object(
        "error_max_turns",
        "Reached maximum number of turns (1)",
        session_id=real["session_id"],
        duration_ms=10,
        claude_version="2.1.197",
        num_turns=2,
        usage=real["usage"],
        stop_reason="tool_use",
        total_cost_usd=0.00051,
        model_usage=real["modelUsage"],
        permission_denials=real["permission_denials"],
    )
    assert list(ours) == [*real, "claude_version"]
    ours.pop("claude_version")
    assert shape(ours) == shape(real)
    assert ours["errors"] == real["errors"]
    assert ours["terminal_reason"] == "max_turns"
    assert "result" not in ours


@pytest.mark.parametrize(
    ("subtype", "reason"),
    [
        ("error_timeout", "aborted_streaming"),
        ("error_interrupted", "aborted_streaming"),
        ("error_during_execution", None),
    ],
)
def test_error_object_defaults(subtype: str, reason: Any) -> None:
    obj = output.error_object(subtype, "boom", session_id="s", duration_ms=5, claude_version="v")
    assert obj["is_error"] is True and obj["errors"] == ["boom"]
    assert obj.get("terminal_reason") == reason
    assert ("terminal_reason" in obj) is (reason is not None)
    assert obj["usage"] == sm.zero_usage() and obj["modelUsage"] == {}
    assert list(obj)[-3:] == ["uuid", "errors", "claude_version"]
    explicit = output.error_object(
        subtype, "x", session_id="s", duration_ms=5, claude_version="v", terminal_reason="completed"
    )
    assert explicit["terminal_reason"] == "completed"


# --- text and json ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("result_sample", "text_sample"),
    [
        ("p_unicode.json", "p_unicode.txt"),
        ("p_error400.json", "p_error400.txt"),
        ("p_maxturns.json", "p_maxturns.txt"),
    ],
)
def test_render_text_matches_claude_p(result_sample: str, text_sample: str) -> None:
    assert output.render_text(load_json(result_sample)) == read(text_sample)


def test_render_text_newline_rules() -> None:
    real = read("p_trailing_newline.txt")
    assert real == "  lead\ntrail\n\n"  # claude -p added no newline of its own
    assert output.render_text({"subtype": "success", "result": real}) == real
    assert output.render_text({"subtype": "success", "result": "x"}) == "x\n"
    assert output.render_text({"subtype": "success", "result": ""}) == "\n"
    maxed = {"subtype": "error_max_turns", "errors": ["whatever"]}
    assert output.render_text(maxed, max_turns=3) == "Error: Reached max turns (3)"
    assert output.render_text({"subtype": "error_during_execution"}) == "Execution error"
    budget = {"subtype": "error_max_budget_usd"}
    assert output.render_text(budget, max_budget_usd=0.5) == "Error: Exceeded USD budget (0.5)"
    assert output.render_text({"subtype": "error_timeout", "errors": ["t"]}) == ""


@pytest.mark.parametrize(
    "name",
    [*SUCCESS_SAMPLES, "p_error400.json", "p_maxturns.json", "p_unicode.json"],
)
def test_render_json_is_byte_identical_to_claude_p(name: str) -> None:
    text = read(name)
    assert output.render_json(json.loads(text)) == text


def test_render_json_of_built_result_is_one_line() -> None:
    line = output.render_json(build("tui_unicode.reordered.transcript.jsonl"))
    assert line.endswith("\n") and line.count("\n") == 1
    assert "héllo ✓ 日本 😀\\ntrail" in line


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0"),
        (-0.0, "0"),
        (100.0, "100"),
        (0.1 + 0.2, "0.30000000000000004"),
        (0.00030999999999999995, "0.00030999999999999995"),
        (3e-06, "0.000003"),
        (1e-06, "0.000001"),
        (1e-07, "1e-7"),
        (1.5e-10, "1.5e-10"),
        (123.5, "123.5"),
        (-2.5, "-2.5"),
        (1e21, "1e+21"),
        (1.5e300, "1.5e+300"),
        (123456789012345680000.0, "123456789012345680000"),
        (float("nan"), "null"),
        (float("inf"), "null"),
    ],
)
def test_js_number(value: float, text: str) -> None:
    assert output.js_number(value) == text


def test_to_js_json_strings() -> None:
    assert output.to_js_json("a\u2028b\x7f") == '"a\u2028b\x7f"'  # not escaped by JS either
    assert output.to_js_json("\ud800x") == '"\\ud800x"'  # lone surrogate: escaped
    assert output.to_js_json('\n\t"\\\x01') == '"\\n\\t\\"\\\\\\u0001"'
    assert output.to_js_json({"a": [1, True, None, 2.0]}) == '{"a":[1,true,null,2]}'
    with pytest.raises(TypeError):
        output.to_js_json({1, 2})


# --- pricing ---------------------------------------------------------------------


def usage(inp: int, out: int, **extra: Any) -> Dict[str, Any]:
    return {"input_tokens": inp, "output_tokens": out, **extra}


def test_cost_reproduces_claude_p_floats() -> None:
    assert pricing.cost_usd("claude-opus-4-8", usage(42, 4)) == 0.00030999999999999995
    calls: List[Dict[str, Any]] = [usage(42, 12), usage(42, 3)]
    total = 0.0
    for call in calls:
        total += pricing.cost_usd("claude-opus-4-8", call)
    assert total == 0.000795 == load_json("p_tool_denied.json")["total_cost_usd"]
    # Summing tokens first would give a different float than claude -p prints.
    assert pricing.cost_usd("claude-opus-4-8", usage(84, 15)) != 0.000795


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-opus-4-8[1m]", 5 + 25),
        ("claude-opus-4-1-20250805", 15 + 75),
        ("claude-sonnet-4-5-20250929", 3 + 15),
        ("claude-sonnet-4-20250514", 3 + 15),
        ("claude-haiku-4-5-20251001", 1 + 5),
        ("claude-3-5-haiku-20241022", 0.8 + 4),
        ("us.anthropic.claude-opus-4-8-v1:0", 5 + 25),
        ("claude-fable-5", 10 + 50),
        ("gpt-4o", 0),
        ("<synthetic>", 0),
    ],
)
def test_price_table(model: str, expected: float) -> None:
    assert pricing.cost_usd(model, usage(1_000_000, 1_000_000)) == pytest.approx(expected)


def test_cache_and_search_costs() -> None:
    five_min = usage(0, 0, cache_creation_input_tokens=1_000_000, cache_read_input_tokens=1_000_000)
    assert pricing.cost_usd("claude-sonnet-4-5", five_min) == pytest.approx(3.75 + 0.3)
    one_hour = dict(five_min, cache_creation={"ephemeral_1h_input_tokens": 400_000})
    assert pricing.cost_usd("claude-sonnet-4-5", one_hour) == pytest.approx(
        0.4 * 6 + 0.6 * 3.75 + 0.3
    )
    searches = usage(0, 0, server_tool_use={"web_search_requests": 3})
    assert pricing.cost_usd("claude-haiku-4-5", searches) == pytest.approx(0.03)
    fast = usage(1_000_000, 0, speed="fast")
    assert pricing.cost_usd("claude-opus-4-8", fast) == pytest.approx(10)
    assert pricing.cost_usd("claude-opus-4-6", fast) == pytest.approx(30)
    assert pricing.cost_usd("claude-opus-4-8", {"input_tokens": None}) == 0.0


def test_context_window_and_max_output() -> None:
    assert pricing.context_window("claude-opus-4-8[1m]") == 1_000_000
    assert pricing.context_window("claude-opus-4-8") == 1_000_000  # natively 1M
    assert pricing.context_window("claude-sonnet-4-5-20250929") == 200_000
    assert pricing.context_window("claude-sonnet-4-5[1m]") == 1_000_000
    assert pricing.max_output_tokens("claude-opus-4-8[1m]") == 64000
    assert pricing.max_output_tokens("claude-haiku-4-5-20251001") == 32000
    assert pricing.max_output_tokens("claude-3-5-haiku-20241022") == 8192
    assert pricing.max_output_tokens("mystery") == 32000
    assert pricing.canonical_model("claude-opus-4-20250514") == "claude-opus-4-0"
    assert pricing.canonical_model("claude-opus-4-1") == "claude-opus-4-1"
