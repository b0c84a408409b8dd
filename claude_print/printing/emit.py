"""The output side: what goes to stdout (results, events, control messages) and stderr
(traces, errors). The runner decides what to say; this module only says it."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable, Dict, List, Optional

from claude_print.errors import ClaudePrintError

Finish = Callable[[Dict[str, Any]], Dict[str, Any]]


class Trace:
    """--verbose: timestamped lines on stderr, relative to the start of the run."""

    def __init__(self, enabled: bool, started: float) -> None:
        self.enabled = enabled
        self.started = started

    def __call__(self, message: str) -> None:
        if self.enabled:
            elapsed = time.monotonic() - self.started
            to_stderr(f"[claude-print +{elapsed:7.3f}s] {message}\n")


def to_stderr(text: str) -> None:
    """A line on stderr; a closed pipe ends stderr quietly (the run goes on: a caller
    that stopped reading must not cut its cleanup short)."""
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except BrokenPipeError:
        _to_devnull(sys.stderr)


class Emitter:
    """Writes results to stdout; a closed pipe (SIGPIPE) ends output quietly.

    `json --verbose` collects every event and prints them as one JSON array at
    the end, as `claude -p --output-format json --verbose` does.
    """

    def __init__(self, output_format: str, verbose: bool = False, release: str = "") -> None:
        self.output_format = output_format
        # The Claude Code release whose `claude -p` shapes the events ("" = the newest).
        self.release = release
        self.collected: Optional[List[Dict[str, Any]]] = (
            [] if output_format == "json" and verbose else None
        )
        self.broken = False

    @property
    def fd(self) -> int:
        """stdout's descriptor (-1 when it has none, as under a test's capture)."""
        try:
            return sys.stdout.fileno()
        except (OSError, ValueError):
            return -1

    @property
    def streams_events(self) -> bool:
        return self.output_format == "stream-json" or self.collected is not None

    def line(self, text: str) -> None:
        if self.broken:
            return
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            self.broken = True
            _to_devnull(sys.stdout)

    def control(self, obj: Dict[str, Any]) -> None:
        """A control-protocol message (stream-json input): as it is, never conformed."""
        from claude_print.printing import output

        self.line(output.render_json(obj))

    def event(self, obj: Dict[str, Any], finish: Optional[Finish] = None) -> None:
        """`finish` adds what the captured shapes cannot know, after conforming."""
        from claude_print.printing import output

        obj = output.conform(obj, self.release, streamed=self.streams_events)
        if finish is not None:
            obj = finish(obj)
        if self.collected is not None:
            self.collected.append(obj)
        else:
            self.line(output.render_json(obj))

    def result(self, obj: Dict[str, Any], finish: Optional[Finish] = None) -> None:
        from claude_print.printing import output

        if self.output_format == "text":
            self.line(output.render_text(finish(obj) if finish else obj))
        else:
            self.event(obj, finish)
            if self.collected is not None:
                self.line(output.render_json(self.collected))
                self.collected.clear()


def report_failure(exc: ClaudePrintError, output_format: str, **fields: Any) -> None:
    """An error before or outside a session: message on stderr, json object on stdout."""
    from claude_print.printing import output

    to_stderr(f"claude-print: error: {exc.message}\n")
    if output_format in ("json", "stream-json"):
        obj = output.error_object(
            exc.subtype,
            exc.message,
            session_id=fields.get("session_id", ""),
            duration_ms=fields.get("duration_ms", 0),
            claude_version=fields.get("claude_version", ""),
        )
        Emitter(output_format, release=fields.get("claude_version", "")).event(obj)


def _to_devnull(stream: Any) -> None:
    """Keep later writes and the interpreter's final flush from raising again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, stream.fileno())
    except (OSError, ValueError):
        pass
    finally:
        os.close(devnull)
