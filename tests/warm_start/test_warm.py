"""Warm start (issue 23) against mock_claude: a run adopts a TUI a keeper started, or
runs cold; nothing of either is left behind; the keeper goes after its idle lifetime,
when its caller dies, and when it is killed itself.

The requests a warm run sends compared with a cold run's, on the real Claude Code, are in
test_e2e_warm.py; the fingerprint's parts one by one in test_fingerprint.py.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
from checks import assert_exit
from harness import RUN_TIMEOUT, Sandbox, run_claude_print, run_dir
from warm_helpers import (
    MOCK,
    keeper_pid,
    run_warm,
    sockets,
    start_warm,
    stop_keepers,
    wait_until,
    warm_env,
    was_warm,
)


def warm_up(
    sandbox: Sandbox, env: Optional[Dict[str, str]] = None, args: Tuple[str, ...] = ()
) -> Path:
    """`claude-print --warm-up` (exit 0, nothing printed); its keeper's socket."""
    done = run_claude_print(
        sandbox, ["--warm-up", *args], binary=MOCK, env=warm_env(sandbox, **(env or {}))
    )
    assert_exit(done, 0)
    assert done.stdout == b""
    return wait_for_keeper(sandbox)


def wait_for_keeper(sandbox: Sandbox) -> Path:
    wait_until(f"a keeper's socket in {run_dir(sandbox)}", lambda: bool(sockets(sandbox)))
    return sockets(sandbox)[0]


def wait_for_ready(sandbox: Sandbox) -> Path:
    """A keeper whose TUI waits at its input box: what it read at its start is read."""
    path = wait_for_keeper(sandbox)
    lock = path.with_suffix(".lock")
    wait_until(f"{lock} to say ready", lambda: lock.read_bytes() == b"ready\n")
    return path


def test_second_run_adopts_the_keeper_and_prints_the_same(warm_sandbox: Sandbox) -> None:
    first = run_warm(warm_sandbox, ["What is 2+2?"])
    assert_exit(first, 0)
    assert not was_warm(first)
    assert first.stdout == b"The answer is 4.\n"
    wait_for_keeper(warm_sandbox)
    second = run_warm(warm_sandbox, ["What is 2+2?"])
    assert_exit(second, 0)
    assert was_warm(second), second.stderr.decode()
    assert second.stdout == first.stdout
    # The keeper it used is gone; the run left a new one for the next run.
    wait_for_keeper(warm_sandbox)
    third = run_warm(warm_sandbox, ["--output-format", "json", "What is 2+2?"])
    assert_exit(third, 0)
    assert not was_warm(third)  # another key: --output-format is one of its flags
    assert json.loads(third.stdout)["result"] == "The answer is 4."


def test_stdin_prompt_runs_warm(warm_sandbox: Sandbox) -> None:
    assert_exit(run_warm(warm_sandbox, ["hi"]), 0)
    wait_for_keeper(warm_sandbox)
    prompt = "line one\nline two\n"
    proc = run_warm(warm_sandbox, [], stdin=prompt.encode())
    assert_exit(proc, 0)
    assert was_warm(proc)
    import hashlib

    digest = hashlib.sha256(prompt.rstrip("\n").encode()).hexdigest()[:12]
    assert proc.stdout.decode().split() == ["ACK", str(len(prompt.rstrip("\n"))), digest]


def test_a_changed_claude_md_gives_a_cold_run(warm_sandbox: Sandbox) -> None:
    assert_exit(run_warm(warm_sandbox, ["hi"]), 0)
    wait_for_ready(warm_sandbox)
    (warm_sandbox.project / "CLAUDE.md").write_text("Answer in French.\n")
    proc = run_warm(warm_sandbox, ["What is 2+2?"])
    assert_exit(proc, 0)
    assert not was_warm(proc)
    said = f"declined (what the TUI read at its start has changed since: {warm_sandbox.project}"
    assert f"{said}/CLAUDE.md)".encode() in proc.stderr, proc.stderr.decode()[-2000:]
    assert proc.stdout == b"The answer is 4.\n"


def test_exit_codes_pass_through(warm_sandbox: Sandbox) -> None:
    env = {"MOCK_CLAUDE_SCENARIO": "api_error"}
    assert_exit(run_warm(warm_sandbox, ["hi"], env=env), 1)
    wait_for_keeper(warm_sandbox)  # an API error is the model's answer: a keeper is left
    proc = run_warm(warm_sandbox, ["hi again"], env=env)
    assert_exit(proc, 1)
    assert was_warm(proc)
    assert proc.stdout.startswith(b"API Error: 400")


def test_timeout_counts_from_the_runs_start(warm_sandbox: Sandbox) -> None:
    env = {"MOCK_CLAUDE_SCENARIO": "hang"}
    assert_exit(run_warm(warm_sandbox, ["--timeout", "3", "hi"], env=env), 124)
    assert not sockets(warm_sandbox)  # a failed run leaves no keeper
    warm_up(warm_sandbox, env)
    proc = run_warm(warm_sandbox, ["--timeout", "3", "hi"], env=env)
    assert_exit(proc, 124)
    assert was_warm(proc)
    assert b"timed out after 3s" in proc.stderr


def test_warm_up_then_run(warm_sandbox: Sandbox) -> None:
    warm_up(warm_sandbox)
    proc = run_claude_print(
        warm_sandbox, ["--warm", "--trace", "What is 2+2?"], binary=MOCK, env=warm_env(warm_sandbox)
    )
    assert_exit(proc, 0)
    assert was_warm(proc)


@pytest.mark.parametrize(
    "args, reason",
    [
        (["--input-format", "stream-json", "--output-format", "stream-json"], b"stream-json input"),
        (["--session-id", "9c2f6a6e-3f55-4b1c-9d8e-2f1f5a9b7c11"], b"a session of the caller"),
        (["--prompt-via", "paste"], b"--prompt-via paste"),
    ],
)
def test_what_cannot_run_warm_runs_cold_and_leaves_no_keeper(
    warm_sandbox: Sandbox, args: List[str], reason: bytes
) -> None:
    stdin = None
    if "stream-json" in args:
        message = {"type": "user", "message": {"role": "user", "content": "What is 2+2?"}}
        stdin = (json.dumps(message) + "\n").encode()
        args = [*args, "--verbose"]
    else:
        args = [*args, "What is 2+2?"]
    proc = run_warm(warm_sandbox, args, stdin=stdin)
    assert_exit(proc, 0)
    assert b"warm start: cold run (" + reason in proc.stderr, proc.stderr.decode()
    assert not sockets(warm_sandbox)


def test_a_session_start_hook_keeps_runs_cold(warm_sandbox: Sandbox) -> None:
    """It would run when the keeper starts, not when the prompt comes."""
    settings = warm_sandbox.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    hook = {"hooks": [{"type": "command", "command": "true"}]}
    settings.write_text(json.dumps({"hooks": {"SessionStart": [hook]}}))
    proc = run_warm(warm_sandbox, ["What is 2+2?"])
    assert_exit(proc, 0)
    assert b"a SessionStart or SessionEnd hook" in proc.stderr
    assert not sockets(warm_sandbox)


def test_keeper_leaves_after_its_idle_lifetime(warm_sandbox: Sandbox) -> None:
    config = warm_sandbox.home / ".config" / "claude-print"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("[defaults]\nwarm = true\nwarm_idle_secs = 1\n")
    proc = run_claude_print(warm_sandbox, ["hi"], binary=MOCK, env=warm_env(warm_sandbox))
    assert_exit(proc, 0)
    wait_for_keeper(warm_sandbox)
    wait_until(
        "the idle keeper and its TUI gone",
        lambda: not sockets(warm_sandbox) and not warm_sandbox.leftovers(),
    )
    assert list((run_dir(warm_sandbox) / f"claude-print-{os.getuid()}").iterdir()) == []


def test_a_killed_keeper_takes_its_tui_along(warm_sandbox: Sandbox) -> None:
    assert_exit(run_warm(warm_sandbox, ["hi"]), 0)
    path = wait_for_keeper(warm_sandbox)
    wait_for_ready(warm_sandbox)
    assert list(warm_sandbox.tmp.glob("claude-print-*")) != []  # the keeper's relay dir
    os.kill(keeper_pid(path), signal.SIGKILL)
    # The TUI loses its terminal and exits; the keeper's watchdog removes its relay dir
    # (the hooks' settings, the FIFO) and exits too, with no later run to sweep it.
    wait_until(
        "nothing left",
        lambda: warm_sandbox.leftovers() == [],
        detail=lambda: str(warm_sandbox.leftovers()),
    )
    proc = run_warm(warm_sandbox, ["What is 2+2?"])
    assert_exit(proc, 0)
    assert b"no warm TUI for this key" in proc.stderr
    assert proc.stdout == b"The answer is 4.\n"


def test_a_caller_killed_mid_run_ends_the_keepers_run(warm_sandbox: Sandbox) -> None:
    env = {"MOCK_CLAUDE_SCENARIO": "hang"}
    assert_exit(run_warm(warm_sandbox, ["--timeout", "2", "hi"], env=env), 124)
    keeper = keeper_pid(warm_up(warm_sandbox, env))
    caller = start_warm(warm_sandbox, ["--timeout", "60", "hi"], env)
    assert caller.stderr is not None
    line = b""
    while b"runs the prompt" not in line:
        line = caller.stderr.readline()
        assert line, "the caller ended before the keeper took its prompt"
    caller.kill()
    caller.communicate(timeout=RUN_TIMEOUT)
    wait_until("the keeper gone", lambda: not os.path.exists(f"/proc/{keeper}"))
    # The keeper the caller started as its prompt went in waits for the next run, as
    # after any warm run; stopped, nothing of either is left.
    stop_keepers(warm_sandbox)


def test_parallel_warm_and_cold_runs_all_answer(warm_sandbox: Sandbox) -> None:
    assert_exit(run_warm(warm_sandbox, ["hi"]), 0)
    wait_for_keeper(warm_sandbox)
    procs = [start_warm(warm_sandbox, [f"What is 2+2? ({i})"]) for i in range(12)]
    outs = [p.communicate(timeout=RUN_TIMEOUT * 2) for p in procs]
    for proc, (out, err) in zip(procs, outs):
        assert proc.returncode == 0, err.decode()[-2000:]
        assert out == b"The answer is 4.\n", out
    # One took the keeper; a run that ended early may have left one for a later starter.
    assert sum(b"runs the prompt" in err for _, err in outs) >= 1


@pytest.mark.parametrize("source", ["argv", "stdin", "input-file"])
def test_warm_up_serves_the_next_run_at_once(warm_sandbox: Sandbox, source: str) -> None:
    """The README's lines, one right after the other: `--warm-up` returns once its keeper
    listens, and the key does not depend on how the prompt will come."""
    done = run_claude_print(
        warm_sandbox,
        ["--warm-up", "--output-format", "json"],
        binary=MOCK,
        env=warm_env(warm_sandbox),
    )
    assert_exit(done, 0)
    assert done.stdout == b""
    args, stdin = ["--output-format", "json"], None
    if source == "argv":
        args.append("What is 2+2?")
    elif source == "stdin":
        stdin = b"What is 2+2?\n"
    else:
        (warm_sandbox.project / "task.txt").write_text("What is 2+2?\n")
        args += ["--input-file", "task.txt"]
    for _ in range(2):  # and the run after it finds the keeper this one left
        proc = run_warm(warm_sandbox, args, stdin=stdin)
        assert_exit(proc, 0)
        assert was_warm(proc), proc.stderr.decode()[-2000:]
        assert json.loads(proc.stdout)["result"] == "The answer is 4."


def test_a_keeper_that_cannot_answer_in_time_is_given_up(warm_sandbox: Sandbox) -> None:
    """One result per run: a keeper stuck past the run's --timeout (here stopped with
    SIGSTOP) is stopped, the run reports error_timeout (124), and nothing the keeper
    writes later reaches the run's output. Promptly: the keeper gets a second after the
    run's 8 s to report its own timeout, so the run ends well within 23 s of its start
    (a 30 s grace would end it after 38 s). The 8 s leave a loaded machine time to hand
    the prompt over: a keeper that has not taken it by the deadline is a timeout too,
    but not the one this test is about."""
    env = {"MOCK_CLAUDE_SCENARIO": "hang"}
    keeper = keeper_pid(warm_up(warm_sandbox, env, ("--output-format", "json")))
    started = time.monotonic()
    caller = start_warm(warm_sandbox, ["--output-format", "json", "--timeout", "8", "hi"], env)
    assert caller.stderr is not None and caller.stdout is not None
    said = b""
    while b"runs the prompt" not in said:
        line = caller.stderr.readline()
        assert line, f"the caller ended before the keeper took its prompt:\n{said.decode()}"
        said += line
    os.kill(keeper, signal.SIGSTOP)
    try:
        out, err = caller.communicate(timeout=max(0.0, started + 23.0 - time.monotonic()))
    except subprocess.TimeoutExpired:
        caller.kill()
        caller.communicate()
        pytest.fail(f"the run with --timeout 8 still ran {time.monotonic() - started:.1f}s on")
    finally:
        os.kill(keeper, signal.SIGCONT)
    assert caller.returncode == 124, err.decode()[-2000:]
    [result] = [json.loads(x) for x in out.splitlines()]
    assert (result["type"], result["subtype"], result["is_error"]) == (
        "result",
        "error_timeout",
        True,
    )
    assert result["errors"] == ["timed out after 8s"]
    assert result["session_id"]  # the keeper's session, as a cold run reports its own
    assert b"claude-print: error: timed out after 8s" in err
    wait_until("the keeper gone", lambda: not os.path.exists(f"/proc/{keeper}"))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_before_the_keeper_takes_the_prompt(
    warm_sandbox: Sandbox, signum: signal.Signals
) -> None:
    """While the run waits for a keeper (still booting, here stopped), a signal gives
    what a cold run gives: 130 and an error_interrupted object; the keeper then never
    runs the prompt."""
    keeper = keeper_pid(warm_up(warm_sandbox, args=("--output-format", "json")))
    os.kill(keeper, signal.SIGSTOP)
    try:
        caller = start_warm(warm_sandbox, ["--output-format", "json", "What is 2+2?"])
        assert caller.stderr is not None
        line = b""
        while b"has the request" not in line:
            line = caller.stderr.readline()
            assert line, "the caller ended before it handed its request over"
        caller.send_signal(signum)
        out, err = caller.communicate(timeout=RUN_TIMEOUT)
    finally:
        os.kill(keeper, signal.SIGCONT)
    assert caller.returncode == 130, err.decode()[-2000:]
    [result] = [json.loads(x) for x in out.splitlines()]
    assert (result["subtype"], result["is_error"]) == ("error_interrupted", True)
    assert result["errors"] == [f"interrupted by {signal.Signals(signum).name}"]
    wait_until("the keeper gone", lambda: not os.path.exists(f"/proc/{keeper}"))
    transcripts = list((warm_sandbox.home / ".claude" / "projects").glob("*/*.jsonl"))
    assert not any("What is 2+2?" in p.read_text() for p in transcripts)


def test_idle_keepers_are_capped_per_user(warm_sandbox: Sandbox) -> None:
    """Each environment has its own key: a caller that changes a variable on every run
    leaves at most 8 keepers waiting, the oldest stopped first; each socket is 0600."""
    config = warm_sandbox.home / ".config" / "claude-print"
    config.mkdir(parents=True)
    # Long-lived keepers: none may leave by its idle lifetime during the test.
    (config / "config.toml").write_text("[defaults]\nwarm_idle_secs = 900\n")
    first = None
    for i in range(10):
        assert_exit(run_warm(warm_sandbox, ["hi"], env={"RUN_NUMBER": str(i)}), 0)
        if first is None:
            first = sockets(warm_sandbox)[0]
    wait_until("at most 8 keepers", lambda: len(sockets(warm_sandbox)) <= 8)
    assert len(sockets(warm_sandbox)) == 8
    assert first not in sockets(warm_sandbox)
    for path in sockets(warm_sandbox):
        assert stat.S_IMODE(path.lstat().st_mode) == 0o600, path


def test_warm_up_that_cannot_leave_a_keeper_says_so(sandbox: Sandbox, tmp_path: Path) -> None:
    """A runtime dir whose socket path is too long for a Unix socket: `--warm-up` has
    nothing to do but leave a keeper, so it fails (exit 2, the reason), never a quiet 0."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True, mode=0o700)
    done = run_claude_print(sandbox, ["--warm-up"], binary=MOCK, env={"XDG_RUNTIME_DIR": str(deep)})
    assert_exit(done, 2)
    assert b"--warm-up: no keeper can be left" in done.stderr, done.stderr
    assert b"too long for a Unix socket" in done.stderr, done.stderr
    assert done.stdout == b""


def test_a_keeper_whose_tui_never_gets_ready_says_why(warm_sandbox: Sandbox) -> None:
    """A detached keeper has no output: when its TUI does not reach the input box (here a
    dialog nobody knows), it leaves the reason beside its slot, its slot is free, and the
    next --trace run, which goes cold, prints it."""
    env = {"MOCK_CLAUDE_SCENARIO": "unknown_screen"}
    warm_up(warm_sandbox, env)
    folder = run_dir(warm_sandbox) / f"claude-print-{os.getuid()}"
    wait_until("the keeper's failure", lambda: list(folder.glob("warm-*.failed")) != [])
    wait_until("its slot free", lambda: sockets(warm_sandbox) == [])
    [failed] = folder.glob("warm-*.failed")
    said = failed.read_text()
    assert said.startswith("its TUI did not get ready: "), said
    assert "Something else entirely" in said, said  # the screen it met, whole
    assert stat.S_IMODE(failed.stat().st_mode) == 0o600
    proc = run_warm(warm_sandbox, ["hi"], env=env)
    err = proc.stderr.decode()
    assert proc.returncode != 0, err  # the cold run meets the same dialog
    assert "warm start: no warm TUI for this key; cold run" in err
    assert f"warm start: a keeper for this key failed: {said}" in err


def test_a_keeper_that_gets_ready_clears_its_slot_s_failure(warm_sandbox: Sandbox) -> None:
    folder = run_dir(warm_sandbox) / f"claude-print-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    path = warm_up(warm_sandbox)
    stale = path.with_suffix(".failed")
    stale.write_text("its TUI did not get ready: an older keeper's")
    stop_keepers(warm_sandbox)
    path = warm_up(warm_sandbox)
    wait_until("the keeper ready", lambda: path.with_suffix(".lock").read_bytes() == b"ready\n")
    assert not stale.exists()


@pytest.mark.parametrize("prompt", ["/logout:", "/logout\ufe0f", "\u200b/logout"])
def test_a_warm_run_refuses_what_the_tui_may_read_as_a_command(
    warm_sandbox: Sandbox, prompt: str
) -> None:
    """The slash rule before any keeper is asked: exit 2 with the reason, and the keeper
    is still there for the next run (it never saw the prompt)."""
    path = warm_up(warm_sandbox)
    keeper = keeper_pid(path)
    proc = run_warm(warm_sandbox, [], stdin=prompt.encode())
    assert_exit(proc, 2)
    err = proc.stderr.decode()
    assert "warm start: cold run (a prompt the slash rules decide)" in err
    assert "claude-print does not send it to the TUI" in err
    assert "has the request" not in err
    assert keeper_pid(path) == keeper
    assert was_warm(run_warm(warm_sandbox, ["What is 2+2?"]))
