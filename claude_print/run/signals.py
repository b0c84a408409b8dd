"""SIGINT, SIGTERM and SIGHUP as an event the pump can select on.

The handler only notes the first signal; `signal.set_wakeup_fd` writes a byte to a pipe
whose read end is in the pump's `select`, so a signal that lands while it waits wakes it
at once (the asciinema 2.x way). The pump then raises `Interrupted`, and the run reports
`claude -p`'s interrupted error after passing the signal on to Claude Code.
"""

from __future__ import annotations

import os
import signal
from types import FrameType
from typing import Any, Dict, Optional

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class SignalPipe:
    def __init__(self) -> None:
        self.fd = -1  # the read end, for select
        self._write_fd = -1
        self.caught: Optional[int] = None
        self._old_handlers: Dict[int, Any] = {}
        self._old_wakeup = -1

    def install(self) -> None:
        self.fd, self._write_fd = os.pipe()
        for fd in (self.fd, self._write_fd):
            os.set_blocking(fd, False)
            os.set_inheritable(fd, False)
        self._old_wakeup = signal.set_wakeup_fd(self._write_fd)
        for signum in SIGNALS:
            self._old_handlers[signum] = signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame: Optional[FrameType]) -> None:
        if self.caught is None:
            self.caught = signum

    def check(self) -> None:
        """Raise `Interrupted` once a signal came."""
        if self.caught is not None:
            raise Interrupted(self.caught)

    def drain(self) -> None:
        try:
            while os.read(self.fd, 512):
                pass
        except BlockingIOError:
            pass

    def restore(self) -> None:
        for signum, handler in self._old_handlers.items():
            signal.signal(signum, handler)
        self._old_handlers.clear()
        if self.fd >= 0:
            signal.set_wakeup_fd(self._old_wakeup)
            os.close(self.fd)
            os.close(self._write_fd)
            self.fd = self._write_fd = -1
