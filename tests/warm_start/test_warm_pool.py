"""A pool of keepers per key (issue 30, fleets): which slot a run tries, which slots a run
fills after it, and the hand-over when a keeper is taken by another run in the same
instant. Fast: the keepers here are threads on real Unix sockets, no TUI; the pool with
mock_claude is at the end, with the real Claude Code in test_e2e_warm_pool.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import re
import shutil
import signal
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from checks import assert_exit
from harness import MOCK_CLAUDE, RUN_TIMEOUT, Sandbox, run_claude_print
from warm_helpers import (
    keeper_pid,
    run_warm,
    sockets,
    start_warm,
    wait_until,
    warm_env,
    was_warm,
)

from claude_print.errors import ClaudePrintError
from claude_print.options import Options
from claude_print.warm_start import handover, warm, warm_pool

KEY = "0123456789abcdef0123456789abcdef"
WAIT = 30.0  # generous bound for a fake keeper's thread


# --- the slots' names ------------------------------------------------------------------


def test_slot_names() -> None:
    """Slot 0 keeps the name a single keeper always had: a pool of 1 is today's keeper."""
    assert warm_pool.slot_name(KEY, 0) == f"warm-{KEY}"
    assert warm_pool.slot_name(KEY, 3) == f"warm-{KEY}-3"
    paths = warm_pool.slot_paths("/run/d", KEY, 2)
    assert paths == handover.Paths(f"/run/d/warm-{KEY}-2.sock", f"/run/d/warm-{KEY}-2.lock")


def test_listening_reads_only_this_keys_sockets() -> None:
    other = "f" * 32
    names = [
        f"warm-{KEY}.sock",
        f"warm-{KEY}.lock",
        f"warm-{KEY}-1.lock",  # booting: no socket yet
        f"warm-{KEY}-2.sock",
        f"warm-{KEY}-12.sock",
        f"warm-{KEY}-02.sock",  # not a name a slot has
        f"warm-{KEY}-.sock",
        f"warm-{KEY}-x.sock",
        f"warm-{KEY}x.sock",
        f"warm-{other}.sock",
        f"warm-{other}-1.sock",
        "something-else.sock",
    ]
    assert warm_pool.listening(names, KEY) == [0, 2, 12]
    assert warm_pool.listening([], KEY) == []


@pytest.mark.parametrize("size", range(1, 6))
def test_order_over_every_ready_set_and_start(size: int) -> None:
    """Every slot tried once; the ready ones first; each group begins at the run's own
    place in it, so runs with different numbers begin at different ready slots."""
    slots = list(range(size))
    for count in range(size + 1):
        for ready in itertools.combinations(slots, count):
            firsts = set()
            for start in range(2 * size):
                got = warm_pool.order(slots, set(ready), start)
                assert sorted(got) == slots
                assert set(got[:count]) == set(ready), (ready, start, got)
                booting = [s for s in slots if s not in ready]
                if booting:
                    assert got[count] == booting[start % len(booting)]
                if ready:
                    assert got[0] == ready[start % count]
                    firsts.add(got[0])
            assert len(firsts) == count


@pytest.mark.parametrize("size", range(1, 5))
def test_runs_that_start_together_each_get_a_slot(size: int) -> None:
    """`size` runs over `size` ready slots, interleaved in every order one step at a time
    (a step: try the next slot; taken already, go on): each run ends with a slot of its
    own. A run goes cold only when every slot went to another run."""
    slots = list(range(size))
    plans = [warm_pool.order(slots, set(slots), start) for start in range(size)]
    steps = [run for run in range(size) for _ in range(size)]
    for schedule in set(itertools.permutations(steps)) if size <= 3 else [tuple(steps)]:
        held: Dict[int, int] = {}
        tried = [0] * size
        for run in schedule:
            if run in held.values() or tried[run] >= size:
                continue
            slot = plans[run][tried[run]]
            tried[run] += 1
            if slot not in held:
                held[slot] = run
        assert sorted(held.values()) == list(range(size)), schedule


# --- ready marks and claims (real files) -----------------------------------------------


@pytest.fixture
def short_dir() -> Iterator[str]:
    """A short private dir, as the runtime dir is (a socket's path: 108 bytes at most)."""
    path = tempfile.mkdtemp(prefix="cp-pool-", dir="/tmp")
    try:
        yield path
    finally:
        shutil.rmtree(path)


def test_is_ready_reads_the_keepers_mark(short_dir: str) -> None:
    paths = warm_pool.slot_paths(short_dir, KEY, 1)
    assert not warm_pool.is_ready(paths)  # no lock file
    Path(paths.lock).write_bytes(b"")
    assert not warm_pool.is_ready(paths)  # booting
    Path(paths.lock).write_bytes(b"ready\n")
    assert warm_pool.is_ready(paths)
    Path(paths.lock).write_bytes(b"ready\nmore")
    assert not warm_pool.is_ready(paths)


def test_choices_put_ready_slots_before_booting_ones(short_dir: str) -> None:
    for slot, mark in [(0, b""), (1, b"ready\n"), (2, b""), (3, b"ready\n")]:
        paths = warm_pool.slot_paths(short_dir, KEY, slot)
        Path(paths.socket).write_bytes(b"")  # listed by name; never connected here
        Path(paths.lock).write_bytes(mark)
    Path(warm_pool.slot_paths(short_dir, KEY, 4).lock).write_bytes(b"")  # no socket yet
    got = [Path(p.socket).name for p in warm_pool.choices(short_dir, KEY, 0)]
    assert got == [
        f"warm-{KEY}-1.sock",
        f"warm-{KEY}-3.sock",
        f"warm-{KEY}.sock",
        f"warm-{KEY}-2.sock",
    ]
    got = [Path(p.socket).name for p in warm_pool.choices(short_dir, KEY, 1)]
    assert got == [
        f"warm-{KEY}-3.sock",
        f"warm-{KEY}-1.sock",
        f"warm-{KEY}-2.sock",
        f"warm-{KEY}.sock",
    ]


def test_choices_say_when_the_socket_path_is_too_long() -> None:
    with pytest.raises(ClaudePrintError, match="too long for a Unix socket"):
        warm_pool.choices("/tmp/" + "d" * 80, KEY, 0)


def test_claim_free_tops_up_to_the_size_and_leaves_held_slots_alone(short_dir: str) -> None:
    held = handover.Claim.take(warm_pool.slot_paths(short_dir, KEY, 1))  # a live keeper's
    assert held is not None
    claims = warm_pool.claim_free(short_dir, KEY, 3)
    try:
        assert [Path(c.paths.lock).name for c in claims] == [
            f"warm-{KEY}.lock",
            f"warm-{KEY}-2.lock",
        ]
        assert warm_pool.claim_free(short_dir, KEY, 3) == []  # all held now: none more
        claims[0].release()  # its keeper took a run
        again = warm_pool.claim_free(short_dir, KEY, 3)
        assert [c.paths for c in again] == [warm_pool.slot_paths(short_dir, KEY, 0)]
        claims[0] = again[0]
    finally:
        for claim in [*claims, held]:
            claim.release()
    assert os.listdir(short_dir) == []


@pytest.mark.parametrize("size", [1, 2, 8])
def test_claim_free_claims_no_more_than_the_size(short_dir: str, size: int) -> None:
    claims = warm_pool.claim_free(short_dir, KEY, size)
    try:
        assert len(claims) == size
        assert sorted(os.listdir(short_dir)) == sorted(
            f"{warm_pool.slot_name(KEY, s)}.lock" for s in range(size)
        )
    finally:
        for claim in claims:
            claim.release()


def test_make_room_stops_other_keys_before_the_pools_own(short_dir: str) -> None:
    """The cap holds (at most `room` stay) and a run topping its pool up does not stop
    its own pool's keepers while another key's are there to go."""
    # Oldest first: the pool's own two, then two of other keys.
    names = [f"warm-{KEY}", f"warm-{KEY}-1", f"warm-{'a' * 32}", f"warm-{'b' * 32}"]
    listeners = []
    for age, name in enumerate(names):
        path = os.path.join(short_dir, name + ".sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(4)
        listener.setblocking(False)
        os.utime(path, ns=(age * 10**9, age * 10**9), follow_symlinks=False)
        listeners.append(listener)
    try:
        warm_pool.make_room(short_dir, 3, f"warm-{KEY}")

        def stopped(listener: socket.socket) -> bool:
            try:
                listener.accept()[0].close()
            except BlockingIOError:
                return False
            return True

        assert [stopped(x) for x in listeners] == [False, False, True, False]
        # Their files stay here (nobody serves these sockets): 3 of the 4 go, the
        # other keys' first, then the pool's oldest.
        warm_pool.make_room(short_dir, 1, f"warm-{KEY}")
        assert [stopped(x) for x in listeners] == [True, False, True, True]
    finally:
        for listener in listeners:
            listener.close()


# --- the hand-over over several slots, against fake keepers -----------------------------


class FakeKeeper:
    """A keeper's socket side, as keeper.py does it: accepts one connection, closes its
    listener at once (other connections waiting are reset), then answers it: `accepted`
    (or `stale`), waits for go, writes `answer` into the run's stdout pipe, sends its
    exit code."""

    def __init__(self, paths: handover.Paths, answer: bytes, stale: str = "") -> None:
        self.paths = paths
        self.answer = answer
        self.stale = stale
        self.go = threading.Event()  # it was told go: it ran the prompt
        self.listener = handover.listen(paths.socket)
        self.listener.setblocking(True)
        self.accept = threading.Event()  # accept only once told to
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.accept.wait(WAIT)
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        self.listener.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.paths.socket)
        with conn:
            conn.settimeout(WAIT)
            request, fds = handover.receive(conn)
            try:
                if request is None or len(fds) != 2:
                    return
                if self.stale:
                    handover.send(conn, {"stale": self.stale})
                    return
                handover.send(conn, {"accepted": True, "session_id": "s", "claude_version": "v"})
                go, _ = handover.receive(conn)
                if not (go and go.get("go")):
                    return
                self.go.set()
                os.write(fds[0], self.answer)
            finally:
                for fd in fds:
                    os.close(fd)
            handover.send(conn, {"exit": 0})

    def close(self) -> None:
        self.accept.set()
        self.listener.close()
        self.thread.join(WAIT)


@pytest.fixture
def pool_dir() -> Iterator[Tuple[str, str]]:
    """(the runtime dir's parent, the runtime dir) for this test's key."""
    parent = tempfile.mkdtemp(prefix="cp-pool-", dir="/tmp")
    try:
        yield parent, handover.runtime_dir({"XDG_RUNTIME_DIR": parent})
    finally:
        shutil.rmtree(parent)


def keeper_at(
    pool: Tuple[str, str], options: Options, slot: int, ready: bool, answer: bytes, stale: str = ""
) -> FakeKeeper:
    parent, directory = pool
    environ = {"XDG_RUNTIME_DIR": parent, "HOME": directory}
    key = warm.key(options, environ, directory)
    paths = warm_pool.slot_paths(directory, key, slot)
    Path(paths.lock).write_bytes(b"ready\n" if ready else b"")
    return FakeKeeper(paths, answer, stale)


def options_for() -> Options:
    return Options(prompt="What is 2+2?", prompt_source="argv", claude_binary=str(MOCK_CLAUDE))


def run_in_pool(pool: Tuple[str, str], on_trace: Any = None) -> Tuple[Optional[int], List[str]]:
    parent, directory = pool
    environ = {"XDG_RUNTIME_DIR": parent, "HOME": directory}
    trace: List[str] = []

    def record(line: str) -> None:
        trace.append(line)
        if on_trace is not None:
            on_trace(line)

    code = warm._try_keeper(
        options_for(), time.monotonic(), environ, directory, record, None, lambda c, e: b""
    )
    return code, trace


def test_a_keeper_taken_in_the_same_instant_sends_the_run_to_the_next(
    pool_dir: Tuple[str, str], capfd: pytest.CaptureFixture[str]
) -> None:
    """Slot 0 (ready) accepts another run's connection while ours waits in its backlog:
    ours is reset and goes to slot 1 (still booting), which runs the prompt; slot 0 never
    gets a go from us."""
    options = options_for()
    first = keeper_at(pool_dir, options, 0, True, b"from slot 0\n")
    second = keeper_at(pool_dir, options, 1, False, b"from slot 1\n")
    rival = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    rival.connect(first.paths.socket)  # first in slot 0's backlog

    second.accept.set()

    def on_trace(line: str) -> None:
        if "has the request" in line:  # ours waits in slot 0's backlog behind the rival's
            first.accept.set()

    try:
        code, trace = run_in_pool(pool_dir, on_trace)
    finally:
        rival.close()
        first.close()
        second.close()
    assert code == 0, trace
    assert capfd.readouterr().out == "from slot 1\n"
    assert second.go.is_set() and not first.go.is_set()
    assert sum("has the request" in line for line in trace) == 2, trace
    assert "did not take the prompt" in trace[1], trace
    assert trace[-1].endswith("runs the prompt"), trace


def test_a_ready_keeper_is_taken_before_a_booting_one(
    pool_dir: Tuple[str, str], capfd: pytest.CaptureFixture[str]
) -> None:
    options = options_for()
    booting = keeper_at(pool_dir, options, 0, False, b"booting\n")
    ready = keeper_at(pool_dir, options, 1, True, b"ready\n")
    ready.accept.set()
    try:
        code, trace = run_in_pool(pool_dir)
        # The booting keeper's backlog is empty: the run never connected to it.
        booting.listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            booting.listener.accept()
    finally:
        booting.close()
        ready.close()
    assert code == 0, trace
    assert capfd.readouterr().out == "ready\n"
    assert not booting.go.is_set()


def test_a_stale_keeper_sends_the_run_to_the_next(
    pool_dir: Tuple[str, str], capfd: pytest.CaptureFixture[str]
) -> None:
    """Each keeper checks what its TUI read; one booted before a change declines, and a
    later one may still fit."""
    options = options_for()
    old = keeper_at(pool_dir, options, 0, True, b"old\n", stale="what changed")
    new = keeper_at(pool_dir, options, 1, False, b"new\n")
    old.accept.set()
    new.accept.set()
    try:
        code, trace = run_in_pool(pool_dir)
    finally:
        old.close()
        new.close()
    assert code == 0, trace
    assert capfd.readouterr().out == "new\n"
    assert any("declined (what changed)" in line for line in trace), trace


def test_every_keeper_taken_gives_a_cold_run(pool_dir: Tuple[str, str]) -> None:
    options = options_for()
    keepers = [keeper_at(pool_dir, options, s, True, b"x\n", stale="taken") for s in (0, 1)]
    for keeper in keepers:
        keeper.accept.set()
    try:
        code, trace = run_in_pool(pool_dir)
    finally:
        for keeper in keepers:
            keeper.close()
    assert code is None
    assert trace[-1] == "warm start: no warm TUI for this key took the prompt; cold run"
    assert not any(k.go.is_set() for k in keepers)


def test_sockets_without_a_keeper_give_a_cold_run(pool_dir: Tuple[str, str]) -> None:
    """A keeper killed with SIGKILL leaves its socket file: nobody listens there."""
    _, directory = pool_dir
    options = options_for()
    environ = {"XDG_RUNTIME_DIR": pool_dir[0], "HOME": directory}
    key = warm.key(options, environ, directory)
    for slot in (0, 1):
        dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        dead.bind(warm_pool.slot_paths(directory, key, slot).socket)
        dead.close()
    code, trace = run_in_pool(pool_dir)
    assert code is None
    assert trace == ["warm start: no warm TUI for this key; cold run"]


def run_with_timeout(
    pool: Tuple[str, str], options: Options, started: float
) -> Tuple[Optional[int], List[str]]:
    parent, directory = pool
    environ = {"XDG_RUNTIME_DIR": parent, "HOME": directory}
    trace: List[str] = []
    code = warm._try_keeper(
        options, started, environ, directory, trace.append, None, lambda c, e: b""
    )
    return code, trace


def test_a_booting_keeper_is_waited_for_but_not_past_the_run_s_timeout(
    pool_dir: Tuple[str, str], capfd: pytest.CaptureFixture[str]
) -> None:
    """A keeper still booting holds the run's request in its listener's backlog. With
    --timeout 2 and a keeper that never takes it, the run reports its own timeout (124,
    error_timeout) within 6 s of its start (written out), not after the 30 s a keeper
    may take to boot."""
    options = options_for()._replace(timeout=2.0, output_format="json")
    booting = keeper_at(pool_dir, options, 0, False, b"never\n")
    started = time.monotonic()
    try:
        code, trace = run_with_timeout(pool_dir, options, started)
        elapsed = time.monotonic() - started
    finally:
        booting.close()
    assert code == 124, trace
    assert elapsed < 6.0, (elapsed, trace)
    result = json.loads(capfd.readouterr().out)
    assert (result["subtype"], result["is_error"]) == ("error_timeout", True)
    assert not booting.go.is_set()


def test_a_booting_keeper_that_takes_the_request_in_time_runs_the_prompt(
    pool_dir: Tuple[str, str], capfd: pytest.CaptureFixture[str]
) -> None:
    """The other side: the run does wait for a booting keeper within its --timeout (it
    takes the request after 1 s here) and does not run cold."""
    options = options_for()._replace(timeout=20.0)
    booting = keeper_at(pool_dir, options, 0, False, b"after boot\n")
    timer = threading.Timer(1.0, booting.accept.set)
    started = time.monotonic()
    timer.start()
    try:
        code, trace = run_with_timeout(pool_dir, options, started)
    finally:
        timer.cancel()
        booting.close()
    assert code == 0, trace
    assert time.monotonic() - started >= 1.0
    assert capfd.readouterr().out == "after boot\n"
    assert booting.go.is_set()


# --- the pool with mock_claude: --warm-up, runs at once, top-up --------------------------

MOCK = str(MOCK_CLAUDE)


def slot_files(sandbox: Sandbox, suffix: str) -> List[str]:
    directory = Path(warm_env(sandbox)["XDG_RUNTIME_DIR"]) / f"claude-print-{os.getuid()}"
    return sorted(p.name for p in directory.glob(f"warm-*{suffix}"))


def ready_count(sandbox: Sandbox) -> int:
    ready = 0
    for path in sockets(sandbox):
        with contextlib.suppress(OSError):
            ready += path.with_suffix(".lock").read_bytes() == b"ready\n"
    return ready


def test_a_pool_serves_runs_that_start_together(warm_sandbox: Sandbox) -> None:
    """`--warm-up --warm-pool 3` leaves 3 keepers; 3 runs started at once each take one
    and print their own answer; after them the pool is 3 again, no more."""
    done = run_claude_print(
        warm_sandbox, ["--warm-up", "--warm-pool", "3"], binary=MOCK, env=warm_env(warm_sandbox)
    )
    assert_exit(done, 0)
    assert len(slot_files(warm_sandbox, ".lock")) == 3
    wait_until("3 keepers ready", lambda: ready_count(warm_sandbox) == 3)
    prompts = [f"pool prompt {i}" for i in range(3)]
    procs = [start_warm(warm_sandbox, ["--warm-pool", "3", p]) for p in prompts]
    outs = [p.communicate(timeout=RUN_TIMEOUT) for p in procs]
    for proc, prompt, (out, err) in zip(procs, prompts, outs):
        assert proc.returncode == 0, err.decode()[-2000:]
        digest = hashlib.sha256(prompt.encode()).hexdigest()[:12]
        assert out.decode() == f"ACK {len(prompt)} {digest}\n"
        assert b"runs the prompt" in err, err.decode()[-2000:]
    keepers = {re.search(rb"keeper (\d+) runs the prompt", err).group(1) for _, err in outs}  # type: ignore[union-attr]
    assert len(keepers) == 3
    # Each run topped the pool up before it ended: 3 claimed slots, whoever started them.
    assert len(slot_files(warm_sandbox, ".lock")) == 3
    wait_until("3 keepers ready again", lambda: ready_count(warm_sandbox) == 3)
    assert len(slot_files(warm_sandbox, ".sock")) == 3


def test_a_pool_of_one_is_one_keeper(warm_sandbox: Sandbox) -> None:
    """The default: `--warm-up` leaves one keeper in slot 0, as before pools."""
    done = run_claude_print(warm_sandbox, ["--warm-up"], binary=MOCK, env=warm_env(warm_sandbox))
    assert_exit(done, 0)
    [lock] = slot_files(warm_sandbox, ".lock")
    assert re.fullmatch(r"warm-[0-9a-f]{32}\.lock", lock)
    proc = run_warm(warm_sandbox, ["What is 2+2?"])
    assert_exit(proc, 0)
    assert was_warm(proc)
    assert len(slot_files(warm_sandbox, ".lock")) == 1


def test_runs_of_another_pool_size_share_the_keepers(warm_sandbox: Sandbox) -> None:
    """The pool size is not in the key: a run without --warm-pool takes a keeper of a
    pool of 3 (the size only says how many a run leaves), and tops up slot 0 only."""
    done = run_claude_print(
        warm_sandbox, ["--warm-up", "--warm-pool", "3"], binary=MOCK, env=warm_env(warm_sandbox)
    )
    assert_exit(done, 0)
    wait_until("3 keepers ready", lambda: ready_count(warm_sandbox) == 3)
    for i in range(3):
        before = (slot_files(warm_sandbox, ".sock"), ready_count(warm_sandbox))
        proc = run_warm(warm_sandbox, ["What is 2+2?"])
        assert_exit(proc, 0)
        assert was_warm(proc), (
            i,
            before,
            slot_files(warm_sandbox, ".sock"),
            proc.stderr.decode()[-2000:],
        )
        assert proc.stdout == b"The answer is 4.\n"
    assert len(slot_files(warm_sandbox, ".lock")) <= 3


@pytest.mark.parametrize(
    "args, words",
    [
        (["--warm-pool", "2", "hi"], "--warm-pool goes with --warm or --warm-up"),
        (["--warm", "--warm-pool", "9", "hi"], "the warm pool must hold 1 to 8 TUIs"),
        (["--warm-up", "--warm-pool", "0"], "--warm-pool' argument '0' is invalid"),
        (["--warm-up", "--warm-pool", "two"], "--warm-pool' argument 'two' is invalid"),
    ],
)
def test_a_bad_pool_size_is_a_usage_error(
    warm_sandbox: Sandbox, args: List[str], words: str
) -> None:
    proc = run_claude_print(warm_sandbox, args, binary=MOCK, env=warm_env(warm_sandbox))
    assert proc.returncode == 2, proc.stderr.decode()
    assert words in proc.stderr.decode()
    assert proc.stdout == b""
    assert sockets(warm_sandbox) == []


def test_a_configured_pool_of_more_than_the_cap_is_a_usage_error(warm_sandbox: Sandbox) -> None:
    config = warm_sandbox.home / ".config" / "claude-print"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("[defaults]\nwarm = true\nwarm_pool = 12\n")
    proc = run_claude_print(warm_sandbox, ["hi"], binary=MOCK, env=warm_env(warm_sandbox))
    assert proc.returncode == 2, proc.stderr.decode()
    assert "the warm pool must hold 1 to 8 TUIs (at most 8 wait per user), not 12" in (
        proc.stderr.decode()
    )


def test_a_real_keeper_taken_in_the_same_instant_sends_the_run_to_the_next(
    warm_sandbox: Sandbox,
) -> None:
    """With keeper.py itself: slot 0's keeper (stopped, so both connections wait in its
    backlog) takes another connection first; the run's is reset when it closes its
    socket, and the run is adopted by slot 1's keeper instead of going cold. Slot 1 is
    made to look still booting (its ready mark removed), so slot 0 is surely tried
    first."""
    done = run_claude_print(
        warm_sandbox, ["--warm-up", "--warm-pool", "2"], binary=MOCK, env=warm_env(warm_sandbox)
    )
    assert_exit(done, 0)
    wait_until("2 keepers ready", lambda: ready_count(warm_sandbox) == 2)
    first, second = sorted(sockets(warm_sandbox), key=lambda p: len(p.name))
    second.with_suffix(".lock").write_bytes(b"")  # "booting": tried after slot 0
    taken = keeper_pid(first)
    os.kill(taken, signal.SIGSTOP)
    rival = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        rival.connect(str(first))  # first in its backlog
        caller = start_warm(warm_sandbox, ["--warm-pool", "2", "What is 2+2?"])
        assert caller.stderr is not None
        line = b""
        while b"has the request" not in line:
            line = caller.stderr.readline()
            assert line, "the run ended before it handed its request over"
        assert f"keeper {taken} has the request".encode() in line
        os.kill(taken, signal.SIGCONT)
        out, err = caller.communicate(timeout=RUN_TIMEOUT)
    finally:
        os.kill(taken, signal.SIGCONT)
        rival.close()  # slot 0's keeper got no request from it: it ends, having run nothing
    assert caller.returncode == 0, err.decode()[-2000:]
    assert out == b"The answer is 4.\n"
    trace = (line + err).decode()
    assert f"keeper {taken} did not take the prompt" in trace, trace
    adopted = re.search(r"keeper (\d+) runs the prompt", trace)
    assert adopted is not None and int(adopted.group(1)) != taken, trace
    wait_until("slot 0's keeper gone", lambda: not os.path.exists(f"/proc/{taken}"))
