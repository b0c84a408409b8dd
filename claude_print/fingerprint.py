"""What a TUI reads at its start that a warm one would have read too early.

A warm TUI (warm.py) was started before its prompt came. Whatever Claude Code read at its
start and puts into the model's request must not have changed since: the memory files
(every CLAUDE.md and rules file it loads), the settings files, `.mcp.json`, the skills,
agents, commands and output styles it lists, the git state of the system prompt (branch,
status, recent commits) and the date. `take` sums them up in one string; the keeper
records it before it spawns its TUI and the adopting run recomputes it: any difference
means a cold run. Taken before the spawn, a change that lands while the TUI is reading
shows as a difference, never as a stale match.

It must be cheap (it is on the warm path): small files are hashed, directories are
listed with their stat, git runs once.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import time
from typing import Callable, Iterator, List, Mapping, Optional

from claude_print.user_hooks import MANAGED_SETTINGS

HASHED_UP_TO = 256 * 1024  # bytes; a larger file is known by its stat
LISTED_UP_TO = 2000  # entries per tree; more and the tree counts as changed every time
GIT_WAIT = 5.0  # seconds
# Per directory from the cwd up to /: the memory files Claude Code loads.
MEMORY_FILES = ("CLAUDE.md", "CLAUDE.local.md", os.path.join(".claude", "CLAUDE.md"))
# Trees under a config dir and under the project's .claude: their files are read at start.
TREES = ("rules", "skills", "agents", "commands", "output-styles")
PROJECT_FILES = (".mcp.json",)
CONFIG_FILES = ("CLAUDE.md", "settings.json")


def take(
    cwd: str,
    environ: Mapping[str, str],
    today: Callable[[], str] = lambda: time.strftime("%Y-%m-%d"),
    git: Optional[Callable[[str, Mapping[str, str]], bytes]] = None,
) -> str:
    """The fingerprint of what a TUI started now in `cwd` would read."""
    digest = hashlib.sha256()
    for part in _parts(cwd, environ, today, git or git_state):
        digest.update(part.encode("utf-8", "surrogateescape"))
        digest.update(b"\0")
    return digest.hexdigest()


def _parts(
    cwd: str,
    environ: Mapping[str, str],
    today: Callable[[], str],
    git: Callable[[str, Mapping[str, str]], bytes],
) -> Iterator[str]:
    yield "date " + today()
    home = environ.get("HOME") or os.path.expanduser("~")
    config_dir = environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    for directory in _upwards(cwd):
        for name in MEMORY_FILES:
            yield _file(os.path.join(directory, name))
    project = os.path.join(cwd, ".claude")
    for name in ("settings.json", "settings.local.json"):
        yield _file(os.path.join(project, name))
    for name in PROJECT_FILES:
        yield _file(os.path.join(cwd, name))
    for name in CONFIG_FILES:
        yield _file(os.path.join(config_dir, name))
    yield _file(MANAGED_SETTINGS)
    for base in (config_dir, project):
        for tree in TREES:
            yield from _tree(os.path.join(base, tree))
    for name in (".gitconfig", os.path.join(".config", "git", "config")):
        yield _file(os.path.join(home, name))  # the git user name of the system prompt
    yield "git " + hashlib.sha256(git(cwd, environ)).hexdigest()


def _upwards(cwd: str) -> List[str]:
    out = [cwd]
    while True:
        parent = os.path.dirname(out[-1])
        if parent == out[-1]:
            return out
        out.append(parent)


def _file(path: str) -> str:
    """A file as it is now: absent, its content's hash, or (large, special) its stat."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"{path} -{exc.errno}"
    if not stat.S_ISREG(st.st_mode) or st.st_size > HASHED_UP_TO:
        return f"{path} {st.st_mode:o} {st.st_size} {st.st_mtime_ns} {st.st_ino}"
    try:
        with open(path, "rb") as f:
            return f"{path} {hashlib.sha256(f.read()).hexdigest()}"
    except OSError as exc:
        return f"{path} !{exc.errno}"


def _tree(root: str) -> Iterator[str]:
    """Every entry below `root` with its stat: a file added, removed or rewritten shows."""
    if not os.path.isdir(root):
        yield f"{root} absent"
        return
    count = 0
    for directory, dirs, files in os.walk(root, followlinks=True):
        dirs.sort()
        for name in sorted(files):
            count += 1
            if count > LISTED_UP_TO:
                yield f"{root} too large {time.monotonic_ns()}"  # never equal twice
                return
            path = os.path.join(directory, name)
            try:
                st = os.stat(path)
            except OSError as exc:
                yield f"{path} -{exc.errno}"
                continue
            yield f"{path} {st.st_size} {st.st_mtime_ns} {st.st_ino}"


def git_state(cwd: str, environ: Mapping[str, str]) -> bytes:
    """Branch, HEAD and status as `git status` shows them (what the system prompt's git
    section is made from), without taking git's optional index lock."""
    env = dict(environ, GIT_OPTIONAL_LOCKS="0")  # the TUI's git runs in this environment
    try:
        done = subprocess.run(
            ["git", "status", "--porcelain=v2", "--branch", "-z"],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=GIT_WAIT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"no git: {type(exc).__name__} {time.monotonic_ns()}".encode()
    return done.stdout + f" exit {done.returncode}".encode()
