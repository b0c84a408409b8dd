"""Never end Claude Code while it renews a stored subscription login.

A login from `claude /login` (`~/.claude/.credentials.json`) holds a short-lived access
token and a single-use refresh token. Claude Code renews it 5 minutes before expiry under
a lock, `<config dir>/.oauth_refresh.lock` (a directory, with a legacy twin
`<config dir>.lock`), held from before it sends the refresh token until the new pair is
stored; runs sharing the login wait on it and then read the new pair. So parallel runs do
not race (measured, 2.1.197 and 2.1.331, 20 at once: one token request a batch, for
`claude -p` and claude-print alike).

What does lose the login is a run ended inside that window: the server has used up the
old refresh token, the new one dies with the process, and every later run on that login
is logged out ("Not logged in · Please run /login"). SIGTERM is enough (measured, both
releases, `claude -p` under timeout(1) and claude-print --timeout alike). So before
claude-print asks its TUI to exit, it waits while that lock is held, up to Claude Code's
own 30 s timeout for the token request.
"""

from __future__ import annotations

import os
import time
from typing import Callable, List, Mapping, Optional

LOCK_NAME = ".oauth_refresh.lock"
# Claude Code's own time limit for the token request (both releases): a refresh still
# holding the lock after it has failed anyway.
REQUEST_TIMEOUT = 30.0
# Older than this the lock is a dead holder's (2.1.331 takes it over after 60 s; its
# holder touches it every 5 s, 2.1.197's never does, so age alone cannot say more).
STALE_AFTER = 60.0
POLL = 0.1


def config_dir(environ: Mapping[str, str]) -> str:
    """Where Claude Code keeps `.credentials.json` and its refresh lock."""
    configured = environ.get("CLAUDE_CONFIG_DIR")
    if configured:
        return configured
    home = environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".claude")


def lock_paths(environ: Mapping[str, str]) -> List[str]:
    directory = config_dir(environ)
    return [os.path.join(directory, LOCK_NAME), os.path.realpath(directory) + ".lock"]


def refresh_in_flight(environ: Mapping[str, str], now: Optional[float] = None) -> bool:
    """Whether a Claude Code process holds the refresh lock of this login (and not a dead
    one's leftover)."""
    now = time.time() if now is None else now
    for path in lock_paths(environ):
        try:
            age = now - os.stat(path).st_mtime
        except OSError:
            continue
        if age < STALE_AFTER:
            return True
    return False


def wait_for_refresh(
    environ: Mapping[str, str],
    wait: Callable[[float], bool],
    limit: Optional[float] = None,
    clock: Callable[[], float] = time.monotonic,
) -> float:
    """Wait while a refresh is in flight, at most `limit` seconds (REQUEST_TIMEOUT).
    `wait(seconds)` waits (reading the TUI's output, so it is never blocked on a full
    terminal) and returns True once the TUI has gone. Returns the seconds waited."""
    limit = REQUEST_TIMEOUT if limit is None else limit
    started = clock()
    while refresh_in_flight(environ):
        left = limit - (clock() - started)
        if left <= 0 or wait(min(POLL, left)):
            break
    return clock() - started
