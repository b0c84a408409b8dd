"""End to end: a pool of warm TUIs (issue 30, fleets) on the real Claude Code. After
`--warm-up --warm-pool 3`, three runs started at the same moment are each adopted by a
keeper of their own, each prints its own answer, and the fake API sees each prompt once;
afterwards the runs have topped the pool back up to 3, no more. A pool of 1 is one keeper
as before: of two runs at once one is warm, the other cold, each prompt sent once.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from checks import assert_exit
from fake_api import FakeApiServer
from harness import RUN_TIMEOUT, Sandbox, run_claude_print, run_dir
from warm_helpers import sockets, stop_keepers, wait_until, warm_env

pytestmark = pytest.mark.e2e


def slot_locks(sandbox: Sandbox) -> List[Path]:
    return sorted((run_dir(sandbox) / f"claude-print-{os.getuid()}").glob("warm-*.lock"))


def pool_state(sandbox: Sandbox) -> str:
    """The runtime dir's slots as a failure message shows them: each file, a lock's state,
    a failed keeper's reason."""
    shown = []
    for path in sorted((run_dir(sandbox) / f"claude-print-{os.getuid()}").glob("warm-*")):
        with contextlib.suppress(OSError):
            if path.suffix == ".failed":  # whole: the screen the keeper's boot failed on
                shown.append(f"{path.name}:\n{path.read_text(errors='replace')}\n")
            else:
                body = path.read_bytes()[:300] if path.suffix == ".lock" else b""
                shown.append(f"{path.name} {body!r}")
    return "; ".join(shown) or "(no slot files)"


def ready_keepers(sandbox: Sandbox) -> int:
    ready = 0
    for path in sockets(sandbox):
        with contextlib.suppress(OSError):
            ready += path.with_suffix(".lock").read_bytes() == b"ready\n"
    return ready


def start(sandbox: Sandbox, binary: str, args: List[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "claude_print", "--claude-binary", binary, *args],
        cwd=sandbox.project,
        env=sandbox.env(**warm_env(sandbox)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def run_together(
    sandbox: Sandbox, binary: str, flags: List[str], prompts: List[str]
) -> List[Tuple[int, Dict[str, Any], str]]:
    """The prompts as --warm runs started one right after the other, none waiting for
    another; (exit code, JSON result, stderr) of each."""
    procs = [start(sandbox, binary, ["--warm", "--trace", *flags, p]) for p in prompts]
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=RUN_TIMEOUT)
        assert proc.returncode == 0, err.decode(errors="replace")[-3000:]
        done.append((proc.returncode, json.loads(out), err.decode(errors="replace")))
    return done


def turns(requests: List[Dict[str, Any]], prompt: str) -> int:
    """Requests of the model turn for `prompt` (side requests aside)."""
    return sum(1 for r in requests if not r["side"] and prompt in r["prompt"])


def ack(prompt: str) -> str:
    import hashlib

    return f"ACK {len(prompt)} {hashlib.sha256(prompt.encode()).hexdigest()[:12]}"


@pytest.mark.parametrize(
    "size", [pytest.param(1, marks=[pytest.mark.matrix, pytest.mark.between]), 3]
)
def test_runs_that_start_together_each_find_a_warm_tui(
    sandbox: Sandbox, fake_api: FakeApiServer, real_claude: str, size: int
) -> None:
    flags = ["--output-format", "json", "--warm-pool", str(size)]
    try:
        up = run_claude_print(
            sandbox, ["--warm-up", *flags], binary=real_claude, env=warm_env(sandbox)
        )
        assert_exit(up, 0)
        assert up.stdout == b""
        assert len(slot_locks(sandbox)) == size
        wait_until(
            f"{size} keepers at their input box",
            lambda: ready_keepers(sandbox) == size,
            detail=lambda: pool_state(sandbox),
        )
        # One run more than the pool holds when it holds one: that one goes cold, unless
        # the pool is topped up first.
        count = 3 if size == 3 else 2
        prompts = [f"Fleet worker {i} of {count}: what is in this pool?" for i in range(count)]
        seen = len(fake_api.requests)  # the server is the session's: earlier tests' too
        results = run_together(sandbox, real_claude, flags, prompts)
        requests = fake_api.requests[seen:]
        for prompt, (_, result, _) in zip(prompts, results):
            assert (result["type"], result["subtype"], result["is_error"]) == (
                "result",
                "success",
                False,
            )
            assert result["result"] == ack(prompt)
            assert turns(requests, prompt) == 1, [r["prompt"] for r in requests]
        warm = [err for _, _, err in results if "runs the prompt" in err]
        keepers = {re.search(r"keeper (\d+) runs the prompt", err).group(1) for err in warm}  # type: ignore[union-attr]
        # Never one keeper for two runs. Under load a pool of 1 may be topped up before the
        # second run looks (seen at load 15): then it runs warm on the new keeper.
        assert len(warm) == len(keepers) >= size, [err[-1500:] for _, _, err in results]
        for _, _, err in results:
            if "runs the prompt" not in err:  # the one a pool of 1 has no keeper for
                assert "no warm TUI for this key" in err, err[-3000:]
        # Each run topped the pool up before it ended: `size` slots claimed, no more.
        assert len(slot_locks(sandbox)) == size
        wait_until(
            f"{size} keepers ready again",
            lambda: ready_keepers(sandbox) == size,
            detail=lambda: pool_state(sandbox),
        )
        assert len(sockets(sandbox)) == len(slot_locks(sandbox)) == size
    finally:
        stop_keepers(sandbox)
