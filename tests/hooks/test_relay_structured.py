"""--json-schema in the relay: the hooks that hold the prompt until claude-print's MCP
server is listed and end the turn once the server says so, and the server's stop file."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any, Dict

import pytest

from claude_print import contract
from claude_print.hooks.hook_settings import MCP_READY_PREFIX, MCP_SETTLED_NAME, STOP_TURN_NAME
from claude_print.hooks.relay import Relay
from claude_print.mcp.mcp_structured import Server

# The `relay` fixture's (tests/conftest.py).
RELAY_OPTIONS = {"structured": True}


def run_hook(
    relay: Relay, event: str, payload: Dict[str, Any]
) -> subprocess.CompletedProcess[bytes]:
    with open(relay.settings_path, encoding="utf-8") as f:
        command = json.load(f)["hooks"][event][0]["hooks"][0]["command"]
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=30,
    )


def test_post_tool_batch_stops_the_turn_once_the_server_says_so(relay: Relay) -> None:
    batch = {"hook_event_name": "PostToolBatch", "tool_calls": []}
    assert run_hook(relay, "PostToolBatch", batch).stdout == b"", "no stop before the server's"
    Path(relay.dir, STOP_TURN_NAME).touch()
    proc = run_hook(relay, "PostToolBatch", batch)
    assert (proc.returncode, json.loads(proc.stdout)) == (0, contract.STRUCTURED_STOP), proc.stderr


def test_the_prompt_waits_for_the_server_to_be_listed(relay: Relay) -> None:
    assert relay.mcp_waits == relay.mcp_pending() == 1
    Path(relay.dir, MCP_READY_PREFIX + "structured").touch()
    assert relay.mcp_pending() == 0
    started = time.monotonic()
    proc = run_hook(relay, "UserPromptSubmit", {"prompt": "hi"})
    assert (proc.returncode, proc.stdout) == (0, b""), proc.stderr
    # The settle time after the server is listed, and not the 30 s bound.
    assert contract.MCP_SETTLE_SECS <= time.monotonic() - started < 10
    assert Path(relay.dir, MCP_SETTLED_NAME).exists()


def test_the_prompt_waits_for_every_gated_server(tmp_path: Path) -> None:
    servers: Dict[str, Dict[str, Any]] = {
        "a": {"command": "a-server"},
        "b": {"type": "stdio", "command": "b-server", "args": ["-x"]},
        "web": {"type": "http", "url": "http://127.0.0.1:9/mcp"},  # not gated: not waited for
    }
    relay = Relay(tmp_root=str(tmp_path), structured=True, user_mcp=servers)
    try:
        assert relay.mcp_waits == 3
        with open(relay.settings_path, encoding="utf-8") as f:
            entry = json.load(f)["hooks"]["UserPromptSubmit"][0]["hooks"][0]
        assert entry["command"].endswith(" UserPromptSubmit wait-mcp 3")
        assert entry["timeout"] == contract.HOOK_TIMEOUT_SECS + contract.MCP_WAIT_SECS
        for name in ("structured", "0"):
            Path(relay.dir, MCP_READY_PREFIX + name).touch()
        assert relay.mcp_pending() == 1
        command = entry["command"]
        proc = subprocess.Popen(["/bin/sh", "-c", command], stdin=subprocess.PIPE)
        proc.stdin.write(b'{"prompt": "hi"}')  # type: ignore[union-attr]
        proc.stdin.close()  # type: ignore[union-attr]
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=1)  # still held: one server is not ready
        Path(relay.dir, MCP_READY_PREFIX + "1").touch()
        assert proc.wait(timeout=10) == 0
        assert relay.mcp_pending() == 0
    finally:
        relay.close()


def test_a_settled_session_does_not_wait_again(relay: Relay) -> None:
    """The runner held the first prompt itself (editor delivery): no ready file is
    looked for again, so later turns go straight in."""
    relay.mcp_settled()
    proc = run_hook(relay, "UserPromptSubmit", {"prompt": "hi"})  # 30 s if it waited
    assert (proc.returncode, proc.stdout) == (0, b""), proc.stderr


def test_server_creates_the_stop_file_on_success_or_the_last_rejection(tmp_path: Path) -> None:
    schema = {"type": "object", "required": ["a"]}
    stop = tmp_path / "stop"
    server = Server(schema, stop_path=str(stop), max_failures=2)
    assert server.call("StructuredOutput", {})["isError"] is True
    assert not stop.exists()
    assert server.call("StructuredOutput", {})["isError"] is True
    assert stop.exists(), "the second rejection is the last allowed one"
    stop.unlink()
    ok = Server(schema, stop_path=str(stop)).call("StructuredOutput", {"a": 1})
    assert "isError" not in ok and stop.exists()
