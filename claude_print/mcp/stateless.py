"""MCP's stateless protocol (2026-07-28 on): a server's ready file without the pings.

Claude Code 2.1.332 speaks the 2026-07-28 protocol to a server that offers it: it asks
`server/discover` first, and every request then carries its protocol version in
`_meta`. There is no session then, so a server sends no requests of its own and the TUI
never answers the ready pings of mcp_structured (measured: a bridged Agent SDK server
waited out the 30 s cap on every run). For such a session "the TUI has taken in the
tools/list answer" is read off the connection instead: once the TUI has read every byte
written to it (the kernel's count of unread bytes is 0), and `settle` seconds later, the
server is ready.
"""

from __future__ import annotations

import array
import fcntl
import os
import stat
import termios
import threading
import time
from typing import Any, Callable, Dict

PROTOCOL_META = "io.modelcontextprotocol/protocolVersion"
POLL_SECS = 0.01
LIMIT_SECS = 30.0  # contract.MCP_WAIT_SECS: the prompt waits no longer anyway


def is_stateless(message: Dict[str, Any]) -> bool:
    """A request of the stateless protocol: it names its version in `_meta`."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and PROTOCOL_META in meta


def unread(fd: int) -> int:
    """Bytes written to `fd` (a pipe's or a socket's end) that its reader has not read."""
    request = termios.TIOCOUTQ if stat.S_ISSOCK(os.fstat(fd).st_mode) else termios.FIONREAD
    count = array.array("i", [0])
    fcntl.ioctl(fd, request, count, True)
    return count[0]


def ready_once_read(fd: int, ready: Callable[[], None], settle: float) -> None:
    """Call `ready` (on a thread of its own) `settle` seconds after the reader of `fd`
    has read all written to it; a connection that cannot be asked counts as read."""

    def wait() -> None:
        deadline = time.monotonic() + LIMIT_SECS
        try:
            while unread(fd) > 0 and time.monotonic() < deadline:
                time.sleep(POLL_SECS)  # no event tells that the peer has read
        except OSError:
            pass
        time.sleep(settle)
        ready()

    threading.Thread(target=wait, daemon=True).start()
