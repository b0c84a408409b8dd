"""`--mcp-config` for the TUI: the user's stdio MCP servers start through a gate that
tells claude-print when Claude Code has their tools.

`claude -p` connects every MCP server before its first request. The TUI connects them in
the background and sends the prompt without waiting (measured against tests/support/fake_api.py
with tests/support/mcp_echo.py): on 2.1.197 and 2.1.270 the turn's requests lack the server's
tools and a call fails with "No such tool available"; 2.1.331 lists them from the
second request on. So claude-print rewrites the `--mcp-config` documents into one of its
own (in the private relay dir): each stdio server runs as

    python3 -S -c BOOT <package parent> READY -- COMMAND ARGS...

`main` starts COMMAND with the server's own environment and directory, passes the bytes
both ways untouched, and creates READY once the TUI has taken in the server's answer to
its tools/list (or to initialize, without tools), or the server has ended. "Taken in"
as for --json-schema's server (mcp_structured): the gate pings the TUI after that
answer, waits `READY_SETTLE` once the TUI has answered, pings again, and creates READY
at the second answer; the TUI's answers to these two pings are the gate's, not passed
on. A wall-clock wait alone let a loaded TUI's first request go out without the tools.
A server that speaks MCP's stateless protocol gets no pings (stateless.py).
The relay's UserPromptSubmit hook holds the prompt until every ready file exists.

Servers of other transports (http, sse, ws) are passed on unchanged: claude-print cannot
watch them connect. A value that cannot be read is passed on unchanged too, so the TUI
reports it in its own words.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from claude_print.mcp.mcp_structured import (
    READY_PING,
    READY_SETTLE,
    boot_program,
    package_parent,
    ready_ping,
    ready_ping_answered,
)
from claude_print.mcp.stateless import is_stateless, ready_once_read

BOOT = boot_program("claude_print.mcp.mcp_gate")  # the gate's whole program
STDIO = "stdio"


def read_configs(values: Sequence[str]) -> Optional[Dict[str, Dict[str, Any]]]:
    """The servers of `--mcp-config` values (each a JSON document or a file holding one),
    later values winning on a name; None if any value cannot be read as Claude Code
    reads it: then the values go to the TUI as given, to fail there in its words."""
    servers: Dict[str, Dict[str, Any]] = {}
    for value in values:
        text = value
        if not value.lstrip().startswith("{"):
            try:
                with open(value, encoding="utf-8") as f:
                    text = f.read()
            except (OSError, UnicodeDecodeError):
                return None
        try:
            document = json.loads(text)
        except ValueError:
            return None
        found = document.get("mcpServers") if isinstance(document, dict) else None
        if not isinstance(found, dict) or not all(isinstance(s, dict) for s in found.values()):
            return None
        servers.update(found)
    return servers


def is_stdio(server: Dict[str, Any]) -> bool:
    return server.get("type", STDIO) == STDIO and isinstance(server.get("command"), str)


def gate_command(ready_path: str, command: str, args: Sequence[str]) -> List[str]:
    return [sys.executable, "-S", "-c", BOOT, package_parent(), ready_path, "--", command, *args]


def gated_config(
    servers: Dict[str, Dict[str, Any]],
    ready_path: Callable[[int], str],
    bridge_dir: Optional[str] = None,
) -> Tuple[Dict[str, Any], int]:
    """The `--mcp-config` document with every stdio server behind a gate, and how many
    there are; server `i` of them creates `ready_path(i)`. With `bridge_dir` (the relay
    of a run with an SDK caller), each `sdk` server becomes claude-print's bridge to the
    caller (`sdk_mcp`), which makes its ready file too."""
    from claude_print.mcp import sdk_mcp

    out: Dict[str, Any] = {}
    gated = 0
    for name, server in servers.items():
        if bridge_dir is not None and sdk_mcp.is_sdk(server):
            server = sdk_mcp.bridge_server(bridge_dir, ready_path(gated), name)
            gated += 1
        elif is_stdio(server):
            args = server.get("args") or []
            argv = gate_command(ready_path(gated), server["command"], [str(a) for a in args])
            server = {**server, "command": argv[0], "args": argv[1:]}
            gated += 1
        out[name] = server
    return {"mcpServers": out}, gated


class Watcher:
    """Reads the JSON-RPC lines going both ways; `ready` once the server has answered a
    tools/list, or answered initialize without a tools capability."""

    def __init__(self) -> None:
        self.ready = False
        self.stateless = False  # the TUI's tools/list was of the stateless protocol
        self._listing: Set[str] = set()
        self._initializing: Set[str] = set()
        self._pending = {"client": b"", "server": b""}

    def client(self, data: bytes) -> None:
        for message in self._messages("client", data):
            key = json.dumps(message.get("id"))
            if message.get("method") == "tools/list":
                self._listing.add(key)
                self.stateless = is_stateless(message)
            elif message.get("method") == "initialize":
                self._initializing.add(key)

    def server(self, data: bytes) -> bool:
        """True when these bytes made the server ready."""
        if self.ready:
            return False
        for message in self._messages("server", data):
            if "method" in message:
                continue  # a request or notification of the server's own
            key = json.dumps(message.get("id"))
            result = message.get("result")
            if key in self._listing or (
                key in self._initializing
                and isinstance(result, dict)
                and "tools" not in (result.get("capabilities") or {})
            ):
                self.ready = True
                return True
        return False

    def _messages(self, side: str, data: bytes) -> List[Dict[str, Any]]:
        if self.ready:
            return []
        *lines, self._pending[side] = (self._pending[side] + data).split(b"\n")
        found = []
        for line in lines:
            with contextlib.suppress(ValueError):
                message = json.loads(line)
                batch = message if isinstance(message, list) else [message]
                found += [m for m in batch if isinstance(m, dict)]
        return found


def _touch(path: str) -> None:
    with contextlib.suppress(OSError):
        open(path, "a").close()


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def ping(n: int) -> bytes:
    return json.dumps(ready_ping(n)).encode() + b"\n"


def answered_ping(line: bytes) -> Optional[int]:
    """1 or 2: `line` is the TUI's answer to that ready ping (mcp_structured)."""
    if READY_PING.encode() not in line:
        return None  # the usual case, without parsing the line
    with contextlib.suppress(ValueError):
        return ready_ping_answered(json.loads(line))
    return None


class ToTui:
    """The gate's stdout, which the server's bytes and the gate's pings share."""

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def write(self, data: bytes) -> None:
        with self.lock, contextlib.suppress(OSError):
            _write_all(1, data)


def _pump_client(child_stdin: int, watcher: Watcher, to_tui: ToTui, ready: str) -> None:
    """The TUI's messages to the server, but its answers to the gate's pings; the
    server's stdin closes when the TUI's does."""
    pending = b""
    with contextlib.suppress(OSError):
        while True:
            data = os.read(0, 65536)
            if not data:
                break
            watcher.client(data)
            *lines, pending = (pending + data).split(b"\n")
            out = []
            for line in lines:
                n = answered_ping(line)
                if n == 1:
                    timer = threading.Timer(READY_SETTLE, to_tui.write, (ping(2),))
                    timer.daemon = True
                    timer.start()
                elif n == 2:
                    _touch(ready)
                else:
                    out.append(line + b"\n")
            _write_all(child_stdin, b"".join(out))
    with contextlib.suppress(OSError):
        if pending:
            _write_all(child_stdin, pending)
        os.close(child_stdin)


def main(argv: List[str]) -> int:
    """``READY -- COMMAND [ARGS...]``: run COMMAND as the MCP server, create READY once
    the TUI has its tools (or it ended), and exit with its status."""
    if len(argv) < 3 or argv[1] != "--":
        sys.stderr.write("usage: mcp_gate READY_FILE -- COMMAND [ARGS...]\n")
        return 2
    ready, command = argv[0], argv[2:]
    # Claude Code stops a server with a signal: it is the real server's to handle. One
    # that comes before the server exists is passed on once it does.
    children: List[subprocess.Popen[bytes]] = []
    early: List[int] = []

    def forward(signum: int, _frame: object) -> None:
        if children:
            children[0].send_signal(signum)
        else:
            early.append(signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    try:
        child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    except OSError as exc:
        sys.stderr.write(f"{command[0]}: {exc.strerror or exc}\n")
        _touch(ready)
        return 127
    children.append(child)
    for early_signal in early:
        child.send_signal(early_signal)
    assert child.stdin is not None and child.stdout is not None
    watcher, to_tui = Watcher(), ToTui()
    pump = threading.Thread(
        target=_pump_client, args=(child.stdin.fileno(), watcher, to_tui, ready)
    )
    pump.daemon = True
    pump.start()
    out = child.stdout.fileno()
    with contextlib.suppress(OSError):
        while True:
            data = os.read(out, 65536)
            if not data:
                break
            became_ready = watcher.server(data)
            if became_ready and watcher.stateless:
                # No pings in the stateless protocol: the TUI's reading tells.
                to_tui.write(data)
                ready_once_read(1, lambda: _touch(ready), READY_SETTLE)
            elif became_ready:
                # After the line that made it ready (a whole line: the watcher saw it),
                # before any part of the next: the ping's answer says the TUI read it.
                cut = data.rindex(b"\n") + 1
                to_tui.write(data[:cut] + ping(1) + data[cut:])
            else:
                to_tui.write(data)
    _touch(ready)  # ended before it was ready: the prompt need not wait for it
    return child.wait()
