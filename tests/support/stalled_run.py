"""claude-print with its TUI stopped (SIGSTOP) for a while at a chosen moment: the
starved TUI of a loaded machine, made to order.

    python tests/support/stalled_run.py STALL_AT SECONDS -- <claude-print arguments>

STALL_AT is `frame:TEXT` (once the TUI's output first holds TEXT) or `key:NAME` (as
claude-print writes that key the first time: down, enter). The TUI is stopped right
then and continued SECONDS later, while claude-print runs on: keys it writes meanwhile
wait in the terminal, and the TUI's timers are all due at once when it resumes. The
stall is reported on stderr as a `[stall]` line.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Callable, Dict

from claude_print.command.cli import main
from claude_print.tui.pty_session import PtyChild

KEYS: Dict[str, bytes] = {"down": b"\x1b[B", "enter": b"\r"}


def stall(pid: int, seconds: float, what: str) -> None:
    os.kill(pid, signal.SIGSTOP)
    sys.stderr.write(f"[stall] the TUI stopped at {what} for {seconds:g}s\n")
    threading.Timer(seconds, os.kill, (pid, signal.SIGCONT)).start()


def install(at: str, seconds: float) -> None:
    kind, _, name = at.partition(":")
    done = threading.Event()
    if kind == "key":
        key = KEYS[name]
        write_some: Callable[[PtyChild, bytes], int] = PtyChild.write_some

        def stalled_write(self: PtyChild, data: bytes) -> int:
            if not done.is_set() and key in data:
                done.set()
                stall(self.pid, seconds, at)  # before the key: it waits for the TUI
            return write_some(self, data)

        PtyChild.write_some = stalled_write  # type: ignore[method-assign]
    elif kind == "frame":
        text = name.encode()
        read: Callable[[PtyChild], bytes] = PtyChild.read

        seen = bytearray()  # a frame comes in pieces: the text can span two reads

        def stalled_read(self: PtyChild) -> bytes:
            data = read(self)
            if not done.is_set():
                seen.extend(data)
                if text in seen:
                    done.set()
                    stall(self.pid, seconds, at)
            return data

        PtyChild.read = stalled_read  # type: ignore[method-assign]
    else:
        raise SystemExit(f"stalled_run: STALL_AT is frame:TEXT or key:NAME, not {at!r}")


if __name__ == "__main__":
    at, seconds, dashes, *rest = sys.argv[1:]
    assert dashes == "--", "usage: stalled_run.py STALL_AT SECONDS -- ARGS"
    install(at, float(seconds))
    sys.argv = [sys.argv[0], *rest]
    main()
