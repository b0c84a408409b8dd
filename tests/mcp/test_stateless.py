"""MCP's stateless protocol: when a server is ready without pings (mcp/stateless.py)."""

from __future__ import annotations

import os
import socket
import threading
from typing import Any, Dict

import pytest

from claude_print.mcp.stateless import PROTOCOL_META, is_stateless, ready_once_read, unread

WAIT = 20.0


@pytest.mark.parametrize(
    "message, stateless",
    [
        ({"method": "tools/list", "params": {"_meta": {PROTOCOL_META: "2026-07-28"}}}, True),
        ({"method": "tools/list", "params": {"_meta": {"progressToken": 1}}}, False),
        ({"method": "tools/list", "params": {}}, False),
        ({"method": "tools/list"}, False),
        ({"method": "tools/list", "params": []}, False),
    ],
)
def test_a_stateless_request_names_its_version_in_meta(
    message: Dict[str, Any], stateless: bool
) -> None:
    assert is_stateless(message) is stateless


@pytest.mark.parametrize("kind", ["pipe", "socketpair"])
@pytest.mark.parametrize("size", [1, 4096, 65536])
def test_unread_counts_until_the_reader_has_read_it_all(kind: str, size: int) -> None:
    if kind == "pipe":
        reader, writer = os.pipe()
    else:
        a, b = socket.socketpair()
        reader, writer = os.dup(b.fileno()), os.dup(a.fileno())
        a.close()
        b.close()
    try:
        assert unread(writer) == 0
        os.write(writer, b"x" * size)
        assert unread(writer) > 0
        left = size
        while left > 1:
            left -= len(os.read(reader, left - 1))
        assert unread(writer) > 0, "one byte is still unread"
        os.read(reader, 1)
        assert unread(writer) == 0
    finally:
        os.close(reader)
        os.close(writer)


def test_ready_comes_once_the_reader_has_read() -> None:
    reader, writer = os.pipe()
    done = threading.Event()
    try:
        os.write(writer, b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}\n')
        ready_once_read(writer, done.set, 0.0)
        assert not done.wait(0.2), "ready while the answer was still unread"
        os.read(reader, 1 << 16)
        assert done.wait(WAIT)
    finally:
        os.close(reader)
        os.close(writer)
