"""End to end: `--json-schema` against the real TUI, compared with `claude -p --json-schema`.

claude-print serves `claude -p`'s StructuredOutput tool from its own MCP server
(claude_print/mcp/mcp_structured.py); the fake model calls it through the
`[[structured:JSON]]` / `[[structured_bad:JSON]]` directives (tests/support/fake_api.py).

What `claude -p` prints (measured on 2.1.197 and 2.1.330): success with
`structured_output` (the tool input) and `result` = its JSON text, `num_turns` 2 (one
more per failed attempt), `stop_reason` `tool_use`, one API call per attempt; five
failed attempts end with `error_max_structured_output_retries`, exit 1; a bad schema
argument exits 1 with `Error: --json-schema ...` on stderr and nothing on stdout.
"""

from __future__ import annotations

import json

import pytest
from checks import (
    assert_clean,
    assert_exit,
    assert_interactive,
    assert_same_shape,
    run_json_pair,
)
from harness import Sandbox, run_claude_p, run_claude_print

pytestmark = pytest.mark.e2e

SCHEMA = json.dumps(
    {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
)
GOOD = 'What is 2+2? [[structured:{"answer": 4}]]'
FIXED = 'What is 2+2? [[structured_bad:{"answer": "four"}]] [[structured:{"answer": 4}]]'
BAD = 'What is 2+2? [[structured_bad:{"answer": "four"}]]'
SAME_KEYS = ("subtype", "is_error", "num_turns", "stop_reason", "result", "structured_output")


@pytest.mark.matrix
def test_structured_output_like_claude_p(real_claude: str, sandbox: Sandbox) -> None:
    a, b = run_json_pair(sandbox, real_claude, ["--json-schema", SCHEMA, "--", GOOD], 0)
    assert b["structured_output"] == {"answer": 4} and b["result"] == '{"answer":4}'
    for key in SAME_KEYS:
        assert a.get(key) == b.get(key), key
    assert a["usage"]["input_tokens"] == b["usage"]["input_tokens"], "one API call, as claude -p"
    assert_same_shape(a, b)
    assert list(a).index("structured_output") == list(b).index("structured_output")
    assert_interactive(sandbox, a["session_id"])
    assert_clean(sandbox)


def test_a_wrong_first_attempt_is_retried_like_claude_p(real_claude: str, sandbox: Sandbox) -> None:
    a, b = run_json_pair(sandbox, real_claude, ["--json-schema", SCHEMA, "--", FIXED], 0)
    assert b["num_turns"] == 3
    for key in SAME_KEYS:
        assert a.get(key) == b.get(key), key
    assert_same_shape(a, b)
    assert_clean(sandbox)


def test_retries_run_out_like_claude_p(real_claude: str, sandbox: Sandbox) -> None:
    a, b = run_json_pair(sandbox, real_claude, ["--json-schema", SCHEMA, "--", BAD], 1)
    assert b["subtype"] == "error_max_structured_output_retries"
    for key in ("subtype", "is_error", "num_turns", "stop_reason", "errors", "terminal_reason"):
        assert a.get(key) == b.get(key), key
    assert "structured_output" not in a
    assert_same_shape(a, b)
    assert_clean(sandbox)


@pytest.mark.parametrize("prompt", [GOOD, BAD], ids=["success", "retries"])
def test_text_output_like_claude_p(real_claude: str, sandbox: Sandbox, prompt: str) -> None:
    args = ["--json-schema", SCHEMA, "--", prompt]
    ours = run_claude_print(sandbox, args, binary=real_claude)
    theirs = run_claude_p(sandbox, real_claude, args)
    assert_exit(ours, theirs.returncode)
    assert ours.stdout == theirs.stdout
    assert_clean(sandbox)


@pytest.mark.parametrize("schema", ["{nope", "[1]"], ids=str)
def test_bad_schema_argument_is_refused(real_claude: str, sandbox: Sandbox, schema: str) -> None:
    """`claude -p` prints `Error: --json-schema ...` and exits 1; claude-print reports bad
    input its own documented way (exit 2, the message on stderr, a json error object),
    with the same words after the parser's own."""
    args = ["--output-format", "json", "--json-schema", schema, "--", GOOD]
    ours = run_claude_print(sandbox, args, binary=real_claude)
    theirs = run_claude_p(sandbox, real_claude, args)
    assert_exit(ours, 2)
    assert_exit(theirs, 1)
    words = theirs.stderr.decode().split(":")[0].replace("Error", "").strip()
    assert f"claude-print: error: {words}" in ours.stderr.decode()
    assert json.loads(ours.stdout)["is_error"] is True
    assert_clean(sandbox)
