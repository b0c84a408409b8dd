"""--mcp-config: reading the user's documents, gating their stdio servers, and the gate
itself, run as Claude Code runs it (a subprocess speaking JSON-RPC lines) in front of
tests/support/mcp_echo.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Optional

import pytest
from checks import eventually
from harness import SUPPORT

from claude_print.mcp import mcp_gate
from claude_print.mcp.mcp_structured import package_parent

ECHO = str(SUPPORT / "mcp_echo.py")


def rpc(method: str, ident: Any = None, **params: Any) -> bytes:
    message: Dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if ident is not None:
        message["id"] = ident
    return json.dumps(message).encode() + b"\n"


def test_reads_json_and_files_later_values_winning(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"a": {"command": "one"}, "b": {"command": "b"}}}))
    inline = json.dumps({"mcpServers": {"a": {"command": "two"}}})
    servers = mcp_gate.read_configs([str(path), inline])
    assert servers == {"a": {"command": "two"}, "b": {"command": "b"}}


@pytest.mark.parametrize(
    "value",
    ["/nonexistent/mcp.json", "{not json", '{"servers": {}}', '{"mcpServers": {"a": 1}}'],
)
def test_an_unreadable_value_leaves_every_value_to_the_tui(value: str) -> None:
    assert mcp_gate.read_configs(['{"mcpServers": {}}', value]) is None


def test_only_stdio_servers_are_gated() -> None:
    servers: Dict[str, Dict[str, Any]] = {
        "plain": {"command": "srv", "args": ["--port", 3], "env": {"K": "v"}},
        "typed": {"type": "stdio", "command": "srv2"},
        "web": {"type": "http", "url": "http://127.0.0.1:9/mcp"},
        "sdk": {"type": "sdk", "name": "in-process"},
    }
    config, gated = mcp_gate.gated_config(servers, lambda i: f"/relay/ready.{i}")
    out = config["mcpServers"]
    assert gated == 2
    assert out["web"] == servers["web"] and out["sdk"] == servers["sdk"]
    assert out["plain"]["command"] == sys.executable
    assert out["plain"]["env"] == {"K": "v"}  # the server's own environment stays
    assert out["plain"]["args"] == [
        "-S",
        "-c",
        mcp_gate.BOOT,
        package_parent(),
        "/relay/ready.0",
        "--",
        "srv",
        "--port",
        "3",
    ]
    assert out["typed"]["type"] == "stdio"
    assert out["typed"]["args"][-3:] == ["/relay/ready.1", "--", "srv2"]


def test_watcher_is_ready_once_tools_are_listed_across_split_lines() -> None:
    watcher = mcp_gate.Watcher()
    watcher.client(rpc("initialize", 0) + rpc("notifications/initialized"))
    assert not watcher.server(b'{"jsonrpc":"2.0","id":0,"result":{"capabilities":{"tools":{}}}}\n')
    watcher.client(rpc("tools/list", "t1")[:10])
    watcher.client(rpc("tools/list", "t1")[10:])
    assert not watcher.server(b'{"jsonrpc":"2.0","id":"t1","res')  # half a line
    assert watcher.server(b'ult":{"tools":[]}}\n')
    assert watcher.ready and not watcher.server(b'{"id":"t1","result":{}}\n')


def test_watcher_is_ready_for_a_server_without_tools() -> None:
    watcher = mcp_gate.Watcher()
    watcher.client(rpc("initialize", 1))
    assert not watcher.server(b'{"jsonrpc":"2.0","method":"notifications/message","params":{}}\n')
    assert watcher.server(b'{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"prompts":{}}}}\n')


def gate(ready: Path, *command: str) -> subprocess.Popen[bytes]:
    argv = mcp_gate.gate_command(str(ready), command[0], command[1:])
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def test_the_gate_passes_bytes_through_and_says_when_tools_are_listed(tmp_path: Path) -> None:
    ready, log = tmp_path / "ready", tmp_path / "calls.log"
    proc = gate(ready, sys.executable, ECHO, str(log))
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(rpc("initialize", 0, protocolVersion="2025-06-18"))
    proc.stdin.flush()
    first = json.loads(proc.stdout.readline())
    assert first["result"]["serverInfo"] == {"name": "echo", "version": "1"}
    assert not ready.exists()
    proc.stdin.write(rpc("tools/list", 1))
    proc.stdin.flush()
    assert [t["name"] for t in json.loads(proc.stdout.readline())["result"]["tools"]] == ["say"]
    # Then the gate asks whether the TUI has read that answer: a ping, then another
    # once the TUI has answered it; their answers (a result or an error alike) are the
    # gate's: the server never sees them, and only the second makes the ready file.
    first_ping = json.loads(proc.stdout.readline())
    assert first_ping == {"jsonrpc": "2.0", "id": "claude-print-ready-1", "method": "ping"}
    assert not ready.exists()
    proc.stdin.write(b'{"jsonrpc":"2.0","id":"claude-print-ready-1","result":{}}\n')
    proc.stdin.flush()
    second_ping = json.loads(proc.stdout.readline())
    assert second_ping == {"jsonrpc": "2.0", "id": "claude-print-ready-2", "method": "ping"}
    assert not ready.exists()
    proc.stdin.write(b'{"jsonrpc":"2.0","id":"claude-print-ready-2","error":{"code":-1}}\n')
    proc.stdin.flush()
    assert eventually(ready.exists), "no ready file after the second ping's answer"
    proc.stdin.write(rpc("tools/call", 2, name="say", arguments={"text": "zebra ü"}))
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    assert answer == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {"content": [{"type": "text", "text": "echo: zebra ü"}]},
    }
    proc.stdin.close()  # the TUI hangs up: the server's stdin closes, it ends, so does the gate
    assert proc.wait(timeout=30) == 0
    assert ready.exists() and log.read_text() == "zebra ü\n"


def test_a_stateless_session_gets_no_pings_and_is_ready_once_the_tui_has_read(
    tmp_path: Path,
) -> None:
    """MCP's 2026-07-28 protocol (2.1.332): each request names its version in `_meta`
    and the TUI answers no server requests. The gate sends no ping; the ready file comes
    once the TUI has read the tools/list answer."""
    from claude_print.mcp.stateless import PROTOCOL_META, unread

    ready = tmp_path / "ready"
    proc = gate(ready, sys.executable, ECHO, str(tmp_path / "calls.log"))
    assert proc.stdin is not None and proc.stdout is not None
    meta = {"_meta": {PROTOCOL_META: "2026-07-28"}}
    proc.stdin.write(rpc("tools/list", 1, **meta))
    proc.stdin.flush()
    out = proc.stdout.fileno()
    assert eventually(lambda: unread(out) > 0), "no tools/list answer"
    assert not ready.exists(), "ready before the TUI read the tools"
    assert [t["name"] for t in json.loads(proc.stdout.readline())["result"]["tools"]] == ["say"]
    assert eventually(ready.exists), "no ready file once the TUI had read the tools"
    proc.stdin.write(rpc("tools/call", 2, name="say", arguments={"text": "hi"}, **meta))
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 2  # no ping came before it
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0


def test_the_gate_exits_with_the_servers_status_and_releases_the_prompt(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    proc = gate(ready, "/bin/sh", "-c", "echo broken >&2; exit 3")
    assert proc.wait(timeout=30) == 3
    assert ready.exists()  # a dead server must not hold the prompt


def test_a_missing_command_is_127_with_its_name(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    argv = mcp_gate.gate_command(str(ready), "/nonexistent/server", [])
    proc = subprocess.run(argv, input=b"", capture_output=True, timeout=30)
    assert proc.returncode == 127, proc.stderr
    assert b"/nonexistent/server" in proc.stderr
    assert ready.exists()


def test_sigterm_reaches_the_server(tmp_path: Path) -> None:
    """Claude Code stops servers with a signal: the real server must get it, not be
    orphaned behind the gate."""
    ready, pidfile = tmp_path / "ready", tmp_path / "pid"
    script = f"echo $$ > {pidfile}; trap 'exit 7' TERM; while :; do sleep 0.05; done"
    proc = gate(ready, "/bin/sh", "-c", script)
    assert eventually(lambda: pidfile.exists() and pidfile.read_text().endswith("\n"))
    proc.terminate()
    assert proc.wait(timeout=30) == 7
    child = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)


def test_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert mcp_gate.main(["ready-only"]) == 2
    assert "usage: mcp_gate READY_FILE -- COMMAND" in capsys.readouterr().err


@pytest.mark.parametrize(
    "line, expected",
    [
        (b'{"jsonrpc":"2.0","id":"claude-print-ready-1","result":{}}', 1),
        (b'{"jsonrpc":"2.0","id":"claude-print-ready-2","error":{"code":-32601}}', 2),
        (b'{"jsonrpc":"2.0","id":"claude-print-ready-1","method":"ping"}', None),  # a request
        (b'{"jsonrpc":"2.0","id":"claude-print-ready-3","result":{}}', None),
        (b'{"jsonrpc":"2.0","id":7,"result":{"note":"claude-print-ready-1"}}', None),
        (b'{"jsonrpc":"2.0","id":"claude-print-ready-1"', None),  # not JSON
        (b'["claude-print-ready-1"]', None),
    ],
)
def test_only_the_tuis_answers_to_the_gates_pings_are_taken(
    line: bytes, expected: Optional[int]
) -> None:
    assert mcp_gate.answered_ping(line) == expected


def test_the_ping_goes_after_the_ready_line_never_inside_the_next(tmp_path: Path) -> None:
    """The server writes its tools/list answer and the start of another message in one
    chunk: the ping must come between them, each line whole."""
    ready = tmp_path / "ready"
    script = (
        "read line; printf '%s\\n%s' "
        '\'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}\' '
        '\'{"jsonrpc":"2.0","method":"notifications/mess\'; '
        "sleep 0.2; printf '%s\\n' 'age\"}'; read rest"
    )
    proc = gate(ready, "/bin/sh", "-c", script)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(rpc("tools/list", 1))
    proc.stdin.flush()
    lines = [json.loads(proc.stdout.readline()) for _ in range(3)]
    assert [m.get("id", m.get("method")) for m in lines] == [
        1,
        "claude-print-ready-1",
        "notifications/message",
    ]
    proc.stdin.close()
    proc.wait(timeout=30)
