"""What the tests share besides fixtures: the repository's paths, the sandbox (a
throw-away HOME, project dir and TMPDIR) and the runners of claude-print, `claude -p`
and both side by side. The fixtures that make these are in tests/conftest.py."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import recorded_claude_p as recorded
from fake_api import FAKE_KEY, PINNED_BINARY, SERVERS, FakeApiServer, subscription_env

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
DATA = TESTS / "data"  # recorded screens, transcripts and outputs (scripts write them)
SUPPORT = TESTS / "support"  # this folder: helpers and helper programs, no tests
MOCK_CLAUDE = ROOT / "mock_claude" / "claude"
RUN_TIMEOUT = 120  # generous upper bound for one claude-print run


def real_claude_paths() -> List[str]:
    """The real Claude Code binaries the e2e tests drive: CLAUDE_PRINT_TEST_CLAUDE (one path,
    or several separated by ':', as scripts/test sets it for the release matrix), else the
    pinned release where scripts/install-claude-code puts it."""
    configured = os.environ.get("CLAUDE_PRINT_TEST_CLAUDE") or str(PINNED_BINARY)
    return [path for path in configured.split(os.pathsep) if path]


@functools.lru_cache(maxsize=None)
def claude_release(binary: str) -> str:
    from claude_print.tui.release import installed_version

    return installed_version(binary) or ""


def build_pyz(out: Path) -> Path:
    """./build_zipapp.sh into `out` (about 0.5 s)."""
    env = {**os.environ, "OUT": str(out)}
    subprocess.run([str(ROOT / "build_zipapp.sh")], env=env, check=True, capture_output=True)
    return out


@dataclass
class Sandbox:
    """A throw-away HOME, project dir and TMPDIR for one test."""

    home: Path
    project: Path
    tmp: Path
    api_url: str
    oauth: bool = False  # a subscription login (fake_api.subscription_env) instead of an API key

    def env(self, **extra: str) -> Dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("CLAUDE_CODE_", "ANTHROPIC_")) and k != "CLAUDECODE"
        }
        env.update(
            HOME=str(self.home),
            TMPDIR=str(self.tmp),
            ANTHROPIC_BASE_URL=self.api_url,
            ANTHROPIC_API_KEY=FAKE_KEY,
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            PYTHONPATH=str(ROOT),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            # The system prompt names the shell (`Shell: bash`): the same on every machine,
            # as recorded (recorded_claude_p.py; the kernel's release is put right there).
            SHELL="/bin/bash",
        )
        if self.oauth:
            env = subscription_env(env)
        env.update(extra)
        return env

    def leftovers(self) -> List[str]:
        """claude-print temp dirs and live processes that mention this sandbox."""
        found = [str(p) for p in self.tmp.glob("claude-print-*")]
        marker = str(self.tmp).encode()
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if marker in cmdline:
                shown = cmdline.replace(b"\0", b" ")[:200]
                found.append(f"pid {pid} ({state}): {shown!r}")
        return found

    def twin(self) -> Sandbox:
        """A copy of this sandbox beside it (HOME, work dir, TMPDIR as they are now)."""
        root = self.home.parent / "twin"
        shutil.rmtree(root, ignore_errors=True)  # a second try starts afresh
        for part in (self.home, self.project, self.tmp):
            shutil.copytree(part, root / part.name, symlinks=True)
        return Sandbox(root / self.home.name, root / self.project.name, root / self.tmp.name,
                       self.api_url, self.oauth)  # fmt: skip

    def transcripts(self) -> List[Path]:
        return sorted((self.home / ".claude" / "projects").glob("*/*.jsonl"))


_RUN_DIRS: Dict[Path, Path] = {}  # a sandbox's HOME -> its runtime dir


def run_dir(sandbox: Sandbox) -> Path:
    """The sandbox's XDG_RUNTIME_DIR (the warm start's sockets), made on first use: in
    /tmp, not in tmp_path, as a socket's path must be short (108 bytes). The sandbox
    fixture removes it when the test is over (remove_run_dir)."""
    if sandbox.home not in _RUN_DIRS:
        _RUN_DIRS[sandbox.home] = Path(tempfile.mkdtemp(prefix="cp-run-", dir="/tmp"))
    return _RUN_DIRS[sandbox.home]


def remove_run_dir(sandbox: Sandbox) -> None:
    """The sandbox's runtime dir gone, if run_dir made one."""
    path = _RUN_DIRS.pop(sandbox.home, None)
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)


def run_claude_print(
    sandbox: Sandbox,
    args: List[str],
    *,
    stdin: Optional[bytes] = None,
    binary: Optional[str] = None,
    env: Optional[Dict[str, str]] = None,
    timeout: float = RUN_TIMEOUT,
) -> subprocess.CompletedProcess[bytes]:
    argv = [sys.executable, "-m", "claude_print"]
    if binary is not None:
        argv += ["--claude-binary", binary]
    return subprocess.run(
        argv + args,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        cwd=sandbox.project,
        env=sandbox.env(**(env or {})),
        timeout=timeout,
    )


def run_claude_p(
    sandbox: Sandbox,
    binary: str,
    args: List[str],
    *,
    stdin: Optional[bytes] = None,
    env: Optional[Dict[str, str]] = None,
    live: bool = False,
) -> subprocess.CompletedProcess[bytes]:
    """`claude -p ARGS` in the sandbox: recorded once, replayed after (recorded_claude_p),
    or always `live` (a test that reads the transcript or another runtime file it left)."""
    extra = dict(env or {})

    def run() -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [binary, "-p", *args],
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            cwd=sandbox.project,
            env=sandbox.env(**extra),
            timeout=RUN_TIMEOUT,
        )

    oracle = Oracle(sandbox, binary, args, stdin, extra, extra.get("ANTHROPIC_BASE_URL"), live)
    replayed = oracle.replay()
    if replayed is not None:
        return replayed
    if not oracle.recording:
        return run()
    before = recorded.files(oracle.places)
    start = len(oracle.server.requests) if oracle.server else 0
    proc = run()
    oracle.save(proc, start, recorded.changed(before, recorded.files(oracle.places), oracle.places))
    return proc


class Oracle:
    """One `claude -p` run of a test and its recording (tests/support/recorded_claude_p.py):
    whether it is replayed, recorded or run live, and the doing of each."""

    def __init__(
        self,
        sandbox: Sandbox,
        binary: str,
        args: List[str],
        stdin: Optional[bytes],
        env: Dict[str, str],
        api_url: Optional[str],
        live: bool = False,
    ) -> None:
        self.binary, self.args = binary, args
        self.api_url = api_url or sandbox.api_url
        stdin_text = stdin.decode("utf-8", "replace") if stdin is not None else None
        self.ids = recorded.ids_in([*args, stdin_text, *env.values()])
        self.places = recorded.Places(
            sandbox.home, sandbox.project, sandbox.tmp, self.api_url, ids=self.ids
        )
        self.release = claude_release(binary)
        self.server = SERVERS.get(self.api_url)
        chosen = recorded.mode()
        # A subscription login's tokens and a token authority change with every run.
        usable = self.server is not None and self.server.authority is None and not sandbox.oauth
        self.mode = chosen if usable and self.release and not live else "live"
        self.key = (
            recorded.key(self.release, self.places, args, stdin, env) if self.mode != "live" else ""
        )
        self.recording = self.mode == "record"
        self.changes: Optional[List[str]] = None  # a replayed twin run's side effects

    def replay(
        self, twin: Optional[recorded.Places] = None
    ) -> Optional[subprocess.CompletedProcess[bytes]]:
        """The recorded run, its files left in the sandbox (not in a twin: the twin is
        thrown away) and its requests on the fake API; None when it is to run."""
        if self.mode != "replayed":
            self._log(self.mode)
            return None
        found = recorded.load(self.release, self.key, self._places(twin))
        if found is None or (twin is not None and found.snapshots is None):
            self._log("missed")
            return None
        self._log("replayed")
        if twin is None:
            recorded.leave(found.made)
        assert self.server is not None
        for request in found.requests:
            self.server.record(request)
        if found.snapshots is not None:
            from slash_space import side_effects

            self.changes = side_effects(*found.snapshots)
        return subprocess.CompletedProcess(
            [self.binary, "-p", *self.args], found.returncode, found.stdout, found.stderr
        )

    def save(
        self,
        proc: subprocess.CompletedProcess[bytes],
        start: int,
        made: recorded.Changed,
        twin: Optional[recorded.Places] = None,
        snapshots: Optional[Tuple[Dict[str, str], Dict[str, str]]] = None,
    ) -> None:
        assert self.server is not None
        requests = self.server.requests[start:]
        run = recorded.Recording(
            proc.returncode, proc.stdout, proc.stderr, requests, made, snapshots
        )
        recorded.save(self.release, self.key, self._places(twin), run)

    def _log(self, what: str) -> None:
        """CLAUDE_PRINT_TEST_CLAUDE_P_LOG=FILE: a line per run, to see what CI replays."""
        log = os.environ.get("CLAUDE_PRINT_TEST_CLAUDE_P_LOG")
        if log:
            test = os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0]
            with open(log, "a", encoding="utf-8") as out:
                out.write(f"{what} {self.release} {self.key} {test}\n")

    def _places(self, twin: Optional[recorded.Places]) -> recorded.Places:
        return dataclasses.replace(twin, ids=self.ids) if twin is not None else self.places


def entrypoints(path: Path) -> List[str]:
    found = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if "entrypoint" in record:
            found.append(record["entrypoint"])
    return found


class Pair(NamedTuple):
    """claude-print and `claude -p` on the same case, with the turn requests each made."""

    ours: subprocess.CompletedProcess[bytes]
    theirs: subprocess.CompletedProcess[bytes]
    our_requests: List[Dict[str, Any]]
    their_requests: List[Dict[str, Any]]
    # With `twin=True`: the files each side created, changed or deleted under its HOME
    # and work dir, outside the session bookkeeping (slash_space.side_effects).
    our_changes: Optional[List[str]] = None
    their_changes: Optional[List[str]] = None

    def assert_same_side_effects(self) -> None:
        assert self.our_changes == self.their_changes, (
            f"claude-print changed {self.our_changes}, claude -p {self.their_changes}"
        )


def run_pair(
    sandbox: Sandbox,
    binary: str,
    fake_api: FakeApiServer,
    oracle_api: FakeApiServer,
    ours: List[str],
    theirs: List[str],
    *,
    stdin: Optional[bytes] = None,
    their_stdin: Optional[bytes] = None,
    env: Optional[Dict[str, str]] = None,
    twin: bool = False,
) -> Pair:
    """`claude-print OURS` and `claude -p THEIRS` side by side, each on its own fake API
    (side requests aside). `their_stdin` defaults to `stdin`. With `twin`, claude -p runs
    in a copy of the sandbox made first (HOME, work dir, TMPDIR), and each side's side
    effects are kept in the Pair. `claude -p` is recorded once and replayed after
    (recorded_claude_p); a recorded run in the sandbox itself goes first, alone, so that
    what it leaves is its own (a replayed one leaves the same before claude-print runs)."""
    from slash_space import side_effects, snapshot

    their_stdin = stdin if their_stdin is None else their_stdin
    extra = dict(env or {})
    oracle = Oracle(sandbox, binary, theirs, their_stdin, extra, oracle_api.url)
    twin_box = _twin_places(sandbox, oracle_api) if twin else None
    starts = [len(fake_api.requests), len(oracle_api.requests)]
    their_run = oracle.replay(twin_box)
    ours_argv = [sys.executable, "-m", "claude_print", "--claude-binary", binary, *ours]
    their_argv = [binary, "-p", *theirs]
    if their_run is not None:
        our_before = snapshot(sandbox.home.parent) if twin else {}
        mine = _communicate([(ours_argv, stdin, fake_api, sandbox, extra)])[0]
        requests = [
            [r for r in api.requests[start:] if not r["side"]]
            for start, api in zip(starts, (fake_api, oracle_api))
        ]
        if not twin:
            return Pair(mine, their_run, requests[0], requests[1])
        mine_changed = side_effects(our_before, snapshot(sandbox.home.parent))
        return Pair(mine, their_run, requests[0], requests[1], mine_changed, oracle.changes)
    boxes = [sandbox, sandbox.twin() if twin else sandbox]
    before = [snapshot(box.home.parent) for box in boxes] if twin else []
    runs = [
        (ours_argv, stdin, fake_api, boxes[0], extra),
        (their_argv, their_stdin, oracle_api, boxes[1], extra),
    ]
    if oracle.recording and not twin:  # claude -p alone first: what it leaves is its own
        files_before = recorded.files(oracle.places)
        theirs_done = _communicate(runs[1:])[0]
        made = recorded.changed(files_before, recorded.files(oracle.places), oracle.places)
        oracle.save(theirs_done, starts[1], made)
        done = [_communicate(runs[:1])[0], theirs_done]
    else:
        done = _communicate(runs)
    requests = [
        [r for r in api.requests[start:] if not r["side"]]
        for start, api in zip(starts, (fake_api, oracle_api))
    ]
    if not twin:
        return Pair(done[0], done[1], requests[0], requests[1])
    after = [snapshot(box.home.parent) for box in boxes]
    changes = [side_effects(b, a) for b, a in zip(before, after)]
    if oracle.recording:
        oracle.save(done[1], starts[1], {}, twin_box, (before[1], after[1]))
    return Pair(done[0], done[1], requests[0], requests[1], changes[0], changes[1])


Run = Tuple[List[str], Optional[bytes], FakeApiServer, Sandbox, Dict[str, str]]


def _communicate(runs: List[Run]) -> List[subprocess.CompletedProcess[bytes]]:
    """The runs at once, each to its end (RUN_TIMEOUT), none left running."""
    procs = [
        subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=box.project,
            env=box.env(ANTHROPIC_BASE_URL=api.url, **extra),
        )
        for argv, data, api, box, extra in runs
    ]
    # All at once: claude -p gives up on a stdin that brings nothing in 3 s, so its
    # input must not wait until claude-print has finished (a race under load).
    with concurrent.futures.ThreadPoolExecutor(len(runs)) as pool:
        talks = [
            pool.submit(proc.communicate, data, RUN_TIMEOUT)
            for proc, (_, data, _, _, _) in zip(procs, runs)
        ]
    done = []
    try:
        for talk, proc, (argv, _, _, _, _) in zip(talks, procs, runs):
            out, err = talk.result()
            done.append(subprocess.CompletedProcess(argv, proc.returncode, out, err))
    finally:  # a hung side must not outlive the test (claude-print's own timeout is 1 h)
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return done


def _twin_places(sandbox: Sandbox, api: FakeApiServer) -> recorded.Places:
    """Where Sandbox.twin puts the copy (made or not), the original as its origin."""
    root = sandbox.home.parent / "twin"
    origin = recorded.Places(sandbox.home, sandbox.project, sandbox.tmp, api.url)
    return recorded.Places(
        root / sandbox.home.name, root / sandbox.project.name, root / sandbox.tmp.name,
        api.url, origin,
    )  # fmt: skip
