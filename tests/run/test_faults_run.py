"""Fault injection (issue 4): unattended runs never hang and never leak. The run from
outside: a signal mid-turn or during the start, a reader of stdout that goes away, many
runs at once in one project, --verbose beside --trace.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from typing import Callable, Dict, List, Sequence

import pytest
from checks import signalled
from fake_api import FakeApiServer
from harness import RUN_TIMEOUT, Sandbox
from mock_runs import (
    HUNG,
    MOCK,
    ack,
    argv_log,
    check,
    err,
    json_out,
    run_mock,
    start_mock,
    submitted,
)


def wait_for(condition: Callable[[], bool], what: str, timeout: float = RUN_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout:g}s for {what}")
        time.sleep(0.02)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_signal_mid_turn(sandbox: Sandbox, signum: int) -> None:
    proc = start_mock(sandbox, ["--output-format", "json", "hi"], "slow:30")
    done = signalled(
        proc, lambda: wait_for(lambda: submitted(sandbox) == [b"hi"], "a prompt"), signum, HUNG
    )
    check(sandbox, done, 130, f"interrupted by {signal.Signals(signum).name}")
    obj = json_out(done)
    assert obj["is_error"] is True
    assert obj["subtype"] == "error_interrupted"


def test_sigterm_during_startup(sandbox: Sandbox) -> None:
    proc = start_mock(sandbox, ["hi"], "no_screen")
    done = signalled(
        proc, lambda: wait_for(argv_log(sandbox).exists, "the child"), signal.SIGTERM, HUNG
    )
    check(sandbox, done, 130, "interrupted by SIGTERM")


@pytest.mark.parametrize("fmt", ["text", "json", "stream-json"])
def test_stdout_closed_early(sandbox: Sandbox, fmt: str) -> None:
    """The reader of our stdout went away (`claude-print ... | head -c0`): no traceback."""
    proc = start_mock(sandbox, ["--output-format", fmt, "hi"])
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    try:
        stderr = proc.stderr.read()
        proc.wait(timeout=HUNG)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    done = subprocess.CompletedProcess(proc.args, proc.returncode, b"", stderr)
    check(sandbox, done, 0)
    assert stderr == b""
    assert submitted(sandbox) == [b"hi"]


def run_parallel(
    sandbox: Sandbox, prompts: Sequence[str], binary: str, env: Dict[str, str]
) -> List[subprocess.CompletedProcess[bytes]]:
    """Start every run at once (same project dir), then collect them all."""
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "claude_print",
                "--claude-binary",
                binary,
                "--output-format",
                "json",
                "--",
                prompt,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=sandbox.project,
            env=sandbox.env(**env),
        )
        for prompt in prompts
    ]
    results: Dict[int, subprocess.CompletedProcess[bytes]] = {}

    def collect(index: int, proc: subprocess.Popen[bytes]) -> None:
        try:
            out, stderr = proc.communicate(timeout=RUN_TIMEOUT * 2)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, stderr = proc.communicate()
        results[index] = subprocess.CompletedProcess(proc.args, proc.returncode, out, stderr)

    threads = [threading.Thread(target=collect, args=(i, p)) for i, p in enumerate(procs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [results[i] for i in range(len(procs))]


def check_parallel(
    sandbox: Sandbox,
    prompts: Sequence[str],
    done: List[subprocess.CompletedProcess[bytes]],
) -> None:
    session_ids = set()
    for prompt, proc in zip(prompts, done):
        assert proc.returncode == 0, f"exit {proc.returncode}\n{err(proc)}"
        assert "Traceback" not in err(proc)
        obj = json_out(proc)
        assert obj["result"] == ack(prompt), (prompt, obj["result"])
        session_ids.add(obj["session_id"])
    assert len(session_ids) == len(prompts)
    assert sandbox.leftovers() == []


def test_twenty_parallel_runs_against_the_mock(sandbox: Sandbox) -> None:
    prompts = [f"parallel prompt number {n} " + "x" * n for n in range(20)]
    done = run_parallel(sandbox, prompts, MOCK, {"MOCK_CLAUDE_SCENARIO": "ok"})
    check_parallel(sandbox, prompts, done)


@pytest.mark.e2e
@pytest.mark.slow  # eight TUIs at once
def test_eight_parallel_runs_against_the_real_tui(
    real_claude: str, fake_api: FakeApiServer, sandbox: Sandbox
) -> None:
    prompts = [f"real parallel prompt {n}: " + "y" * n for n in range(8)]
    done = run_parallel(sandbox, prompts, real_claude, {})
    check_parallel(sandbox, prompts, done)
    for prompt in prompts:
        assert fake_api.last_prompt_with(prompt) == prompt


@pytest.mark.parametrize("fmt", ["stream-json", "json", "text"])
def test_verbose_adds_nothing_of_claude_print_s_to_stderr(sandbox: Sandbox, fmt: str) -> None:
    """`claude -p --output-format stream-json --verbose ... 2>&1 | jq` works: --verbose
    means what it means there; claude-print's own lines are --trace."""
    proc = run_mock(sandbox, ["--output-format", fmt, "--verbose", "hi"])
    check(sandbox, proc, 0)
    assert proc.stderr == b""
    if fmt == "stream-json":
        assert [json.loads(line)["type"] for line in proc.stdout.splitlines()][-1] == "result"
    traced = run_mock(sandbox, ["--output-format", fmt, "--trace", "hi"])
    check(sandbox, traced, 0)
    assert b"[claude-print +" in traced.stderr
