"""End to end: the request the model receives from claude-print's TUI, held against
`claude -p`'s for the same prompt on the same release, field by field. What still
differs is listed here per release with its reason (docs/compatibility.md)."""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List

import pytest
from checks import assert_exit
from fake_api import FakeApiServer
from harness import Sandbox, claude_release, run_pair

pytestmark = [pytest.mark.e2e, pytest.mark.matrix]


def known_differences(release: str) -> Dict[str, Any]:
    """Measured: the TUI adds a thinking-related beta (redact-thinking on 2.1.197 and
    2.1.270, thinking-display-updates with `thinking.display: "updates"` where `claude -p` says
    "omitted" on 2.1.287 on). `showThinkingSummaries` would drop the beta but make the
    display "summarized" on both, and `--thinking-display omitted` does not change the
    TUI's request: no switch makes them equal, so they stay (documented)."""
    from claude_print import contract

    # Where `claude -p` starts in auto mode (2.1.285 to 2.1.300) it sends auto mode's
    # betas; claude-print's TUI runs in the default mode (measured on 2.1.285 to 2.1.289).
    auto = contract.facts_for(release).print_default_mode == "auto"
    only_theirs = ["afk-mode-2026-01-31", "dangerous-tool-use-2026-09-03"] if auto else []
    if (contract.parse_version(release) or (0,)) >= (2, 1, 287):
        # Bisected (issue 31): 2.1.286 sends redact-thinking, 2.1.287 this one;
        # measured on 2.1.287 to 2.1.289, 2.1.331 and 2.1.332.
        return {
            "betas": ["thinking-display-updates-2026-08-18"],
            "display": "updates",
            "only_theirs": only_theirs,
        }
    return {"betas": ["redact-thinking-2026-02-12"], "display": None, "only_theirs": only_theirs}


def turn_request(requests: List[Dict[str, Any]]) -> Dict[str, Any]:
    [first] = [r for r in requests if not r["tool_result"]]
    return first


def test_the_request_is_claude_p_s(
    sandbox: Sandbox, fake_api: FakeApiServer, oracle_api: FakeApiServer, real_claude: str
) -> None:
    words = ["--output-format", "json", "--", "What is in this zebra request?"]
    pair = run_pair(sandbox, real_claude, fake_api, oracle_api, words, words)
    assert_exit(pair.ours, pair.theirs.returncode)
    ours, theirs = turn_request(pair.our_requests), turn_request(pair.their_requests)
    # With no --model, claude -p keys modelUsage by its default model's name
    # ("claude-opus-4-8[1m]" on 2.1.197), not the transcript's ("claude-opus-4-8").
    mine, oracle = json.loads(pair.ours.stdout), json.loads(pair.theirs.stdout)
    assert list(mine["modelUsage"]) == list(oracle["modelUsage"])
    assert ours["tools"] == theirs["tools"]
    assert ours["model"] == theirs["model"]
    assert ours["prompt"] == theirs["prompt"]
    for key in ("max_tokens", "output_config", "context_management", "temperature"):
        assert ours["params"].get(key) == theirs["params"].get(key), key
    release = claude_release(real_claude)
    known = known_differences(release)
    extra = sorted(set(ours["betas"]) - set(theirs["betas"]))
    assert sorted(set(theirs["betas"]) - set(ours["betas"])) == known["only_theirs"], release
    assert extra == known["betas"], release
    display = (ours["params"].get("thinking") or {}).get("display")
    assert display == known["display"], release
    ours_type = (ours["params"].get("thinking") or {}).get("type")
    assert ours_type == (theirs["params"].get("thinking") or {}).get("type")


# Measured (issue 40) with `claude -p` of the same release beside the TUI: the tools whose
# whole definition (description, input schema) differs, with the reason. No switch of
# the release makes them equal (docs/compatibility.md, "What the model receives").
TOOLS_THAT_DIFFER: Dict[str, List[str]] = {
    "2.1.197": [],
    # the Agent tool describes forks "in the background" and its schema has the TUI's
    # options; claude -p's is the print-mode text
    "2.1.270": ["Agent"],
    # also Bash: `run_in_background` is described for an interactive session (notified,
    # "do not poll"); claude -p's speaks of the command's own time limit
    "2.1.332": ["Agent", "Bash"],
}
# Lines only the TUI puts in the first user message: its agent list names the built-in
# `claude-code-guide` agent (every release measured), and 2.1.270 adds advice on
# launching several agents at once.
TUI_ONLY_LINES = (
    re.compile(r"\n- claude-code-guide: [^\n]*"),
    re.compile(
        r"\n\nWhen you launch multiple agents for independent work, send them in a single "
        r"message with multiple tool uses so they run concurrently\."
    ),
)


def without_tui_lines(messages: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """`messages` with the TUI-only lines taken out of every text block."""
    out = json.loads(json.dumps(messages))
    for message in out:
        content = message.get("content")
        if isinstance(content, str):  # 2.1.197's agent list: a system message
            for line in TUI_ONLY_LINES:
                content = line.sub("", content)
            message["content"] = content
        blocks = content if isinstance(content, list) else []
        for block in blocks:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                for line in TUI_ONLY_LINES:
                    block["text"] = line.sub("", block["text"])
    return list(out)


@pytest.mark.between
def test_the_tools_and_messages_are_claude_p_s_whole(
    sandbox: Sandbox, fake_api: FakeApiServer, oracle_api: FakeApiServer, real_claude: str
) -> None:
    """The first request's tools and messages, whole: only the measured differences."""
    words = ["--output-format", "json", "--", "What is in this zebra request?"]
    pair = run_pair(sandbox, real_claude, fake_api, oracle_api, words, words)
    assert_exit(pair.ours, pair.theirs.returncode)
    ours, theirs = (
        turn_request(pair.our_requests)["body"],
        turn_request(pair.their_requests)["body"],
    )
    release = claude_release(real_claude)
    mine = {t["name"]: t for t in ours.get("tools", [])}
    oracle = {t["name"]: t for t in theirs.get("tools", [])}
    assert list(mine) == list(oracle)
    differ = sorted(name for name in mine if mine[name] != oracle[name])
    if release in TOOLS_THAT_DIFFER:
        assert differ == TOOLS_THAT_DIFFER[release], release
    assert without_tui_lines(ours["messages"]) == without_tui_lines(theirs["messages"])
