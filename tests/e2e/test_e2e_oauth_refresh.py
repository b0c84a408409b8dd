"""A stored subscription login whose access token expires, under parallel runs.

Claude Code renews `~/.claude/.credentials.json` with a single-use refresh token; the
fake OAuth server (tests/support/fake_oauth.py) rotates like the real one and, stricter, ends
the old access tokens at each refresh. Parallel runs must renew it once and all answer
(Claude Code serialises the refresh under its own lock: pinned here for claude-print
and `claude -p`), and a run ended while its TUI renews the login (a signal, --timeout)
must not lose the new refresh token: that would log out every later run on the login
(claude_print/tui/oauth_refresh.py).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest
from checks import signalled
from fake_api import FakeApiServer
from fake_oauth import (
    FakeOAuthProxy,
    TokenAuthority,
    make_certificates,
    read_login,
    seed_login,
)
from harness import RUN_TIMEOUT, Sandbox

from claude_print.errors import EXIT_INTERRUPTED, EXIT_TIMEOUT

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PROMPT = "What is 2+2?"
ANSWER = "The answer is 4."
BATCH = 4  # runs started at once, all with the expired login (8 cost 31 CPU-s in CI)
MARGIN = 300  # seconds: Claude Code renews this long before expiresAt (both releases)


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Tuple[Path, Path, Path]:
    return make_certificates(tmp_path_factory.mktemp("oauth-certs"))


class Login:
    """The servers of one test: the token authority, the Messages API that checks its
    tokens, the intercepting proxy for the OAuth hosts."""

    def __init__(self, certificates: Tuple[Path, Path, Path], delay: float) -> None:
        self.authority = TokenAuthority(delay=delay, revoke_on_rotate=True)
        self.api = FakeApiServer().start()
        self.api.authority = self.authority
        self.proxy = FakeOAuthProxy(self.authority, certificates).start()

    def env(self, sandbox: Sandbox) -> Dict[str, str]:
        """The sandbox's environment with the stored login as the only one."""
        sandbox.oauth = True
        env = sandbox.env(ANTHROPIC_BASE_URL=self.api.url, **self.proxy.env())
        env.pop("CLAUDE_CODE_OAUTH_TOKEN")
        return env

    def close(self) -> None:
        for server in (self.api, self.proxy):
            server.shutdown()
            server.server_close()


@pytest.fixture
def login(certificates: Tuple[Path, Path, Path]) -> Iterator[Login]:
    servers = Login(certificates, delay=0.0)
    yield servers
    servers.close()


@pytest.fixture
def slow_login(certificates: Tuple[Path, Path, Path]) -> Iterator[Login]:
    """A token endpoint that takes 8 s (it rotates even if the client has gone)."""
    servers = Login(certificates, delay=8.0)
    yield servers
    servers.close()


def claude_print_argv(binary: str, *extra: str) -> List[str]:
    return [sys.executable, "-m", "claude_print", "--claude-binary", binary, *extra]


def start(argv: List[str], sandbox: Sandbox, env: Dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=sandbox.project,
        env=env,
    )


def run_all(
    argvs: List[List[str]], sandbox: Sandbox, env: Dict[str, str]
) -> List[subprocess.CompletedProcess[bytes]]:
    """Every argv at once; their results in order."""
    procs = [start(argv, sandbox, env) for argv in argvs]
    done = []
    try:
        for argv, proc in zip(argvs, procs):
            out, err = proc.communicate(timeout=RUN_TIMEOUT)
            done.append(subprocess.CompletedProcess(argv, proc.returncode, out, err))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return done


def assert_answered(done: subprocess.CompletedProcess[bytes]) -> None:
    stderr = done.stderr.decode(errors="replace")[-2000:]
    assert done.returncode == 0, f"exit {done.returncode}\nstdout: {done.stdout[-500:]!r}\n{stderr}"
    assert json.loads(done.stdout)["result"] == ANSWER, stderr


def assert_login_works(login: Login, sandbox: Sandbox, env: Dict[str, str], binary: str) -> None:
    """The stored login is the authority's newest pair, and a next run answers with it
    without renewing it again."""
    stored = read_login(sandbox.home)
    assert stored.get("refreshToken") in login.authority.live_refresh, stored
    assert login.authority.access_ok(str(stored.get("accessToken"))), stored
    before = len(login.authority.requests)
    (after,) = run_all([claude_print_argv(binary, "--output-format", "json", PROMPT)], sandbox, env)
    assert_answered(after)
    assert login.authority.requests[before:] == []


# The oldest release takes the expired login; the margin's two sides are Claude Code's
# own timing, measured the same on each release. The oracle (what `claude -p` itself
# does) is a fact of the release: `--full` checks it.
@pytest.mark.parametrize(
    "runner, expires_in",
    [
        ("claude-print", -3600),  # expired an hour ago
        pytest.param(  # still valid, but inside Claude Code's margin
            "claude-print", MARGIN - 180, marks=pytest.mark.newest_only
        ),
        pytest.param(  # outside it: nobody renews
            "claude-print", MARGIN + 300, marks=pytest.mark.newest_only
        ),
        pytest.param(  # the oracle, Claude Code's own serialisation: a fact of the release
            "claude -p", -3600, marks=pytest.mark.newest_only
        ),
    ],
)
def test_parallel_runs_renew_the_login_once(
    real_claude: str, sandbox: Sandbox, login: Login, runner: str, expires_in: int
) -> None:
    seeded = seed_login(sandbox.home, login.authority, expires_in)
    env = login.env(sandbox)
    if runner == "claude -p":
        argv = [real_claude, "-p", "--output-format", "json", PROMPT]
    else:
        argv = claude_print_argv(real_claude, "--output-format", "json", PROMPT)

    batch = run_all([argv] * BATCH, sandbox, env)

    for done in batch:
        assert_answered(done)
    outcomes = [entry["outcome"] for entry in login.authority.requests]
    renews = expires_in < MARGIN
    assert outcomes == (["rotated"] if renews else []), outcomes
    if not renews:  # the same tokens (2.1.331 adds a "subscriptionTypeSource")
        stored = read_login(sandbox.home)
        for key in ("accessToken", "refreshToken", "expiresAt"):
            assert stored[key] == seeded[key], key
    assert_login_works(login, sandbox, env, real_claude)


def test_signal_during_renewal_keeps_the_login(
    real_claude: str, sandbox: Sandbox, slow_login: Login
) -> None:
    """SIGTERM while the TUI waits on the token endpoint: claude-print lets the renewal
    finish before passing the signal on (a TUI ended then would have used up the refresh
    token and stored nothing: `claude -p` loses the login this way)."""
    seed_login(sandbox.home, slow_login.authority, -3600)
    env = slow_login.env(sandbox)
    proc = start(claude_print_argv(real_claude, "--output-format", "json", PROMPT), sandbox, env)

    def renewing() -> None:
        assert slow_login.authority.wait_for_arrival(1, RUN_TIMEOUT), "no token request"

    done = signalled(proc, renewing, signal.SIGTERM, RUN_TIMEOUT)
    assert done.returncode == EXIT_INTERRUPTED, done.stderr.decode(errors="replace")[-2000:]
    assert slow_login.authority.wait_idle(RUN_TIMEOUT)
    assert [e["outcome"] for e in slow_login.authority.requests] == ["rotated"]
    assert_login_works(slow_login, sandbox, env, real_claude)


def test_timeout_during_renewal_keeps_the_login(
    real_claude: str, sandbox: Sandbox, certificates: Tuple[Path, Path, Path]
) -> None:
    """--timeout while the TUI waits on a token endpoint slower than the timeout: the run
    times out, a few seconds late, and the login survives."""
    login = Login(certificates, delay=20.0)
    try:
        seed_login(sandbox.home, login.authority, -3600)
        env = login.env(sandbox)
        argv = claude_print_argv(real_claude, "--timeout", "10", "--output-format", "json")
        (done,) = run_all([[*argv, PROMPT]], sandbox, env)
        assert done.returncode == EXIT_TIMEOUT, done.stderr.decode(errors="replace")[-2000:]
        assert login.authority.arrivals == 1, "the TUI did not renew within the timeout"
        assert login.authority.wait_idle(RUN_TIMEOUT)
        assert [e["outcome"] for e in login.authority.requests] == ["rotated"]
        assert_login_works(login, sandbox, env, real_claude)
    finally:
        login.close()
