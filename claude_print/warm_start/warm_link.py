"""The run's end of a warm hand-over: the keeper's messages, its output, our signals.

The keeper writes the run's output into two pipes the run made (not into the run's own
stdout and stderr), and the run copies them across while it waits. So the run decides
what its caller sees: once it has given the keeper up (its --timeout is over, or a signal
came before the keeper took the prompt), the keeper can print nothing more, and the run
prints its own result: one result per run, always.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import time
from typing import Any, Dict, List, Optional

from claude_print.run.signals import Interrupted, SignalPipe
from claude_print.warm_start import handover

COPY_CHUNK = 1 << 16
DRAIN_LIMIT = 2.0  # seconds to read the pipes to their end after the keeper's last message


class TimedOut(Exception):
    """The time given for the keeper's next message is over."""


class Link:
    """A connected keeper: `next_message` waits for its next message while copying its
    output pipes to ours and watching `signals`."""

    def __init__(self, sock: socket.socket, signals: SignalPipe) -> None:
        self.sock = sock
        self.signals = signals
        self.pipes: Dict[int, int] = {}  # read end -> our descriptor (1 or 2)

    def make_pipes(self) -> List[int]:
        """The write ends to hand the keeper (close them once sent)."""
        ends = []
        for target in (1, 2):
            read_end, write_end = os.pipe()
            os.set_inheritable(read_end, False)
            self.pipes[read_end] = target
            ends.append(write_end)
        return ends

    def next_message(self, until: float) -> Optional[Dict[str, Any]]:
        """The keeper's next message (None: it closed the connection); TimedOut at
        `until` (monotonic); Interrupted when a signal came."""
        while True:
            self.signals.check()
            left = until - time.monotonic()
            if left <= 0:
                raise TimedOut()
            readers = [self.sock.fileno(), self.signals.fd, *self.pipes]
            ready, _, _ = select.select(readers, [], [], left)
            if self.signals.fd in ready:
                self.signals.drain()
            for fd in ready:
                if fd in self.pipes:
                    self._copy(fd)
            if self.sock.fileno() in ready:
                self.sock.settimeout(max(1.0, until - time.monotonic()))
                message, fds = handover.receive(self.sock)
                for fd in fds:
                    os.close(fd)
                return message

    def waiting_message(self) -> Optional[Dict[str, Any]]:
        """A message the keeper has already sent, without waiting (None: none)."""
        ready, _, _ = select.select([self.sock.fileno()], [], [], 0)
        if not ready:
            return None
        with contextlib.suppress(OSError, ValueError):
            self.sock.settimeout(1.0)
            message, fds = handover.receive(self.sock)
            for fd in fds:
                os.close(fd)
            return message
        return None

    def drain(self) -> None:
        """Copy what the keeper wrote to the end (it let go of the pipes before its last
        message), at most DRAIN_LIMIT seconds: a process it left may still hold one."""
        limit = time.monotonic() + DRAIN_LIMIT
        while self.pipes:
            left = limit - time.monotonic()
            if left <= 0:
                return
            ready, _, _ = select.select(list(self.pipes), [], [], left)
            for fd in ready:
                self._copy(fd)

    def close(self) -> None:
        """Stop copying: whatever the keeper writes from now on goes nowhere."""
        for fd in list(self.pipes):
            self._drop(fd)

    def _copy(self, fd: int) -> None:
        try:
            data = os.read(fd, COPY_CHUNK)
        except OSError:
            data = b""
        if not data:
            self._drop(fd)
            return
        target = self.pipes[fd]
        view = memoryview(data)
        while view:
            try:
                written = os.write(target, view)
            except InterruptedError:
                continue
            except OSError:  # our caller stopped reading: the keeper's output goes nowhere
                return
            view = view[written:]

    def _drop(self, fd: int) -> None:
        del self.pipes[fd]
        os.close(fd)


__all__ = ["Interrupted", "Link", "TimedOut"]
