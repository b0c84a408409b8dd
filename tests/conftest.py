"""Shared fixtures: the fake Messages API, throw-away homes, and runners for
claude-print, the real Claude Code TUI and `claude -p`."""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fake_api import (  # noqa: E402
    FAKE_KEY,
    PINNED_BINARY,
    FakeApiServer,
    seed_home,
    subscription_env,
)

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


def _release_id(path: str) -> str:
    return f"cc{claude_release(path) or '?'}"


@pytest.fixture(scope="session", params=real_claude_paths(), ids=_release_id)
def real_claude(request: pytest.FixtureRequest) -> str:
    path = str(request.param)
    if not os.access(path, os.X_OK):
        if os.environ.get("CLAUDE_PRINT_REQUIRE_E2E"):
            pytest.fail(f"real Claude Code not installed at {path} (scripts/install-claude-code)")
        pytest.skip("real Claude Code not installed; run scripts/install-claude-code")
    return path


def core_only_releases() -> List[str]:
    """Releases marked `core` in tests/matrix.txt: only the `matrix` e2e tests run there."""
    path = ROOT / "tests" / "matrix.txt"
    rows = [line.split() for line in path.read_text().splitlines() if line[:1].isdigit()]
    return [row[0] for row in rows if "core" in row[1:]]


def _version_key(release: str) -> Tuple[int, ...]:
    return tuple(int(part) for part in (release or "0.0.0").split("."))


def newest_release() -> str:
    """The newest Claude Code the e2e tests drive in this run: the only one that takes the
    `newest_only` cases (the rest of a space beyond its sample)."""
    return max((claude_release(path) for path in real_claude_paths()), key=_version_key)


# CLAUDE_PRINT_TEST_FULL=1 (`scripts/test --full`): every e2e case on every release, the
# whole of each space; without it (CI) a `core` release runs the `matrix` tests and the
# newest all but the `newest_only` rest of a space (docs/compatibility.md, "CI").
FULL = os.environ.get("CLAUDE_PRINT_TEST_FULL", "") not in ("", "0")


def _runs_on(item: pytest.Item, core_only: List[str], newest: str, full: bool = FULL) -> bool:
    """An e2e case runs on its release unless the release is `core` (tests/matrix.txt)
    and the test not `matrix`, or the case is `newest_only` and its release not the
    newest of the run; `full`: `newest_only` on the newest too, and every test on a
    `core` release."""
    callspec = getattr(item, "callspec", None)
    binary = callspec.params.get("real_claude") if callspec is not None else None
    if binary is None:
        return True
    release = claude_release(str(binary))
    if full:
        return release == newest or item.get_closest_marker("newest_only") is None
    if release in core_only and item.get_closest_marker("matrix") is None:
        return False
    return item.get_closest_marker("newest_only") is None


def _cost_rank(item: pytest.Item) -> int:
    """Slow tests first, then the rest of the e2e tests, then the fast ones: the longest
    work starts first and the short tests fill the workers' tails (xdist's work stealing
    takes from the end of a worker's queue)."""
    if item.get_closest_marker("slow") is not None:
        return 0
    return 1 if item.get_closest_marker("e2e") is not None else 2


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    core_only = core_only_releases()
    newest = newest_release()
    keep: List[pytest.Item] = []
    drop: List[pytest.Item] = []
    for item in items:
        (keep if _runs_on(item, core_only, newest) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    keep.sort(key=_cost_rank)  # stable: each group keeps pytest's order
    items[:] = keep


# --- no process of the test session may outlive it -------------------------------------

LEFTOVER_GRACE = 10.0  # a process killed at the end of the last test may take a moment


def session_processes(basetemp: Path) -> Dict[int, str]:
    """Live processes of this test session but pytest itself (pid -> command line): its
    descendants, and orphans (reparented away from it) that name its temp dir."""
    me = os.getpid()
    live: Dict[int, Tuple[int, bytes]] = {}  # pid -> (parent pid, command line)
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_bytes()
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
        except OSError:
            continue  # gone meanwhile
        fields = stat[stat.rfind(b")") + 2 :].split()
        if fields[0] not in (b"Z", b"X"):  # a zombie has exited; it waits for its parent
            live[int(name)] = (int(fields[1]), cmdline)
    ours = {me}
    grew = True
    while grew:
        more = {pid for pid, (ppid, _) in live.items() if ppid in ours} - ours
        ours |= more
        grew = bool(more)
    marker = (str(basetemp) + os.sep).encode()
    return {
        pid: cmdline.replace(b"\0", b" ").decode(errors="replace").strip()[:300]
        for pid, (_, cmdline) in sorted(live.items())
        if pid in ours or marker in cmdline
    }


@pytest.fixture(scope="session", autouse=True)
def no_process_left_behind(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Fails the session when a process it started is still running at its end (and
    kills it): a hook, a TUI or a server a test forgot would run on for hours."""
    basetemp = tmp_path_factory.getbasetemp()
    yield
    if not os.path.isdir("/proc"):
        return
    deadline = time.monotonic() + LEFTOVER_GRACE
    left = session_processes(basetemp)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = session_processes(basetemp)
    if not left:
        return
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    shown = "\n".join(f"  pid {pid}: {cmdline}" for pid, cmdline in left.items())
    pytest.fail(f"the test session left processes running (killed now):\n{shown}", pytrace=False)


def build_pyz(out: Path) -> Path:
    """./build_zipapp.sh into `out` (about 0.5 s)."""
    env = {**os.environ, "OUT": str(out)}
    subprocess.run([str(ROOT / "build_zipapp.sh")], env=env, check=True, capture_output=True)
    return out


@pytest.fixture(scope="session")
def built_pyz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One build of the .pyz for every test that runs the shipped file."""
    return build_pyz(tmp_path_factory.mktemp("dist") / "claude-print.pyz")


@pytest.fixture(scope="session")
def fake_api() -> Iterator[FakeApiServer]:
    server = FakeApiServer().start()
    yield server
    server.shutdown()
    server.server_close()


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


@pytest.fixture
def sandbox(tmp_path: Path, fake_api: FakeApiServer) -> Sandbox:
    home, project, tmp = tmp_path / "home", tmp_path / "project", tmp_path / "tmp"
    for d in (home, project, tmp):
        d.mkdir()
    seed_home(home)
    return Sandbox(home, project, tmp, fake_api.url)


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
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [binary, "-p", *args],
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        cwd=sandbox.project,
        env=sandbox.env(**(env or {})),
        timeout=RUN_TIMEOUT,
    )


def entrypoints(path: Path) -> List[str]:
    found = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if "entrypoint" in record:
            found.append(record["entrypoint"])
    return found


@pytest.fixture(scope="session")
def oracle_api() -> Iterator[FakeApiServer]:
    """`claude -p`'s own fake API: with it, a case runs both sides at once and their
    requests stay apart."""
    server = FakeApiServer().start()
    yield server
    server.shutdown()
    server.server_close()


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
    effects are kept in the Pair."""
    from slash_space import side_effects, snapshot

    their_stdin = stdin if their_stdin is None else their_stdin
    boxes = [sandbox, sandbox.twin() if twin else sandbox]
    runs = [
        ([sys.executable, "-m", "claude_print", "--claude-binary", binary, *ours], stdin, fake_api),
        ([binary, "-p", *theirs], their_stdin, oracle_api),
    ]
    starts = [len(api.requests) for _, _, api in runs]
    before = [snapshot(box.home.parent) for box in boxes] if twin else []
    procs = [
        subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=box.project,
            env=box.env(ANTHROPIC_BASE_URL=api.url, **(env or {})),
        )
        for (argv, data, api), box in zip(runs, boxes)
    ]
    # Both at once: claude -p gives up on a stdin that brings nothing in 3 s, so its
    # input must not wait until claude-print has finished (a race under load).
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        talks = [
            pool.submit(proc.communicate, data, RUN_TIMEOUT)
            for proc, (_, data, _) in zip(procs, runs)
        ]
    done = []
    try:
        for talk, proc, (argv, _, _) in zip(talks, procs, runs):
            out, err = talk.result()
            done.append(subprocess.CompletedProcess(argv, proc.returncode, out, err))
    finally:  # a hung side must not outlive the test (claude-print's own timeout is 1 h)
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    requests = [
        [r for r in api.requests[start:] if not r["side"]]
        for start, (_, _, api) in zip(starts, runs)
    ]
    if not twin:
        return Pair(done[0], done[1], requests[0], requests[1])
    changes = [side_effects(b, snapshot(box.home.parent)) for b, box in zip(before, boxes)]
    return Pair(done[0], done[1], requests[0], requests[1], changes[0], changes[1])
