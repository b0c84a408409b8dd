"""Reading the prompt's bytes from stdin or --input-file, bounded in time.

`claude -p`'s rule for stdin (2.1.197 and 2.1.331 alike, measured): when no byte has
come 3 s after the start it warns on stderr (STDIN_WARNING) and goes on without stdin;
once data comes it reads to the end. claude-print does the same, and the run's --timeout
bounds the rest (a writer that never closes, a FIFO as --input-file that no one opens):
the run fails with the timeout's exit code instead of waiting for ever.
"""

from __future__ import annotations

import os
import select
import stat
import sys
import time
from typing import BinaryIO, Optional

from claude_print.errors import EXIT_TIMEOUT, ClaudePrintError

FIRST_BYTE_WAIT = 3.0
STDIN_WARNING = (
    "Warning: no stdin data received in 3s, proceeding without it. If piping from a slow "
    "command, redirect stdin explicitly: < /dev/null to skip, or wait longer."
)
CHUNK = 65536


def read_stdin(stream: Optional[BinaryIO], limit: int, deadline: float) -> bytes:
    """Piped stdin, at most `limit` + 1 bytes; b"" when it is a TTY, closed, empty, or
    silent for FIRST_BYTE_WAIT (with `claude -p`'s warning)."""
    if stream is None:
        return b""
    try:
        fd = stream.fileno()
        if os.isatty(fd):
            return b""
    except (OSError, ValueError, AttributeError):
        return stream.read(limit + 1) or b"" if hasattr(stream, "read") else b""
    first = min(deadline, time.monotonic() + FIRST_BYTE_WAIT)
    if not _wait_readable(fd, first):
        if time.monotonic() >= deadline:
            raise _timed_out("stdin")
        print(STDIN_WARNING, file=sys.stderr, flush=True)
        return b""
    return _read_to_end(fd, limit, deadline, "stdin")


def read_file(path: str, limit: int, deadline: float) -> bytes:
    """--input-file's bytes, at most `limit` + 1; a FIFO waits for its writer until the
    deadline, never blocking in open()."""
    flags = os.O_RDONLY | os.O_CLOEXEC
    try:
        fifo = stat.S_ISFIFO(os.stat(path).st_mode)
        fd = os.open(path, flags | (os.O_NONBLOCK if fifo else 0))
    except OSError as exc:
        raise ClaudePrintError(f"--input-file {path}: {exc.strerror or exc}") from exc
    try:
        if fifo and not _wait_readable(fd, min(deadline, time.monotonic() + FIRST_BYTE_WAIT)):
            # Say what the run waits for: a FIFO no process has opened to write yet.
            print(
                f"claude-print: --input-file {path} is a FIFO no one has written to yet; "
                "waiting for a writer (--timeout bounds the wait)",
                file=sys.stderr,
                flush=True,
            )
        if fifo and not _wait_readable(fd, deadline):
            raise _timed_out(f"--input-file {path} (a FIFO no one wrote to)")
        return _read_to_end(fd, limit, deadline, f"--input-file {path}")
    except OSError as exc:
        raise ClaudePrintError(f"--input-file {path}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)


def _wait_readable(fd: int, until: float) -> bool:
    while True:
        left = until - time.monotonic()
        if left <= 0:
            return False
        try:
            ready, _, _ = select.select([fd], [], [], left)
        except InterruptedError:
            continue
        if ready:
            return True


def _read_to_end(fd: int, limit: int, deadline: float, what: str) -> bytes:
    data = bytearray()
    while len(data) <= limit:
        if not _wait_readable(fd, deadline):
            raise _timed_out(what)
        try:
            chunk = os.read(fd, CHUNK)
        except BlockingIOError:
            continue  # a FIFO's writer has not written yet
        if not chunk:
            break
        data += chunk
    return bytes(data[: limit + 1])


def _timed_out(what: str) -> ClaudePrintError:
    return ClaudePrintError(
        f"timed out reading the prompt from {what} (--timeout)", EXIT_TIMEOUT, "error_timeout"
    )
