"""The root conftest: the fixtures every test folder may use (the fake Messages API,
throw-away sandboxes, the real Claude Code releases, the built .pyz, a hook relay), the
order and selection of the e2e cases, and the check that no process outlives the session.

tests/support (helpers and helper programs, no tests) goes on sys.path here, so a test
imports them by name: `from harness import Sandbox`, `from fake_api import FakeApiServer`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

SUPPORT = Path(__file__).resolve().parent / "support"
sys.path.insert(0, str(SUPPORT))
# Their asserts explain themselves as a test's own do (the modules are not imported yet).
pytest.register_assert_rewrite(*sorted(p.stem for p in SUPPORT.glob("*.py")))

from fake_api import FakeApiServer, seed_home  # noqa: E402
from harness import (  # noqa: E402
    TESTS,
    Sandbox,
    build_pyz,
    claude_release,
    real_claude_paths,
    remove_run_dir,
)
from tiers import releases_marked, runs_on  # noqa: E402

from claude_print.hooks.relay import Relay  # noqa: E402


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


def _version_key(release: str) -> Tuple[int, ...]:
    return tuple(int(part) for part in (release or "0.0.0").split("."))


def newest_release() -> str:
    """The newest Claude Code the e2e tests drive in this run: the only one that takes the
    `newest_only` cases (the rest of a space beyond its sample)."""
    return max((claude_release(path) for path in real_claude_paths()), key=_version_key)


# CLAUDE_PRINT_TEST_FULL=1 (`scripts/test --full`): every e2e case on every release, the
# whole of each space; without it (CI) the tiers of tests/matrix.txt (support/tiers.py).
FULL = os.environ.get("CLAUDE_PRINT_TEST_FULL", "") not in ("", "0")


def _runs_on(item: pytest.Item, newest: str, core: List[str], between: List[str]) -> bool:
    """tiers.runs_on for a collected case; a test that drives no release always runs."""
    callspec = getattr(item, "callspec", None)
    binary = callspec.params.get("real_claude") if callspec is not None else None
    if binary is None:
        return True
    marks = {mark.name for mark in item.iter_markers()}
    release = claude_release(str(binary))
    return runs_on(release, marks, newest=newest, core=core, between=between, full=FULL)


def _cost_rank(item: pytest.Item) -> int:
    """Slow tests first, then the rest of the e2e tests, then the fast ones: the longest
    work starts first and the short tests fill the workers' tails (xdist's work stealing
    takes from the end of a worker's queue)."""
    if item.get_closest_marker("slow") is not None:
        return 0
    return 1 if item.get_closest_marker("e2e") is not None else 2


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    matrix = TESTS / "matrix.txt"
    core, between = releases_marked("core", matrix), releases_marked("between", matrix)
    newest = newest_release()
    keep: List[pytest.Item] = []
    drop: List[pytest.Item] = []
    for item in items:
        (keep if _runs_on(item, newest, core, between) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    keep.sort(key=_cost_rank)  # stable: each group keeps pytest's order
    items[:] = keep


# --- where CI's CPU goes ------------------------------------------------------------------


def _cpu_seconds() -> float:
    """This worker's CPU and that of the children it waited for (each waited for its own:
    a claude-print run's TUI is in it), user and system."""
    import resource

    own, children = (
        resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Iterator[None]:
    """CLAUDE_PRINT_TEST_CPU_LOG=FILE: a line per test, its CPU-seconds (setup to teardown)
    and its wall seconds. The suite is CPU-bound on 2 cores, so this, not the wall time
    (`--durations`, inflated by the other workers), says what a test costs CI."""
    log = os.environ.get("CLAUDE_PRINT_TEST_CPU_LOG")
    if not log:
        yield
        return
    cpu, wall = _cpu_seconds(), time.monotonic()
    yield
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"{_cpu_seconds() - cpu:.2f} {time.monotonic() - wall:.2f} {item.nodeid}\n")


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


@pytest.fixture
def sandbox(tmp_path: Path, fake_api: FakeApiServer) -> Iterator[Sandbox]:
    home, project, tmp = tmp_path / "home", tmp_path / "project", tmp_path / "tmp"
    for d in (home, project, tmp):
        d.mkdir()
    seed_home(home)
    box = Sandbox(home, project, tmp, fake_api.url)
    yield box
    # Its runtime dir is in /tmp (harness.run_dir); the fixtures built on the sandbox
    # (warm_sandbox: the keepers stopped) have ended before this.
    remove_run_dir(box)


@pytest.fixture
def relay(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Relay]:
    """A hook relay in the test's tmp_path, closed after the test. A test module gives the
    Relay's other arguments as RELAY_OPTIONS (`{"asking": (...,)}`, `{"structured": True}`)."""
    options: Dict[str, Any] = getattr(request.module, "RELAY_OPTIONS", {})
    relay = Relay(tmp_root=str(tmp_path), **options)
    yield relay
    relay.close()


@pytest.fixture(scope="session")
def oracle_api() -> Iterator[FakeApiServer]:
    """`claude -p`'s own fake API: with it, a case runs both sides at once and their
    requests stay apart."""
    server = FakeApiServer().start()
    yield server
    server.shutdown()
    server.server_close()
