"""The Agent SDK's in-process MCP servers, for the TUI.

An SDK program can define tools in its own process (`create_sdk_mcp_server`); it passes
them as `--mcp-config '{"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}'` and
`claude -p` talks to them over the control protocol: each JSON-RPC message for server
`calc` goes to the caller as a `control_request` `{"subtype": "mcp_message",
"server_name": "calc", "message": {...}}`, and the caller's `control_response` carries
`{"mcp_response": {...}}`. The TUI knows no `sdk` servers ("No such tool available").

So claude-print puts a stdio MCP server of its own in their place, one per `sdk`
server: this module's `main`, which the TUI starts like any stdio server. It passes each
JSON-RPC line to claude-print through the relay, as an asking hook would (a private
payload file, a line on the relay FIFO, the answer on a reply FIFO); claude-print sends
it to the caller as `mcp_message` and hands back the `mcp_response`. A request gets its
answer on stdout; a notification (no id) gets none. Once the TUI has taken in the
server's tools (its `tools/list` answered, or an `initialize` without tools, then the
two ready pings of mcp_structured answered, or the stateless protocol's way: stateless.py)
the server creates its ready file, so the
first prompt waits for them like any gated server's (`mcp_wait`). The server name
travels in the payload, never in the FIFO line.

Run as `python3 -S -c <boot program> <package parent> <relay dir> <ready file> <server name>`.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import threading
from typing import IO, Any, Dict, List, Optional

from claude_print.mcp.mcp_structured import READY_SETTLE, ready_ping, ready_ping_answered
from claude_print.mcp.stateless import is_stateless, ready_once_read

SDK = "sdk"
# The relay FIFO's word for a message of a bridged server (its payload says which).
MCP_EVENT = "claude-print-mcp"
FIFO_NAME = "relay.fifo"  # relay.FIFO_NAME (the relay imports this module, not the reverse)
NO_ANSWER = -32603  # JSON-RPC internal error: claude-print or the caller gave no answer


def is_sdk(server: Dict[str, Any]) -> bool:
    return server.get("type") == SDK


def bridge_server(relay_dir: str, ready_path: str, name: str) -> Dict[str, Any]:
    """The stdio server config that stands in for the `sdk` server `name`."""
    from claude_print.mcp.mcp_structured import boot_program, package_parent

    boot = boot_program("claude_print.mcp.sdk_mcp")
    argv = [sys.executable, "-S", "-c", boot, package_parent(), relay_dir, ready_path, name]
    return {"type": "stdio", "command": argv[0], "args": argv[1:]}


def error_response(message: Dict[str, Any], text: str) -> Dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": message.get("id"),
        "error": {"code": NO_ANSWER, "message": text},
    }


def is_request(message: Dict[str, Any]) -> bool:
    return "method" in message and message.get("id") is not None


def ask(relay_dir: str, payload: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """One message to claude-print and its answer (None: no answer, or claude-print is
    gone). The same protocol as the relay's asking hooks."""
    fd, path = tempfile.mkstemp(prefix="event.", dir=relay_dir)  # 0600
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(payload, f, ensure_ascii=False)
    reply = path + ".reply"
    os.mkfifo(reply, 0o600)
    # Read-write, so this open cannot block and claude-print's writer always finds a reader.
    reply_fd = os.open(reply, os.O_RDWR | os.O_CLOEXEC)
    try:
        line = f"{MCP_EVENT} {os.path.basename(path)} ask\n".encode()
        fifo = os.open(os.path.join(relay_dir, FIFO_NAME), os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(fifo, line)  # one short write: atomic on a FIFO
        finally:
            os.close(fifo)
        answer = _read_line(reply_fd)
    finally:
        os.close(reply_fd)
        with contextlib.suppress(OSError):
            os.unlink(reply)
    try:
        found = json.loads(answer) if answer.strip() else None
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _read_line(fd: int) -> str:
    data = bytearray()
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    return data.decode("utf-8", "replace")


def lists_tools(message: Dict[str, Any], response: Dict[str, Any]) -> bool:
    """The TUI has the server's tools once this exchange is done."""
    method = message.get("method")
    if method == "tools/list":
        return True
    result = response.get("result")
    capabilities = result.get("capabilities") if isinstance(result, dict) else None
    return method == "initialize" and isinstance(capabilities, dict) and "tools" not in capabilities


class _Out:
    """stdout, which the answers and the second ready ping (from a timer) share."""

    def __init__(self, stdout: IO[bytes]) -> None:
        self.stdout = stdout
        self.lock = threading.Lock()

    def send(self, message: Dict[str, Any]) -> None:
        with self.lock, contextlib.suppress(BrokenPipeError, ValueError):
            self.stdout.write(json.dumps(message, ensure_ascii=False).encode() + b"\n")
            self.stdout.flush()


def serve(relay_dir: str, ready_path: str, name: str, stdin: IO[bytes], stdout: IO[bytes]) -> None:
    out = _Out(stdout)
    for line in stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue  # not JSON-RPC: the TUI's client never sends such a line
        if not isinstance(message, dict):
            continue
        answered = ready_ping_answered(message)  # ours: the caller never sees it
        if answered == 1:
            timer = threading.Timer(READY_SETTLE, out.send, (ready_ping(2),))
            timer.daemon = True
            timer.start()
            continue
        if answered == 2:
            _touch(ready_path)
            continue
        response = ask(relay_dir, {"server_name": name, "message": message})
        if not is_request(message):
            continue
        if response is None:
            response = error_response(message, f"claude-print: no answer from SDK server {name!r}")
        out.send(response)
        if lists_tools(message, response):
            if is_stateless(message):  # no pings there: the TUI's reading tells
                ready_once_read(stdout.fileno(), lambda: _touch(ready_path), READY_SETTLE)
            else:
                out.send(ready_ping(1))  # its answer: the TUI has read the tools


def _touch(path: str) -> None:
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600))


def main(argv: List[str]) -> int:
    if len(argv) != 3:
        sys.stderr.write("usage: sdk_mcp RELAY_DIR READY_FILE SERVER_NAME\n")
        return 2
    relay_dir, ready_path, name = argv
    try:
        with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
            serve(relay_dir, ready_path, name, sys.stdin.buffer, sys.stdout.buffer)
    except OSError as exc:  # the relay is gone: claude-print has ended
        sys.stderr.write(f"claude-print SDK MCP bridge {name!r}: {exc}\n")
        return 1
    finally:
        _touch(ready_path)  # an ended server holds no prompt back
    return 0
