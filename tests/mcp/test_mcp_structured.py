"""claude_print.mcp.mcp_structured: the StructuredOutput MCP server, driven over pipes as Claude
Code drives it (the 2.1.330 handshake: a `server/discover` probe, initialize,
notifications/initialized, tools/list, then tools/call), plus the helpers claude-print
wires it with."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any, Dict, List

import pytest

from claude_print.mcp import mcp_structured as ms
from claude_print.mcp import schema_check

SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"roots": {"listChanged": True}},
        "clientInfo": {"name": "claude-code", "version": "2.1.330"},
    },
}


def call(request_id: int, arguments: Any) -> Dict[str, Any]:
    params = {"name": "StructuredOutput", "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


class Running:
    """The server as Claude Code starts it (server_command), one request at a time."""

    def __init__(self, schema_path: Path, ready: Path) -> None:
        self.proc = subprocess.Popen(
            ms.server_command(str(schema_path), str(ready)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def send(self, message: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def ask(self, message: Any) -> Dict[str, Any]:
        self.send(message)
        return self.read()

    def read(self) -> Dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read() if self.proc.stderr else b""
        answer: Dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        return code


@pytest.fixture
def server(tmp_path: Path) -> Any:
    schema_path = tmp_path / "schema.json"
    schema_path.write_text(json.dumps(SCHEMA))
    running = Running(schema_path, tmp_path / "ready")
    yield running
    if running.proc.poll() is None:
        running.close()


def test_the_handshake_and_calls_over_pipes(server: Running, tmp_path: Path) -> None:
    probe = {"jsonrpc": "2.0", "id": "server-discover-probe-1", "method": "server/discover"}
    assert server.ask(probe)["error"]["code"] == -32601  # then Claude Code falls back
    init = server.ask(INIT)
    assert init["id"] == 0
    assert init["result"]["protocolVersion"] == "2025-11-25"
    assert init["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert init["result"]["serverInfo"]["name"] == ms.SERVER_NAME
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})  # no answer
    assert not (tmp_path / "ready").exists()
    listed = server.ask({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert not (tmp_path / "ready").exists(), "listed is not yet taken in by the TUI"
    ping = {"jsonrpc": "2.0", "id": "claude-print-ready-1", "method": "ping"}
    assert server.read() == ping
    started = time.monotonic()
    server.send({"jsonrpc": "2.0", "id": "claude-print-ready-1", "result": {}})
    assert server.read() == {**ping, "id": "claude-print-ready-2"}
    assert time.monotonic() - started >= 0.3, "the second ping waits 0.3 s of TUI time"
    assert not (tmp_path / "ready").exists()
    # Claude Code answers pings; an error answer is an answer too.
    server.send({"jsonrpc": "2.0", "id": "claude-print-ready-2", "error": {"code": -1}})
    assert server.ask({"jsonrpc": "2.0", "id": 6, "method": "ping"})["id"] == 6
    assert (tmp_path / "ready").exists(), "ready once the TUI answered the second ping"
    [tool] = listed["result"]["tools"]
    assert tool["name"] == "StructuredOutput"
    assert tool["description"] == ms.DESCRIPTION
    assert tool["inputSchema"] == SCHEMA
    good = server.ask(call(2, {"answer": 4}))
    assert good == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {
            "content": [{"type": "text", "text": "Structured output provided successfully"}]
        },
    }
    bad = server.ask(call(3, {"answer": "four"}))["result"]
    assert bad["isError"] is True
    assert bad["content"] == [
        {"type": "text", "text": "Output does not match required schema: /answer: must be integer"}
    ]
    missing = server.ask(call(4, {}))["result"]
    assert missing["content"][0]["text"].endswith("root: must have required property 'answer'")
    assert server.ask({"jsonrpc": "2.0", "id": 5, "method": "ping"})["result"] == {}
    assert server.close() == 0, "stdin closed: the server ends"


def test_starts_fast(server: Running) -> None:
    started = time.monotonic()
    server.ask(INIT)
    assert time.monotonic() - started < 2.0


def test_what_claude_p_description_says() -> None:
    assert ms.DESCRIPTION == (
        "Use this tool to return your final response in the requested structured format. "
        "You MUST call this tool exactly once at the end of your response to provide the "
        "structured output."
    )
    assert ms.QUALIFIED_NAME == "mcp__claude-print__StructuredOutput"


@pytest.mark.parametrize(
    "message, answer",
    [
        ({"jsonrpc": "2.0", "id": 7, "method": "nope"}, {"code": -32601}),
        ({"id": 7, "method": "ping"}, {"code": -32600}),
        ({"jsonrpc": "2.0", "method": "notifications/cancelled"}, None),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, None),
    ],
)
def test_protocol_edges(message: Dict[str, Any], answer: Any) -> None:
    response = ms.Server(SCHEMA).handle(message)
    if answer is None:
        assert response is None
    else:
        assert response is not None and response["error"]["code"] == answer["code"]


def test_serve_answers_batches_and_bad_lines() -> None:
    lines = [
        b"not json\n",
        b"\n",
        json.dumps([INIT, {"jsonrpc": "2.0", "method": "notifications/initialized"}]).encode()
        + b"\n",
        json.dumps(call(9, {"answer": 1})).encode() + b"\n",
    ]
    out = io.BytesIO()
    ms.serve(ms.Server(SCHEMA), io.BytesIO(b"".join(lines)), out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert answers[0]["error"]["code"] == -32700
    assert [a["id"] for a in answers[1]] == [0]
    assert answers[2]["result"]["content"][0]["text"] == ms.SUCCESS_TEXT


def test_no_ready_file_no_pings() -> None:
    """Without a ready file to make (a server started by hand) the server only answers."""
    server = ms.Server(SCHEMA)
    assert server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}) is not None
    assert server.take_outbox() == []


def test_only_our_ping_answers_move_readiness(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    server = ms.Server(SCHEMA, str(ready))
    server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert server.take_outbox() == [
        (0.0, {"jsonrpc": "2.0", "id": "claude-print-ready-1", "method": "ping"})
    ]
    server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})  # listed again
    assert server.take_outbox() == [], "one round of pings per server"
    for other in (1, "claude-print-ready-3", None):
        server.handle({"jsonrpc": "2.0", "id": other, "result": {}})
    assert server.take_outbox() == [] and not ready.exists()
    server.handle({"jsonrpc": "2.0", "id": "claude-print-ready-2", "result": {}})
    assert ready.exists(), "the second answer makes it, whenever it comes"


def test_unknown_tool_is_an_error_result() -> None:
    result = ms.Server(SCHEMA).call("Other", {})
    assert result["isError"] is True


def test_runs_from_the_zipapp(tmp_path: Path, built_pyz: Path) -> None:
    """Straight from the archive (zipimport): the package parent is the archive's
    site-packages, as `package_parent()` gives it when claude-print runs from there."""
    with zipfile.ZipFile(built_pyz) as archive:
        assert "site-packages/claude_print/mcp/mcp_structured.py" in archive.namelist()
    schema_path = tmp_path / "schema.json"
    schema_path.write_text(json.dumps(SCHEMA))
    argv = [sys.executable, "-S", "-c", ms.BOOT, f"{built_pyz}/site-packages", str(schema_path)]
    messages = [INIT, call(1, {"answer": "x"})]
    done = subprocess.run(
        argv,
        input=b"".join(json.dumps(m).encode() + b"\n" for m in messages),
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[1]["result"]["isError"] is True


def test_mcp_config_starts_this_server(tmp_path: Path) -> None:
    config = ms.mcp_config("/x/schema.json", "/x/ready")
    entry = config["mcpServers"][ms.SERVER_NAME]
    assert entry["type"] == "stdio" and entry["alwaysLoad"] is True
    assert entry["command"] == sys.executable
    assert entry["args"][:2] == ["-S", "-c"]
    assert entry["args"][3:] == [ms.package_parent(), "/x/schema.json", "/x/ready"]
    assert (Path(ms.package_parent()) / "claude_print" / "mcp" / "mcp_structured.py").exists()


def test_bad_schema_file_exits_2(tmp_path: Path) -> None:
    assert ms.main([str(tmp_path / "missing.json")]) == 2
    (tmp_path / "list.json").write_text("[1]")
    assert ms.main([str(tmp_path / "list.json")]) == 2
    assert ms.main([]) == 2


@pytest.mark.parametrize(
    "text, message",
    [
        ("{nope", "--json-schema is not valid JSON: "),
        ("[1]", "--json-schema must be a JSON object"),
        ('"x"', "--json-schema must be a JSON object"),
        (
            '{"type":"object","foo":1}',
            '--json-schema is not a valid JSON Schema: strict mode: unknown keyword: "foo"',
        ),
    ],
)
def test_schema_argument_errors_like_claude_p(text: str, message: str) -> None:
    with pytest.raises(schema_check.SchemaError) as caught:
        ms.parse_schema_argument(text)
    assert str(caught.value).startswith(message)


def test_empty_schema_argument_means_none() -> None:
    assert ms.parse_schema_argument("") is None
    assert ms.parse_schema_argument("{}") == {}


def uses(*items: Any) -> List[Dict[str, Any]]:
    return [{"id": i, "name": n, "input": v} for i, n, v in items]


def test_structured_result_is_the_last_accepted_call() -> None:
    tool_uses = uses(
        ("t1", ms.QUALIFIED_NAME, {"answer": "four"}),
        ("t2", "Bash", {"command": "ls"}),
        ("t3", ms.QUALIFIED_NAME, {"answer": 4}),
    )
    results = [
        {"tool_use_id": "t1", "is_error": True},
        {"tool_use_id": "t2", "is_error": False},
        {"tool_use_id": "t3", "is_error": False},
    ]
    assert ms.structured_result(tool_uses, results) == {"answer": 4}
    assert ms.failed_attempts(tool_uses, results) == 1
    assert ms.structured_result(tool_uses, results[:2]) is None, "t3 has no result yet"
    assert ms.structured_result(
        uses(("t", "StructuredOutput", {"a": 1})), [{"tool_use_id": "t", "is_error": False}]
    ) == {"a": 1}


def test_retries_message_per_release() -> None:
    last = "Output does not match required schema: /answer: must be integer"
    assert ms.retries_message(5, last) == (
        "Failed to provide valid structured output after 5 attempts \u2014 last "
        "StructuredOutput error: " + last
    )
    assert ms.retries_message(5, last, detailed=False) == (
        "Failed to provide valid structured output after 5 attempts"
    )


def test_max_attempts_honours_the_environment() -> None:
    assert ms.max_attempts({}) == 5
    assert ms.max_attempts({"MAX_STRUCTURED_OUTPUT_RETRIES": "2"}) == 2
    assert ms.max_attempts({"MAX_STRUCTURED_OUTPUT_RETRIES": "x"}) == 5


def test_lenient_schema_argument_as_2_1_197() -> None:
    assert ms.parse_schema_argument('{"type":"foo"}', strict=False) == {"type": "foo"}
    assert not ms.usable_schema({"type": "foo"})
    email = {"type": "object", "properties": {"d": {"type": "string", "format": "email"}}}
    assert ms.usable_schema(email) and not ms.usable_schema(email, formats_checked=True)


def test_structured_output_goes_where_the_release_puts_it() -> None:
    old = {"type": "result", "result": "x", "permission_denials": [], "terminal_reason": "c"}
    placed = ms.with_structured_output(old, {"a": 1}, (2, 1, 197))
    assert list(placed) == [
        "type",
        "result",
        "permission_denials",
        "structured_output",
        "terminal_reason",
    ]
    assert placed["result"] == '{"a":1}'
    new = {"permission_denials": [], "result": "x", "ttft_ms": 1}
    placed = ms.with_structured_output(new, {"a": 1}, (2, 1, 330))
    assert list(placed) == ["permission_denials", "result", "structured_output", "ttft_ms"]


def test_last_failure_is_the_last_rejected_structured_call_only() -> None:
    from claude_print.mcp.mcp_structured import QUALIFIED_NAME, last_failure

    def use(tool_id: str, name: str) -> Dict[str, Any]:
        block = {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
        return {"message": {"content": [block]}}

    def failed(tool_id: str, text: Any) -> Dict[str, Any]:
        block = {"type": "tool_result", "tool_use_id": tool_id, "is_error": True, "content": text}
        return {"message": {"content": [block]}}

    records = [
        use("t1", QUALIFIED_NAME),
        failed("t1", [{"type": "text", "text": "Output does not match: first"}]),
        use("t2", "Bash"),
        failed("t2", "Bash was denied"),
    ]
    assert last_failure(records) == "Output does not match: first"
    assert last_failure(records[2:]) is None
