"""Exact by construction, checked mechanically: the TUI's boot under `strace -f`, and
every file it opens, stats or lists must be covered by the warm start's fingerprint
(fingerprint.py), be part of its key (warm.key: the binary, claude-print's own files,
the environment), or be on the short reviewed list below (system files, caches, the
session's own output). A release that reads a new file fails here, instead of a warm
run answering from a stale read.

Listed is not covered (issue 41): every traced path the fingerprint claims is then
changed in the sandbox (a file rewritten, a new entry in a directory, an absent path made
and rewritten) and restored, and the key must change. The sandbox is furnished first, so
the boot reads files that exist. The TUI starts once, under strace; the rest is key
computations.

Skipped where strace is missing (apt-get install strace)."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
from pathlib import Path
from typing import Callable, Dict, List, Set, Tuple

import pytest
from harness import Sandbox, run_dir
from warm_helpers import git, stop_keepers, warm_env, warm_up_until_ready

from claude_print.warm_start import fingerprint

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.matrix,
    pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed"),
]

CALLS = (
    "open,openat,openat2,stat,lstat,newfstatat,statx,access,faccessat,faccessat2,"
    "readlink,readlinkat,execve"
)
_CALL = re.compile(r'^(?:\d+\s+)?(\w+)\((?:AT_FDCWD, |(\d+), )?"((?:[^"\\]|\\.)*)"')


# Reviewed: what is read in the project's .git (by the TUI itself and by the git it runs)
# and is not the fingerprint's own (its config and the default branch's refs are, and are
# proven by a change like every path it claims). (path in .git, why)
GIT_DIR = [
    ("", "the repository: git status (the key's) finds it"),
    ("HEAD", "the current branch: git status --branch, in the key"),
    ("refs/heads/", "the branches: the current one's commit is git status's branch.oid"),
    ("refs", "git looks at the refs: its answer is git status's"),
    ("refs/tags", "tags: not in the system prompt"),
    ("objects/", "git's object store: the commits git status's branch.oid names"),
    ("objects", "the same"),
    ("index", "the index: git status's staged and unstaged files"),
    ("info/", "git's own exclude file: git status is fingerprinted"),
    ("info", "the same"),
    ("hooks", "git looks for hooks: none run by git status (hooksPath is /dev/null)"),
    ("branches", "a legacy remotes dir git looks at: git status"),
    ("branches/origin", "a legacy remote's definition (git remote get-url): the URL is not sent"),
    ("refs/heads", "the branches: the current one's commit is git status's branch.oid"),
    *[
        (name, "git resolving the name HEAD by its lookup rules: absent, HEAD is .git/HEAD")
        for name in ("refs/HEAD", "refs/tags/HEAD", "refs/remotes/HEAD", "refs/remotes/HEAD/HEAD")
    ],
    ("remotes/", "a legacy remote's definition (git remote get-url): the URL is not sent"),
    ("worktrees", "git looks for linked worktrees: git status"),
    ("commondir", "absent in a repository (a worktree's: its config is fingerprinted)"),
    ("config.lock", "looked at (not read) by the TUI's checks of the repository"),
    ("config.worktree.lock", "the same"),
    *[
        (name, "git status --short (the TUI's) looks for an operation in progress: not shown")
        for name in (
            "BISECT_LOG",
            "CHERRY_PICK_HEAD",
            "REVERT_HEAD",
            "MERGE_HEAD",
            "rebase-apply",
            "rebase-merge",
            "sequencer/",
        )
    ],
]


def in_git_dir(path: str, project: Path) -> bool:
    """A path of the project's .git on GIT_DIR: exactly, or below a name ending in "/"."""
    dot_git = str(project / ".git")
    if not (path == dot_git or path.startswith(dot_git + "/")):
        return False
    rel = os.path.relpath(path, dot_git) if path != dot_git else ""
    return any(rel == name or (name.endswith("/") and rel.startswith(name)) for name, _ in GIT_DIR)


# Reviewed: read at start, yet no input of the session a warm run could get stale.
# (path prefix, why)
def excused(home: Path, project: Path, tmp: Path, binary: str) -> List[Tuple[str, str]]:
    claude = home / ".claude"
    install = str(Path(binary).resolve().parent.parent.parent)  # the npm package dir
    # The path the run names it by, when the cache is reached through a symlink (a CI
    # home whose ~/.cache links elsewhere: the TUI execs and reads it by that path).
    named = str(Path(binary).parent.parent.parent)
    return [
        ("/proc/", "the process's own state"),
        ("/sys/", "the machine"),
        ("/dev/", "devices, the terminal"),
        ("/usr/", "system programs and libraries"),
        ("/lib", "system libraries"),
        ("/etc/ld.so.", "the dynamic linker"),
        ("/etc/netsvc.conf", "name service"),
        ("/etc/svc.conf", "name service"),
        ("/etc/ssl/", "TLS roots: the transport, not the request"),
        ("/etc/ca-certificates", "TLS roots"),
        ("/etc/localtime", "the time zone: in the date line of the fingerprint"),
        ("/etc/passwd", "the user: uid is in the key"),
        ("/etc/group", "groups: in the key"),
        ("/etc/nsswitch.conf", "name service"),
        ("/etc/hosts", "name service"),
        ("/etc/resolv.conf", "name service"),
        ("/etc/os-release", "the OS (the key holds the machine's binary)"),
        ("/etc/gitconfig", "git's system config: git status is fingerprinted"),
        (install, "the Claude Code binary: in the key by path, size and mtime"),
        (named, "the same, by the path the run names it"),
        (str(tmp), "the run's temp dir: claude-print's own files, made from the key"),
        (str(claude / "projects"), "transcripts: the session is new"),
        (str(claude / "todos"), "the session's own todo files"),
        (str(claude / "shell-snapshots"), "the shell snapshot a session writes"),
        (str(claude / "statsig"), "feature-flag cache (nonessential traffic is off)"),
        (str(claude / "session-env"), "the session's own environment files"),
        (str(claude / "file-history"), "the session's file history"),
        (str(claude / "debug"), "debug logs"),
        (str(claude / "plans"), "the session's plans"),
        (str(claude / "tasks"), "the session's tasks"),
        (str(claude / "ide"), "IDE lock files: none in a headless run"),
        (str(claude / "plugins"), "plugins: a run with any plugin is cold (cold_reason)"),
        (str(claude / ".credentials.json"), "the login: used per request, not at start"),
        (str(home / ".claude.json"), "the session's parts are fingerprinted"),
        (str(project / ".gitignore"), "git's ignore rules: git status is fingerprinted"),
        *[
            (str(d / n), "git's own files, up the tree: git status is fingerprinted")
            for d in project.parents
            for n in (".git", ".gitignore")
        ],
        *[
            (str(project / n), "git asks whether the project is a bare repository")
            for n in ("HEAD", "config", "hooks", "objects", "refs")
        ],
        (str(project / ".claude" / "hooks"), "hook scripts: run (and read) when a hook fires"),
        (str(claude / "local"), "where a local install would be: the binary is the key's"),
        (str(claude / "state"), "the state directory looked at"),
        (str(project / ".claude" / ".git"), "git looks for a repository: git status"),
        (str(home / ".config" / "git"), "git's user config: git status is fingerprinted"),
        ("/etc/gitconfig", "git's system config: git status"),
        ("/etc/ssh/", "ssh, for git remotes: transport"),
        ("/root/.ssh/", "ssh, for git remotes: transport"),
        (str(home / ".ssh"), "ssh, for git remotes: transport"),
        (str(home / ".netrc"), "HTTP credentials: transport"),
        ("/etc/gnutls/", "TLS: transport"),
        ("/etc/host.conf", "name service"),
        ("/etc/services", "name service"),
        ("/etc/machine-id", "the machine's id: the machine is the key's"),
        ("/etc/selinux/", "the machine"),
        ("/.dockerenv", "the machine"),
        ("/home/claude/.claude/remote/", "a fixed path of remote sessions, not this user's"),
        (str(claude / "cache"), "caches (changelog, model catalog)"),
        (str(claude / "backups"), "the TUI's own backups of ~/.claude.json"),
        (str(home / ".claude.json."), "the TUI's own writes of ~/.claude.json (tmp, lock)"),
        (str(claude / "sessions"), "the session's own state"),
        (str(claude / "jobs"), "the session's own jobs"),
        (str(claude / "dev-mods"), "the session's own files"),
        (str(claude / "themes"), "the screen's colours: not the request"),
        (str(claude / "state" / "repeat-command-"), "a nag's counters: the screen"),
        (str(claude / "state" / "unattended-serving-consent.json"), "a consent the screens ask"),
        (str(claude / ".last-update-result.json"), "the updater (off)"),
        (str(project / "git@github.com:"), "the plugin marketplace's name looked up as a path"),
        (str(project / "https:"), "the plugin marketplace's URL looked up as a path"),
    ]


# Reviewed: read in the walk of the project's subdirectories (FURNISHING has some; the
# project's own top is the fingerprint's). (file name, why: measured by the pid's execve)
WALKED = {
    ".git": "git (status, ls-files) looks for nested repositories: the key holds git status",
    ".gitignore": "git (status, ls-files) and rg honour it: the key holds git status",
    ".ignore": "rg --files --hidden <project> (2.1.197, 2.1.270): the @-mention file list",
    ".rgignore": "rg --files --hidden <project> (2.1.197, 2.1.270): the @-mention file list",
}


def walked(path: str, project: Path) -> bool:
    """Below a subdirectory of the project, a name of WALKED (or under it)."""
    if not _under(path, str(project)):
        return False
    return any(part in WALKED for part in os.path.relpath(path, project).split(os.sep)[1:])


def _under(path: str, prefix: str) -> bool:
    """`prefix` names a path or (ending in "/", "-" or ".", or "/lib") a family of them."""
    if path == prefix.rstrip("/"):
        return True
    if prefix.endswith(("/", "-", ".", ":")) or prefix == "/lib":
        return path.startswith(prefix)
    return path.startswith(prefix + "/")


def traced_paths(log: Path, cwd: str) -> Set[str]:
    found: Set[str] = set()
    for line in log.read_text(errors="replace").splitlines():
        match = _CALL.match(line)
        if not match or match.group(2) is not None:
            continue  # relative to another directory's descriptor: not a name we can judge
        path = match.group(3).encode().decode("unicode_escape")
        found.add(os.path.normpath(os.path.join(cwd, path)))
    return found


PROBE = "claude-print-probe.md"


# Reviewed: claimed by the fingerprint, read by the TUI, yet not changed here. (prefix, why)
NOT_CHANGED: List[Tuple[str, str]] = [
    (
        fingerprint.MANAGED_DIR,
        "the administrator's files: a test does not write /etc on a shared machine "
        "(changes shown by tests/warm_start: test_managed_files_show)",
    ),
]


def proven_by_change(claimed: List[str], sandbox: Sandbox, environ: Dict[str, str]) -> List[str]:
    """The paths the fingerprint claims, each changed in turn (a file rewritten, a new
    entry in a directory, an absent path made and then rewritten) and restored: those
    whose change left the key as it was, with the change. A path above the sandbox is not
    written (other jobs share the machine): the same name in the sandbox's own top
    directory (read the same way, one directory down the same walk) must have been proven."""
    project = sandbox.project
    top = str(project.parent)  # the test's own directory: home, project and tmp are in it
    user_state = environ.get("CLAUDE_CONFIG_DIR") or environ["HOME"]
    user_state = os.path.join(user_state, ".claude.json")
    roots = set(fingerprint.trees(str(project), environ, []))

    def key() -> Dict[str, str]:
        return fingerprint.take(str(project), environ, lambda: "d")  # the product's git

    before = key()
    unseen: List[str] = []
    proven: Set[str] = set()
    outside: List[str] = []
    for path in claimed:
        if not _under(path, top):
            outside.append(path)
            continue
        missed = _change_missed(path, key, user_state, path in roots)
        if missed:
            unseen.append(f"{path}: {missed}")
        else:
            proven.add(path)
    by_counterpart = 0
    for path in outside:
        if any(_under(path, prefix) for prefix, _ in NOT_CHANGED):
            continue
        above = next(d for d in map(str, Path(top).parents) if os.path.commonpath([d, path]) == d)
        counterpart = os.path.join(top, os.path.relpath(path, above))
        if counterpart in proven:
            by_counterpart += 1
            continue
        unseen.append(f"{path}: above the sandbox, and {counterpart} was not proven")
    after = key()
    if after != before:
        unseen.append(f"the sandbox was not restored: the key went from {before} to {after}")
    print(
        f"claimed {len(claimed)}: proven by a change {len(proven)}, by their counterpart "
        f"{by_counterpart}, not changed (reviewed) {len(outside) - by_counterpart}"
        f" {sorted(p for p in outside if any(_under(p, x) for x, _ in NOT_CHANGED))}"
    )
    return unseen


def _change_missed(
    path: str, key: Callable[[], Dict[str, str]], user_state: str, root: bool
) -> str:
    """Empty when a change of `path` changes the key; else the change it missed.
    Everything is put back as it was (content, times; what was made, removed)."""
    undo: List[Callable[[], object]] = []
    try:
        parent = os.path.dirname(path)
        missing = []
        while not os.path.lexists(parent):
            missing.append(parent)
            parent = os.path.dirname(parent)
        for existing in [parent] + ([path] if os.path.lexists(path) else []):
            undo.append(_times_restorer(existing))
        for directory in reversed(missing):
            os.mkdir(directory)
            undo.append(functools.partial(os.rmdir, directory))
        base = key()
        if os.path.isdir(path):
            entry = os.path.join(path, PROBE)
            Path(entry).write_bytes(b"probe\n")
            undo.append(lambda: os.unlink(entry))
            return "" if key() != base else "a new entry in the directory"
        if os.path.isfile(path):
            original = Path(path).read_bytes()
            undo.append(lambda: Path(path).write_bytes(original))
            Path(path).write_bytes(_rewritten(path, original, user_state))
            return "" if key() != base else "its content rewritten"
        if os.path.lexists(path):
            return "neither a file nor a directory: not changed by this test"
        if root:  # a tree the fingerprint lists: made as a directory, then a file in it
            os.mkdir(path)
            undo.append(lambda: os.rmdir(path))
            made = key()
            if made == base:
                return "made (an empty directory)"
            entry = os.path.join(path, PROBE)
            Path(entry).write_bytes(b"probe\n")
            undo.append(lambda: os.unlink(entry))
            return "" if key() != made else "a file made in it"
        one, two = _made(path)
        Path(path).write_bytes(one)
        undo.append(lambda: os.unlink(path))
        made = key()
        if made == base:
            return "made"
        Path(path).write_bytes(two)
        return "" if key() != made else "rewritten, once made"
    finally:
        for step in reversed(undo):
            step()


def _times_restorer(path: str) -> Callable[[], None]:
    st = os.lstat(path)
    return lambda: os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)


def _made(path: str) -> Tuple[bytes, bytes]:
    """What an absent file is made with, then rewritten to: git's refs as git writes them
    (packed-refs: the lines of the refs a branch lookup names), else two texts."""
    if os.path.basename(path) == "packed-refs":
        line = "1" * 40 + " refs/remotes/origin/{}\n"
        return line.format("main").encode(), line.format("master").encode()
    if "/.git/refs/" in path and path.endswith("/HEAD"):
        return b"ref: refs/remotes/origin/main\n", b"ref: refs/remotes/origin/master\n"
    return b"probe one\n", b"probe two\n"


def _rewritten(path: str, original: bytes, user_state: str) -> bytes:
    """Another content for the file, as a user would write it: a JSON object with one more
    key (~/.claude.json: an MCP server, what of it a session reads), else a comment line
    more (Markdown, git config, ignore files)."""
    try:
        data = json.loads(original)
    except ValueError:
        data = None
    if isinstance(data, dict):
        if path == user_state:
            servers = data.setdefault("mcpServers", {})
            servers["claude-print-probe"] = {"command": "true"}
        else:
            data["claudePrintProbe"] = True
        return json.dumps(data, indent=2).encode()
    return original + b"\n# claude-print probe\n"


# What a user's setup holds, so the boot reads files that exist (each then rewritten by
# the check, not only made): memory with an import, rules, a skill, an agent, a command,
# an output style, settings, at the user's level and the project's.
FURNISHING = {
    "project/CLAUDE.md": "Be brief. See @docs/notes.md\n",
    "project/docs/notes.md": "Notes.\n",
    "project/.claude/settings.json": '{"env": {"PROBE_SETTING": "1"}}\n',
    "project/.claude/rules/style.md": "Short lines.\n",
    "project/.claude/skills/tidy/SKILL.md": "---\nname: tidy\ndescription: Tidy up.\n---\nTidy.\n",
    "project/.claude/agents/helper.md": "---\nname: helper\ndescription: Helps.\n---\nHelp.\n",
    "project/.claude/commands/hello.md": "Say hello.\n",
    "project/.claude/output-styles/plain.md": "---\nname: plain\n---\nPlain.\n",
    "home/.claude/CLAUDE.md": "Be kind.\n",
    "home/.claude/settings.json": "{}\n",
    "home/.claude/rules/mine.md": "Mine.\n",
    "home/.claude/skills/fold/SKILL.md": "---\nname: fold\ndescription: Fold.\n---\nFold.\n",
    "home/.claude/agents/critic.md": "---\nname: critic\ndescription: Critic.\n---\nCrit.\n",
    "home/.claude/commands/bye.md": "Say bye.\n",
}


@pytest.fixture
def strace_binary(tmp_path: Path, real_claude: str) -> Tuple[str, Path]:
    log = tmp_path / "strace.log"
    wrapper = tmp_path / "bin" / "claude"
    wrapper.parent.mkdir()
    wrapper.write_text(
        f'#!/bin/sh\ncase "$1" in --version) exec "{real_claude}" "$@";; esac\n'
        f'exec strace -f -qq -s 4096 -e trace={CALLS} -o "{log}" "{real_claude}" "$@"\n'
    )
    wrapper.chmod(0o755)
    return str(wrapper), log


@pytest.mark.between
def test_the_tui_reads_nothing_the_fingerprint_misses(
    sandbox: Sandbox, real_claude: str, strace_binary: Tuple[str, Path]
) -> None:
    wrapper, log = strace_binary
    project = sandbox.project
    git(project, "init", "-q", "-b", "main")
    for name, text in FURNISHING.items():
        (project.parent / name).parent.mkdir(parents=True, exist_ok=True)
        (project.parent / name).write_text(text)
    env = warm_env(sandbox)
    flags = ["--output-format", "json"]
    try:
        warm_up_until_ready(sandbox, wrapper, env, flags, project, limit=120)
    finally:
        stop_keepers(sandbox)
    read = traced_paths(log, str(project))
    assert read, log.read_text()[:2000]
    environ = sandbox.env(**env)
    parts = list(fingerprint._parts(str(project), environ, lambda: "d", lambda c, e: b"", []))
    covered = {part.split(" ")[0] for part in parts}
    roots = fingerprint.trees(str(project), environ, [])
    reasons = excused(sandbox.home, project, sandbox.tmp, real_claude)
    path_dirs = [d for d in environ.get("PATH", "").split(os.pathsep) if d]
    reasons += [(d, "programs on PATH: PATH is in the key") for d in [*path_dirs, "/bin", "/sbin"]]
    missed, claimed = [], []
    for path in sorted(read):
        if path in covered or any(path == r or path.startswith(r + "/") for r in roots):
            claimed.append(path)  # the fingerprint claims it: proven below, by a change
            continue
        if any(_under(path, prefix) for prefix, _ in reasons) or walked(path, project):
            continue
        if in_git_dir(path, project):
            continue
        if path == "/" or any(c.startswith(path + "/") for c in [*covered, *roots]):
            continue  # a directory above what is covered: looked at on the way
        if str(project).startswith(path + "/") or path == str(project):
            continue  # the directories up to the project: looked at for the memory files
        if _under(path, str(run_dir(sandbox))):
            continue  # claude-print's own sockets and Claude Code's (cc-socks)
        missed.append(path)
    assert not missed, "\n".join(missed)
    unseen = proven_by_change(claimed, sandbox, environ)
    assert not unseen, "changed, yet the key stayed the same:\n" + "\n".join(unseen)
