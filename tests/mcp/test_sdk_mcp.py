"""The SDK MCP bridge without Claude Code: the TUI's side is this test writing JSON-RPC
lines to the bridge process, claude-print's side a real Relay read and answered here."""

from __future__ import annotations

import json
import select
import subprocess
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from checks import eventually

from claude_print.hooks.relay import HookEvent, Relay
from claude_print.mcp import mcp_gate, sdk_mcp

NAME = "calc $(touch pwned) 'x' y"  # a caller's server name is untrusted text


def start_bridge(relay: Relay, ready: Path) -> subprocess.Popen[bytes]:
    server = sdk_mcp.bridge_server(relay.dir, str(ready), NAME)
    return subprocess.Popen(
        [server["command"], *server["args"]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=relay.dir,
    )


def next_event(relay: Relay, timeout: float = 10.0) -> HookEvent:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        select.select([relay.read_fd], [], [], deadline - time.monotonic())
        events = relay.read_events()
        if events:
            [event] = events
            return event
    raise AssertionError("no event from the bridge")


def send(proc: subprocess.Popen[bytes], message: Dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def read_reply(proc: subprocess.Popen[bytes]) -> Dict[str, Any]:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, "the bridge ended without answering"
    reply: Dict[str, Any] = json.loads(line)
    return reply


def exchange(
    relay: Relay,
    proc: subprocess.Popen[bytes],
    message: Dict[str, Any],
    answer: Optional[Dict[str, Any]],
) -> HookEvent:
    send(proc, message)
    event = next_event(relay)
    assert relay.answer(event, answer)
    return event


def test_requests_reach_claude_print_and_answers_come_back(relay: Relay, tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    proc = start_bridge(relay, ready)
    try:
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
        answer = {"jsonrpc": "2.0", "id": 0, "result": {"capabilities": {"tools": {}}}}
        event = exchange(relay, proc, init, answer)
        assert event.name == sdk_mcp.MCP_EVENT and event.reply is not None
        assert event.payload == {"server_name": NAME, "message": init}
        assert read_reply(proc) == answer
        assert not ready.exists()  # it has tools: ready once they are listed
        exchange(relay, proc, {"jsonrpc": "2.0", "method": "notifications/initialized"}, {})
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        tools = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "add"}]}}
        exchange(relay, proc, listing, tools)
        assert read_reply(proc) == tools  # the notification got no line of its own
        # Then the two ready pings (mcp_structured): their answers are the bridge's,
        # never the caller's (no relay event), and only the second makes the file.
        assert read_reply(proc) == {
            "jsonrpc": "2.0",
            "id": "claude-print-ready-1",
            "method": "ping",
        }
        assert not ready.exists()
        send(proc, {"jsonrpc": "2.0", "id": "claude-print-ready-1", "result": {}})
        assert read_reply(proc) == {
            "jsonrpc": "2.0",
            "id": "claude-print-ready-2",
            "method": "ping",
        }
        assert not ready.exists()
        send(proc, {"jsonrpc": "2.0", "id": "claude-print-ready-2", "error": {"code": -1}})
        assert eventually(ready.exists), "no ready file after the second ping's answer"
        assert relay.read_events() == []
        big = {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {"content": [{"type": "text", "text": "x" * 300_000}]},
        }
        exchange(relay, proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}, big)
        assert read_reply(proc) == big  # far over a pipe's buffer
    finally:
        proc.kill()
        proc.wait()
    assert not (tmp_path / "pwned").exists()


def test_a_stateless_session_is_ready_once_the_tui_has_read_the_tools(
    relay: Relay, tmp_path: Path
) -> None:
    """2.1.332 speaks MCP's stateless protocol to an SDK server that offers it and never
    answers a server's ping (every SDK MCP run waited out the 30 s cap): no ping, and
    the ready file once the TUI has read the tools/list answer."""
    from claude_print.mcp.stateless import PROTOCOL_META, unread

    ready = tmp_path / "ready"
    proc = start_bridge(relay, ready)
    assert proc.stdout is not None
    try:
        meta = {"_meta": {PROTOCOL_META: "2026-07-28"}}
        listing = {"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": meta}
        tools = {"jsonrpc": "2.0", "id": 0, "result": {"tools": [{"name": "add"}]}}
        exchange(relay, proc, listing, tools)
        out = proc.stdout.fileno()
        assert eventually(lambda: unread(out) > 0)
        assert not ready.exists(), "ready before the TUI read the tools"
        assert read_reply(proc) == tools
        assert eventually(ready.exists), "no ready file once the TUI had read the tools"
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": meta}
        answer = {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}
        exchange(relay, proc, call, answer)
        assert read_reply(proc) == answer  # no ping came before it
    finally:
        proc.kill()
        proc.wait()


def test_no_answer_is_a_json_rpc_error_not_a_hang(relay: Relay, tmp_path: Path) -> None:
    proc = start_bridge(relay, tmp_path / "ready")
    try:
        exchange(relay, proc, {"jsonrpc": "2.0", "id": 7, "method": "tools/call"}, None)
        reply = read_reply(proc)
        assert reply["id"] == 7 and reply["error"]["code"] == sdk_mcp.NO_ANSWER
        assert NAME in reply["error"]["message"]
    finally:
        proc.kill()
        proc.wait()


def test_claude_print_gone_ends_the_bridge_and_frees_the_prompt(
    relay: Relay, tmp_path: Path
) -> None:
    ready = tmp_path / "ready"
    proc = start_bridge(relay, ready)
    send(proc, {"jsonrpc": "2.0", "id": 0, "method": "initialize"})
    next_event(relay)
    relay.close()  # answers every waiting run with nothing, removes the FIFO
    assert "error" in read_reply(proc)
    send(proc, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert proc.wait(timeout=10) == 1  # nobody to relay to: the TUI sees the server end
    assert ready.exists()  # and a prompt still waiting for it goes on


def test_only_sdk_servers_are_bridged_and_only_with_a_caller(tmp_path: Path) -> None:
    servers: Dict[str, Dict[str, Any]] = {
        "calc": {"type": "sdk", "name": "calc"},
        "files": {"command": "/bin/cat", "args": []},
        "web": {"type": "http", "url": "http://127.0.0.1:1/"},
    }
    ready: List[str] = []

    def ready_path(i: int) -> str:
        ready.append(f"r{i}")
        return f"r{i}"

    config, waits = mcp_gate.gated_config(servers, ready_path, bridge_dir="/relay")
    out = config["mcpServers"]
    assert waits == 2 and ready == ["r0", "r1"]
    assert out["calc"]["type"] == "stdio" and out["calc"]["args"][-3:] == ["/relay", "r0", "calc"]
    assert out["web"] == servers["web"]
    config, waits = mcp_gate.gated_config(servers, lambda i: f"r{i}")
    assert config["mcpServers"]["calc"] == servers["calc"] and waits == 1
