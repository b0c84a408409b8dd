"""Output shaped like the running release's own `claude -p`: every captured release.

claude-print builds its result from the TUI transcript, then conforms it to the shape
captured from that release's `claude -p` (scripts/capture-claude-p, scripts/update-shapes):
same keys, same order, same value types, plus its own trailing `claude_version`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, Dict, List

import pytest
from harness import ROOT, TESTS

from claude_print.printing import output
from claude_print.printing.shapes import SHAPES
from claude_print.records import summary as sm
from claude_print.records import transcript as tr

DATA = TESTS / "data"
RELEASES = sorted(
    (p.name[3:] for p in DATA.glob("cc-*") if (p / "p_plain.json").exists()),
    key=lambda v: tuple(int(x) for x in v.split(".")),
)


def types(value: Any) -> Any:
    """Key order and value types, recursively (lists by their first element)."""
    if isinstance(value, dict):
        return [(k, types(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [types(value[0])] if value else []
    if isinstance(value, bool) or value is None:
        return type(value).__name__
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def ours(transcript: str, release: str) -> Dict[str, Any]:
    records = [
        json.loads(line)
        for line in (DATA / "cc-2.1.197" / transcript).read_text().splitlines()
        if line.strip()
    ]
    summary = sm.summarise(tr.turn_records(records, records[-1]["sessionId"]))
    raw = output.result_object(
        summary,
        session_id="11111111-2222-3333-4444-555555555555",
        duration_ms=1234,
        duration_api_ms=summary.api_duration_ms,
        permission_denials=[],
        claude_version=release,
    )
    return output.conform(raw, release)


def theirs(release: str, name: str) -> Dict[str, Any]:
    obj: Dict[str, Any] = json.loads((DATA / f"cc-{release}" / name).read_text())
    return obj


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize(
    ("transcript", "printed"),
    [
        ("tui_plain.transcript.jsonl", "p_plain.json"),
        ("tui_error400.transcript.jsonl", "p_error400.json"),
    ],
    ids=["success", "api-error"],
)
def test_result_has_the_releases_keys_order_and_types(
    release: str, transcript: str, printed: str
) -> None:
    mine = ours(transcript, release)
    real = theirs(release, printed)
    assert mine.pop("claude_version") == release
    # modelUsage is keyed by model (ours answered on another model than the capture's)
    mine_models: List[Any] = list(mine.pop("modelUsage").values())
    real_models: List[Any] = list(real.pop("modelUsage").values())
    assert types(mine) == types(real)
    assert [types(m) for m in mine_models[:1]] == [types(m) for m in real_models[:1]]
    assert mine["terminal_reason"] == real["terminal_reason"]


def test_api_error_type_names_the_status() -> None:
    result = ours("tui_error400.transcript.jsonl", "2.1.330")
    assert result["api_error_type"] == "invalid_request_error"
    assert result["terminal_reason"] == "api_error"
    assert output.api_error_type(429) == "rate_limit_error"


def test_shape_for_picks_the_newest_capture_at_or_below() -> None:
    releases = list(SHAPES)
    assert output.shape_for(releases[0]) is SHAPES[releases[0]]
    assert output.shape_for("2.1.9999") is SHAPES[releases[-1]]  # newer than tested
    assert output.shape_for("") is SHAPES[releases[-1]]  # unknown release: the newest
    assert output.shape_for("2.1.1") is SHAPES[releases[0]]  # older: the oldest


def test_shapes_are_generated_from_the_captures() -> None:
    """scripts/update-shapes was run after the last capture."""
    script = ROOT / "scripts" / "update-shapes"
    proc = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_model_usage_takes_the_releases_limits_for_its_model() -> None:
    raw = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "modelUsage": {"claude-opus-5-5": {"inputTokens": 1, "contextWindow": 200000}},
    }
    entry = output.conform(raw, "2.1.330")["modelUsage"]["claude-opus-5-5"]
    assert (entry["contextWindow"], entry["maxOutputTokens"]) == (1000000, 128000)
    assert entry["canonicalModel"] == "claude-opus-5-5"
    assert entry["provider"] == "firstParty"


@pytest.mark.parametrize(
    ("release", "key"),
    [
        ("2.1.197", "claude-opus-4-8[1m]"),
        ("2.1.270", "claude-opus-5[1m]"),
        ("2.1.331", "claude-opus-5-5"),
    ],
)
def test_the_default_model_keeps_claude_p_s_model_usage_key(release: str, key: str) -> None:
    """Measured with each release's claude -p and no --model."""
    from claude_print.printing.output import default_model_usage_key

    assert default_model_usage_key(release) == key


def test_every_release_s_shape_is_captured() -> None:
    """tests/data/shape-scan holds the key structure of `claude -p`'s output for every
    release from 2.1.197 to 2.1.331 (scripts/scan-shapes): each must match the captured
    release whose shape claude-print uses for it, or a shape change goes unseen."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "scan-shapes"), "--report"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
