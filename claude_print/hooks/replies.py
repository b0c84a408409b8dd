"""Asking hooks' reply FIFOs: answering one, and letting every waiting one go.

An asking hook (relay.py) makes `<event file>.reply`, holds it open read-write, and
blocks reading one line from it. A hook that nobody answers outlives its run for good:
its own end of the FIFO never reports end of file. So a run that ends answers every
reply FIFO still in its relay dir, and a sweep does the same for a killed run's dir.
"""

from __future__ import annotations

import os

REPLY_SUFFIX = ".reply"


def send_reply(path: str, line: str) -> bool:
    """Write `line` to the reply FIFO at `path`; False when no hook holds it (gone)."""
    # The hook holds the FIFO open read-write from before it announced itself, so a
    # non-blocking open finds a reader; ENXIO/ENOENT mean the hook has gone.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        os.set_blocking(fd, True)
        data = memoryview((line + "\n").encode("utf-8"))
        while data:  # an MCP answer can be far over the pipe's buffer
            data = data[os.write(fd, data) :]
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def release_waiting(directory: str) -> int:
    """Answer every hook waiting in `directory` with an empty line (no decision: Claude
    Code's default), announced to the run or not; how many were waiting."""
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    return sum(
        send_reply(os.path.join(directory, name), "")
        for name in names
        if name.endswith(REPLY_SUFFIX)
    )
