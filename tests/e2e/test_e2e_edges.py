"""End to end: a turn that ends without the hook claude-print waits for ends the run as
`claude -p` ends it (issue 42).

A 5 MB prompt: 2.1.332 refuses it before any request ("Prompt is too long", exit 1,
terminal_reason "blocking_limit"); its TUI records that answer but fires no Stop or
StopFailure and writes no turn_duration, so claude-print waited for --timeout. 2.1.197
and 2.1.270 send it. Both sides at once, compared on exit code and the result's fields.
"""

from __future__ import annotations

import json
import re

import pytest
from checks import assert_exit
from fake_api import FakeApiServer
from harness import Sandbox, run_pair

pytestmark = [pytest.mark.e2e, pytest.mark.matrix]

FIELDS = ("type", "subtype", "is_error", "result", "num_turns", "terminal_reason", "stop_reason")


@pytest.mark.between
def test_a_prompt_over_the_context_limit_ends_as_in_claude_p(
    sandbox: Sandbox, fake_api: FakeApiServer, oracle_api: FakeApiServer, real_claude: str
) -> None:
    prompt = ("word " * 1_000_000).encode()  # 5 MB, ~1M tokens: over every model's window
    ours = ["--output-format", "json", "--timeout", "90"]
    pair = run_pair(
        sandbox, real_claude, fake_api, oracle_api, ours, ["--output-format", "json"], stdin=prompt
    )
    assert_exit(pair.ours, pair.theirs.returncode)
    mine, theirs = json.loads(pair.ours.stdout), json.loads(pair.theirs.stdout)
    result = str(theirs["result"])
    if result.startswith("ACK "):  # the model got it: its length, less the box's trimming
        assert str(mine["result"]).startswith("ACK ")
        return
    assert [mine.get(k) for k in FIELDS] == [theirs.get(k) for k in FIELDS]


# Every status the fake API is asked for, retries off on both sides (the retried ones,
# 429 and 5xx, would otherwise back off for minutes alike); the two the TUI words for a
# person (401, 413) on every CI release, the rest on the newest. What claude -p prints is
# written out for the worded ones (measured on 2.1.197, 2.1.270 and 2.1.332).
STATUSES = [
    pytest.param(401, marks=pytest.mark.between),
    413,
    *(pytest.param(s, marks=pytest.mark.newest_only) for s in (400, 403, 404, 429, 500, 529)),
]
WORDED = {
    401: r"Failed to authenticate\. API Error: 401 fake 401 failure",
    403: r"Failed to authenticate\. API Error: 403 fake 403 failure",
    404: r"There's an issue with the selected model .* Run --model to pick a different model\.",
    413: r"Request too large \(max 32MB\)\. .*(Try with a smaller file|compact the conversation)\.",
}


@pytest.mark.parametrize("status", STATUSES)
def test_an_api_error_of_each_status_ends_as_in_claude_p(
    sandbox: Sandbox,
    fake_api: FakeApiServer,
    oracle_api: FakeApiServer,
    real_claude: str,
    status: int,
) -> None:
    prompt = f"This fails [[error:{status}]]"
    args = ["--output-format", "json", prompt]
    no_retries = {"CLAUDE_CODE_MAX_RETRIES": "0"}
    pair = run_pair(sandbox, real_claude, fake_api, oracle_api, args, args, env=no_retries)
    assert_exit(pair.ours, pair.theirs.returncode)
    assert pair.theirs.returncode == 1
    mine, theirs = json.loads(pair.ours.stdout), json.loads(pair.theirs.stdout)
    keys = (*FIELDS, "api_error_status")
    assert [local(mine.get(k)) for k in keys] == [local(theirs.get(k)) for k in keys]
    if status in WORDED:
        assert re.fullmatch(WORDED[status], mine["result"]), mine["result"]
    if status == 413:
        assert mine["terminal_reason"] == "image_error"


def local(value: object) -> object:
    """A result naming its API's address (5xx: "check your inference gateway
    (127.0.0.1:PORT)"): each side has a fake API of its own."""
    return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", value) if isinstance(value, str) else value
