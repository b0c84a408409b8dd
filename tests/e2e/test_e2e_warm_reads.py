"""Exact by construction, checked mechanically: the TUI's boot under `strace -f`, and
every file it opens, stats or lists must be covered by the warm start's fingerprint
(fingerprint.py), be part of its key (warm.key: the binary, claude-print's own files,
the environment), or be on the short reviewed list below (system files, caches, the
session's own output). A release that reads a new file fails here, instead of a warm
run answering from a stale read.

Skipped where strace is missing (apt-get install strace)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import List, Set, Tuple

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
        (str(project / ".git"), "git state: git status is fingerprinted"),
        *[
            (str(d / n), "git's own files, up the tree: git status is fingerprinted")
            for d in [project, *project.parents]
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
    missed = []
    for path in sorted(read):
        if path in covered or any(path == r or path.startswith(r + "/") for r in roots):
            continue
        if any(_under(path, prefix) for prefix, _ in reasons):
            continue
        if path == "/" or any(c.startswith(path + "/") for c in [*covered, *roots]):
            continue  # a directory above what is covered: looked at on the way
        if str(project).startswith(path + "/") or path == str(project):
            continue  # the directories up to the project: looked at for the memory files
        if _under(path, str(run_dir(sandbox))):
            continue  # claude-print's own sockets and Claude Code's (cc-socks)
        missed.append(path)
    assert not missed, "\n".join(missed)
