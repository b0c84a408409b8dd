#!/usr/bin/env python3
"""A tee wrapper to use as the Agent SDK's `cli_path`: runs SDK_TEE_REAL (the real CLI)
with the same argv, pipes stdin/stdout/stderr through and records, with timestamps
relative to its start, argv, the names of the CLAUDE* environment variables, every stdin
line, stdout line and stderr line, stdin EOF, signals and the exit status, as one JSON
file in the directory SDK_TEE_DIR (one file per process: <start-ns>-<pid>.json)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Dict, List

T0 = time.monotonic()


def now() -> float:
    return round(time.monotonic() - T0, 4)


def decode(line: bytes) -> Dict[str, Any]:
    text = line.decode("utf-8", "replace").rstrip("\n")
    try:
        return {"json": json.loads(text)}
    except ValueError:
        return {"raw": text}


def main() -> int:
    real = os.environ["SDK_TEE_REAL"]
    out_dir = os.environ.get("SDK_TEE_DIR", ".")
    log: Dict[str, Any] = {
        "argv": sys.argv[1:],
        "env_claude": sorted(k for k in os.environ if k.upper().startswith("CLAUDE")),
        "env_values": {
            k: os.environ[k]
            for k in sorted(os.environ)
            if k.startswith(("CLAUDE_CODE_ENTRYPOINT", "CLAUDE_AGENT_SDK", "CLAUDE_CODE_SDK"))
        },
        "cwd": os.getcwd(),
        "events": [],
    }
    events: List[Dict[str, Any]] = log["events"]
    lock = threading.Lock()

    def record(kind: str, **fields: Any) -> None:
        with lock:
            events.append({"t": now(), "dir": kind, **fields})

    child = subprocess.Popen(
        [real, *sys.argv[1:]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )

    def forward(signum: int, _frame: Any) -> None:
        record("signal", signal=signal.Signals(signum).name)
        with contextlib.suppress(ProcessLookupError):
            child.send_signal(signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)

    def pump_in() -> None:
        assert child.stdin is not None
        stdin = sys.stdin.buffer
        while True:
            line = stdin.readline()
            if not line:
                record("stdin_eof")
                with contextlib.suppress(OSError):
                    child.stdin.close()
                return
            record("in", **decode(line))
            try:
                child.stdin.write(line)
                child.stdin.flush()
            except OSError as exc:
                record("stdin_write_error", error=str(exc))

    def pump(src: Any, dst: Any, kind: str) -> None:
        while True:
            line = src.readline()
            if not line:
                record(kind + "_eof")
                return
            record(kind, **decode(line))
            try:
                dst.write(line)
                dst.flush()
            except OSError:
                pass

    threading.Thread(target=pump_in, daemon=True).start()
    readers = [
        threading.Thread(target=pump, args=(child.stdout, sys.stdout.buffer, "out")),
        threading.Thread(target=pump, args=(child.stderr, sys.stderr.buffer, "err")),
    ]
    for thread in readers:
        thread.start()
    code = child.wait()
    for thread in readers:
        thread.join(5)
    record("exit", code=code)
    log["exit_code"] = code
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{time.time_ns()}-{os.getpid()}.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(log, fh, indent=1)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
