"""End to end: a turn that ends without the hook claude-print waits for ends the run as
`claude -p` ends it (issue 42).

A 5 MB prompt: 2.1.332 refuses it before any request ("Prompt is too long", exit 1,
terminal_reason "blocking_limit"); its TUI records that answer but fires no Stop or
StopFailure and writes no turn_duration, so claude-print waited for --timeout. 2.1.197
and 2.1.270 send it. Both sides at once, compared on exit code and the result's fields.
"""

from __future__ import annotations

import json

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
