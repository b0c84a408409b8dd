"""--json-schema in the relay: the hooks that hold the prompt until claude-print's MCP
server is listed and end the turn once the server says so, and the server's stop file."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

from claude_print import contract
from claude_print.mcp_structured import Server
from claude_print.relay import MCP_READY_NAME, STOP_TURN_NAME, Relay


@pytest.fixture
def relay(tmp_path: Path) -> Iterator[Relay]:
    r = Relay(tmp_root=str(tmp_path), structured=True)
    yield r
    r.close()


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
    Path(relay.dir, MCP_READY_NAME).touch()
    started = time.monotonic()
    proc = run_hook(relay, "UserPromptSubmit", {"prompt": "hi"})
    assert (proc.returncode, proc.stdout) == (0, b""), proc.stderr
    # The settle time after the server is listed, and not the 15 s bound.
    assert contract.MCP_SETTLE_SECS <= time.monotonic() - started < 10


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
