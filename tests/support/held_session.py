"""A stream-json session with its stdin held open, as an Agent SDK client holds it: send a
message, wait for the events it brings (a result, a notification's turn), send the next.

    with HeldSession(argv, cwd, env, timeout=120) as session:
        session.send("Run it [[tool:Bash:...]]")
        session.until(lambda events: len(results(events)) == 1, "the first result")
        ...
    session.code, session.events, session.stderr
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

Event = Dict[str, Any]


def user_message(prompt: str) -> bytes:
    message = {"type": "user", "message": {"role": "user", "content": prompt}}
    return (json.dumps(message) + "\n").encode()


def results(events: Sequence[Event]) -> List[Event]:
    return [event for event in events if event.get("type") == "result"]


class HeldSession:
    def __init__(self, argv: Sequence[str], cwd: Path, env: Dict[str, str], timeout: float) -> None:
        self.deadline = time.monotonic() + timeout
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
        )
        self.events: List[Event] = []
        self.code: Optional[int] = None
        self.stderr = ""
        self._buffer = b""

    def __enter__(self) -> HeldSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, prompt: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(user_message(prompt))
        self.proc.stdin.flush()

    def until(self, done: Callable[[List[Event]], bool], what: str) -> None:
        """Read events until `done(events)` holds; fails naming `what` if the session
        ends or the deadline passes first."""
        assert self.proc.stdout is not None
        while not done(self.events):
            left = self.deadline - time.monotonic()
            ready = select.select([self.proc.stdout], [], [], max(0.0, left))[0]
            chunk = os.read(self.proc.stdout.fileno(), 65536) if ready else b""
            if not chunk:
                self.close()
                raise AssertionError(
                    f"no {what} (the session ended or timed out): {self.stderr[-2000:]}"
                )
            self._buffer += chunk
            *lines, self._buffer = self._buffer.split(b"\n")
            self.events += [json.loads(line) for line in lines if line.strip()]

    def close(self) -> None:
        """stdin closed, the rest read, the process reaped (killed at the deadline)."""
        if self.code is not None:
            return
        if self.proc.stdin is not None:
            self.proc.stdin.close()
            self.proc.stdin = None  # communicate() would flush it
        try:
            out, err = self.proc.communicate(timeout=max(1.0, self.deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        rest = self._buffer + out
        self.events += [json.loads(line) for line in rest.split(b"\n") if line.strip()]
        self._buffer = b""
        self.code = self.proc.returncode
        self.stderr = err.decode("utf-8", "replace")
