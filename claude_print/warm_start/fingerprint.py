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
import json
import os
import re
import stat
import subprocess
import time
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from claude_print.records.transcript import project_slug
from claude_print.warm_start import git_call

HASHED_UP_TO = 256 * 1024  # bytes; a larger file is known by its stat
LISTED_UP_TO = 2000  # entries per tree; more and the tree counts as changed every time
GIT_WAIT = 5.0  # seconds
IMPORT_DEPTH = 5  # Claude Code follows `@path` imports in memory files this deep
# Per directory from the cwd up to /: the memory files Claude Code loads (AGENTS.md:
# 2.1.331 and 2.1.332 look for it, 2.1.197 and 2.1.270 do not (strace of the boot);
# fingerprinted for every release, where it is not read a change only costs a cold run).
# Found by tests/e2e/test_e2e_warm_reads.py (strace of the boot): .claude/AGENTS.md and
# .mcp.json in every parent too (2.1.332).
MEMORY_FILES = (
    "CLAUDE.md",
    "CLAUDE.local.md",
    os.path.join(".claude", "CLAUDE.md"),
    "AGENTS.md",
    os.path.join(".claude", "AGENTS.md"),
)
UPWARD_FILES = (".mcp.json", ".ignore", ".rgignore")
UPWARD_TREES = (os.path.join(".claude", "rules"),)  # 2.1.197 lists every parent's rules
# Trees under a config dir and under the project's .claude: their files are read at start.
TREES = ("rules", "skills", "agents", "commands", "output-styles", "routines", "workflows")
PROJECT_FILES = (
    ".mcp.json",
    os.path.join(".claude", "scheduled_tasks.json"),
    os.path.join(".claude", "launch.json"),
)
CONFIG_FILES = (
    "CLAUDE.md",
    "settings.json",
    "settings.local.json",
    "keybindings.json",
    ".config.json",
    os.path.join("state", "hybrid-settings.json"),
)
# Everything an administrator manages (settings, MCP servers, memory): read at start.
MANAGED_DIR = "/etc/claude-code"
# Flags whose values name files or directories the TUI reads at its start.
FILE_FLAGS = ("--system-prompt-file", "--append-system-prompt-file", "--mcp-config", "--settings")
TREE_FLAGS = ("--plugin-dir",)
PROJECT_FLAGS = ("--add-dir",)  # a directory with memory files and .claude of its own
# ~/.claude.json: what of it changes a session (the rest, counters and last-run figures,
# changes at every start, the keeper's own TUI's too).
USER_STATE_KEYS = (
    "mcpServers",
    "customApiKeyResponses",
    "primaryApiKey",
    "oauthAccount",
    "hasCompletedOnboarding",
    "env",
)
PROJECT_STATE_KEYS = (
    "mcpServers",
    "enabledMcpjsonServers",
    "disabledMcpjsonServers",
    "disabledMcpServers",
    "enabledMcpServers",
    "enableAllProjectMcpServers",
    "allowedTools",
    "mcpContextUris",
    "ignorePatterns",
)
_IMPORT = re.compile(r"(?:^|\s)@((?:[^\s\\]|\\ )+)")


def named(flags: Sequence[str], mcp_configs: Sequence[str] = ()) -> List[Tuple[str, str]]:
    """The (kind, value) pairs of the files and directories the flags name: kind is
    "file", "tree" or "project"."""
    kinds = {**dict.fromkeys(FILE_FLAGS, "file"), **dict.fromkeys(TREE_FLAGS, "tree")}
    kinds.update(dict.fromkeys(PROJECT_FLAGS, "project"))
    out: List[Tuple[str, str]] = []
    kind = ""
    for token in flags:
        if token.startswith("--"):
            name, eq, value = token.partition("=")
            kind = kinds.get(name, "")
            if kind and eq:
                out.append((kind, value))
                kind = ""
        elif kind:
            out.append((kind, token))
    out += [("file", value) for value in mcp_configs]
    return out


def take(
    cwd: str,
    environ: Mapping[str, str],
    today: Callable[[], str] = lambda: time.strftime("%Y-%m-%d"),
    git: Optional[Callable[[str, Mapping[str, str]], bytes]] = None,
    paths: Sequence[Tuple[str, str]] = (),
) -> Dict[str, str]:
    """The fingerprint of what a TUI started now in `cwd` would read; `paths`: what its
    flags name (`named`). By what was read (a path, "date", "git status"), so a keeper
    that declines can say what changed (`changed`)."""
    digests: Dict[str, Any] = {}
    for part in _parts(cwd, environ, today, git or git_state, paths):
        label = part.split(" ", 1)[0]
        digest = digests.setdefault(label, hashlib.sha256())
        digest.update(part.encode("utf-8", "surrogateescape"))
        digest.update(b"\0")
    return {label: digest.hexdigest() for label, digest in digests.items()}


def changed(recorded: Mapping[str, str], now: Mapping[str, str]) -> List[str]:
    """What was read differently between two fingerprints, in reading order."""
    return [label for label in {**recorded, **now} if recorded.get(label) != now.get(label)]


def _parts(
    cwd: str,
    environ: Mapping[str, str],
    today: Callable[[], str],
    git: Callable[[str, Mapping[str, str]], bytes],
    paths: Sequence[Tuple[str, str]],
) -> Iterator[str]:
    yield "date " + today()  # the system prompt's "Today's date"
    home = environ.get("HOME") or os.path.expanduser("~")
    config_dir = environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    for directory in _upwards(cwd):
        for name in MEMORY_FILES:
            yield from _memory(os.path.join(directory, name), home)
        for name in UPWARD_FILES:
            yield _file(os.path.join(directory, name))
    yield from _project(cwd, home)
    for name in CONFIG_FILES:
        yield from _memory(os.path.join(config_dir, name), home)
    for root in trees(cwd, environ, paths):
        yield from _tree(root, home)
    yield _user_state(environ, home, cwd)
    for kind, value in paths:
        path = os.path.join(cwd, os.path.expanduser(value))
        if kind == "project":
            for name in MEMORY_FILES:
                yield from _memory(os.path.join(path, name), home)
            yield from _project(path, home)
        elif not (kind == "tree" or os.path.isdir(path)):
            yield _file(path)
    for name in (".gitconfig", os.path.join(".config", "git", "config")):
        yield _file(os.path.join(home, name))  # the git user name of the system prompt
    top = None
    for directory in _upwards(cwd):
        if os.path.lexists(os.path.join(directory, ".git")):
            top = directory
            break
    if top is not None:  # a repository's own user.name wins over ~/.gitconfig's
        for config in _repo_configs(os.path.join(top, ".git")):
            yield _file(config)
        yield from _default_branch(os.path.join(top, ".git"))
    # Auto-memory (MEMORY.md and what it names), kept per project under the config dir:
    # made or rewritten by a session after the keeper's TUI had read it.
    # The TUI makes the dir empty at its start (2.1.197): only its files count, so a
    # keeper's start, or a warm run's, never makes the next run cold.
    for directory in sorted({cwd, top or cwd}):
        slug = project_slug(os.path.realpath(directory))
        memory = os.path.join(config_dir, "projects", slug, "memory")
        if os.path.isdir(memory):
            yield from _tree(memory, home)
    yield "git " + hashlib.sha256(git(cwd, environ)).hexdigest()


def _repo_configs(dot_git: str) -> List[str]:
    """The config files of the repository whose `.git` this is: a directory's (and its
    config.worktree), or for a worktree or submodule (`.git` a file, "gitdir: <path>") its
    git dir's and the common dir's (where a worktree's shared config lives)."""
    git_dir, found = dot_git, []
    if os.path.isfile(dot_git):
        found.append(dot_git)  # the git dir it names (a directory's stat moves at every git call)
        try:
            with open(dot_git, encoding="utf-8", errors="replace") as f:
                line = f.readline().strip()
        except OSError:
            return [dot_git]
        if not line.startswith("gitdir:"):
            return [dot_git]
        git_dir = os.path.join(os.path.dirname(dot_git), line[len("gitdir:") :].strip())
    found.append(os.path.join(git_dir, "config"))
    # A worktree's own config (extensions.worktreeConfig): read by Claude Code at start
    # (2.1.197, tests/e2e/test_e2e_warm_reads.py), and may hold user.name.
    found.append(os.path.join(git_dir, "config.worktree"))
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8", errors="replace") as f:
            common = os.path.join(git_dir, f.readline().strip())
        found.append(os.path.join(common, "config"))
    except OSError:
        pass
    return found


def _default_branch(dot_git: str) -> Iterator[str]:
    """What the system prompt's "Main branch" is found from, read by Claude Code itself
    and not shown by git status: origin/HEAD's target if that ref exists, else
    origin/main, else origin/master, each a loose ref or a line of packed-refs (found by
    tests/e2e/test_e2e_warm_reads.py: a change of them did not change the key). By
    content: a fetch that moves them makes the next run cold, never a stale one warm."""
    git_dir = dot_git
    if os.path.isfile(dot_git):
        try:
            with open(dot_git, encoding="utf-8", errors="replace") as f:
                line = f.readline().strip()
        except OSError:
            return
        if not line.startswith("gitdir:"):
            return
        git_dir = os.path.join(os.path.dirname(dot_git), line[len("gitdir:") :].strip())
    common = git_dir
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8", errors="replace") as f:
            common = os.path.join(git_dir, f.readline().strip())
    except OSError:
        pass
    origin = os.path.join(common, "refs", "remotes", "origin")
    names = ["HEAD", "main", "master"]
    try:
        with open(os.path.join(origin, "HEAD"), encoding="utf-8", errors="replace") as f:
            target = f.readline().strip()
        if target.startswith("ref: refs/remotes/origin/"):
            names.append(target[len("ref: refs/remotes/origin/") :])
    except OSError:
        pass
    for name in names:
        yield _file(os.path.join(origin, name))
    wanted = {"refs/remotes/origin/" + name for name in names}
    packed = os.path.join(common, "packed-refs")
    try:
        with open(packed, "rb") as f:
            lines = [
                ln
                for ln in f.read().splitlines()
                if ln.split(b" ")[-1].decode("utf-8", "replace") in wanted
            ]
    except OSError as exc:
        yield f"{packed} -{exc.errno}"
        return
    digest = hashlib.sha256(b"\0".join(lines)).hexdigest()
    yield f"{packed} {digest}"


def trees(cwd: str, environ: Mapping[str, str], paths: Sequence[Tuple[str, str]]) -> List[str]:
    """The directories whose every file is fingerprinted by content."""
    home = environ.get("HOME") or os.path.expanduser("~")
    config_dir = environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    bases = [config_dir, os.path.join(cwd, ".claude")]
    xdg_config = environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    roots = [MANAGED_DIR, os.path.join(xdg_config, "anthropic")]  # the Anthropic config
    for kind, value in paths:
        path = os.path.join(cwd, os.path.expanduser(value))
        if kind == "project":
            bases.append(os.path.join(path, ".claude"))
        elif kind == "tree" or os.path.isdir(path):
            roots.append(path)
    roots += [os.path.join(d, tree) for d in _upwards(cwd)[1:] for tree in UPWARD_TREES]
    return roots + [os.path.join(base, tree) for base in bases for tree in TREES]


def _project(directory: str, home: str) -> Iterator[str]:
    """A project directory's own files: its settings and MCP servers (its .claude trees
    are among `trees`)."""
    project = os.path.join(directory, ".claude")
    for name in ("settings.json", "settings.local.json"):
        yield _file(os.path.join(project, name))
    for name in PROJECT_FILES:
        yield _file(os.path.join(directory, name))


def _upwards(cwd: str) -> List[str]:
    out = [cwd]
    while True:
        parent = os.path.dirname(out[-1])
        if parent == out[-1]:
            return out
        out.append(parent)


def _memory(path: str, home: str, depth: int = 0, seen: Optional[Set[str]] = None) -> Iterator[str]:
    """A memory file, and the files it imports (`@path`), followed as Claude Code follows
    them: relative to the importing file, `~` for home, not inside code."""
    seen = set() if seen is None else seen
    if path in seen:
        return
    seen.add(path)
    yield _file(path)
    if depth >= IMPORT_DEPTH:
        return
    for target in _imports(path):
        if target.startswith("~/"):
            target = os.path.join(home, target[2:])
        target = os.path.normpath(os.path.join(os.path.dirname(path), target))
        yield from _memory(target, home, depth + 1, seen)


def _imports(path: str) -> List[str]:
    try:
        with open(path, "rb") as f:
            text = f.read(HASHED_UP_TO).decode("utf-8", "replace")
    except OSError:
        return []
    found: List[str] = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        line = re.sub(r"`[^`]*`", " ", line)  # inline code is not an import
        found += [m.replace("\\ ", " ") for m in _IMPORT.findall(line)]
    return found


def _user_state(environ: Mapping[str, str], home: str, cwd: str) -> str:
    """The parts of ~/.claude.json (or $CLAUDE_CONFIG_DIR/.claude.json) that change a
    session: user MCP servers, the project entries of the cwd and its parents."""
    configured = environ.get("CLAUDE_CONFIG_DIR")
    path = (
        os.path.join(configured, ".claude.json")
        if configured
        else os.path.join(home, ".claude.json")
    )
    try:
        with open(path, "rb") as f:
            state = json.loads(f.read())
    except OSError as exc:
        return f"{path} -{exc.errno}"
    except ValueError:
        return _file(path)  # unreadable as JSON: any change counts
    if not isinstance(state, dict):
        return _file(path)
    # Absent and empty are the same: a TUI's first start in a project writes the
    # project's entry with empty lists (the keeper's own TUI, after its fingerprint).
    kept: Dict[str, Any] = {k: state[k] for k in USER_STATE_KEYS if state.get(k)}
    projects = state.get("projects")
    if isinstance(projects, dict):
        for directory in _upwards(cwd):
            entry = projects.get(directory)
            if isinstance(entry, dict):
                parts = {k: entry[k] for k in PROJECT_STATE_KEYS if entry.get(k)}
                if parts:
                    kept[directory] = parts
    text = json.dumps(kept, sort_keys=True, ensure_ascii=False)
    return f"{path} {hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()}"


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


def _tree(root: str, home: str) -> Iterator[str]:
    """Every file below `root` by content (memory files with their imports): a file
    added, removed or rewritten shows, whatever its size, time or inode."""
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
            if name.endswith(".md"):
                yield from _memory(path, home)
            else:
                yield _file(path)


def git_state(cwd: str, environ: Mapping[str, str]) -> bytes:
    """Branch, HEAD and status as `git status` shows them (what the system prompt's git
    section is made from), without taking git's optional index lock."""
    return git_started(cwd, environ)(cwd, environ)


def git_started(cwd: str, environ: Mapping[str, str]) -> Callable[[str, Mapping[str, str]], bytes]:
    """`git status` started now, in the background: a warm run overlaps it with its other
    work. Returns `take`'s `git`, which waits for it."""
    # Hardened, and found by absolute PATH entries only: nothing of the repository runs.
    command = git_call.argv(environ, "status", "--porcelain=v2", "--branch", "-z")
    proc: Optional[subprocess.Popen[bytes]] = None
    failure = "FileNotFoundError"  # no git on the absolute PATH entries: never equal
    try:
        if command is not None:
            proc = subprocess.Popen(
                command,
                cwd=cwd,
                env=git_call.env(environ),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            failure = ""
    except OSError as exc:
        proc, failure = None, type(exc).__name__

    done: List[bytes] = []

    def result(_cwd: str, _environ: Mapping[str, str]) -> bytes:
        """Its output (waited for once; later calls give the same)."""
        if not done:
            done.append(_finish(proc, failure))
        return done[0]

    return result


def _finish(proc: Optional[subprocess.Popen[bytes]], failure: str) -> bytes:
    if proc is None:
        return f"no git: {failure} {time.monotonic_ns()}".encode()
    try:
        out, _ = proc.communicate(timeout=GIT_WAIT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return f"no git: TimeoutExpired {time.monotonic_ns()}".encode()
    return out + f" exit {proc.returncode}".encode()
