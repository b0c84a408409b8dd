"""The programs a run starts, against `claude -p`'s (issue 41: nothing run that `claude -p`
would not run).

claude-print and the release's `claude -p` each answer one prompt in a git work dir,
under `strace -f -e execve` (it sees every program, whatever PATH or shell started it).
What the TUI starts, claude-print's own machinery aside (its hook relay and the scripts
in its private run dir), may hold no program `claude -p` does not start but those written
out below, each measured and documented (docs/compatibility.md, "Start-up work only the
TUI does"). A program that joins them in a new release fails this test until it is
reviewed: turned off where the release has a switch, else written out and documented.

And a hostile work dir: the repository's `core.fsmonitor` names a program, and the work
dir holds executables named like the programs Claude Code starts. With PATH as it
normally is (absolute entries), neither side runs any of them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

import pytest
from checks import assert_exit
from fake_api import FakeApiServer
from harness import RUN_TIMEOUT, Sandbox, claude_release

pytestmark = [pytest.mark.e2e]

# What the TUI starts and `claude -p` does not (measured with this test's trace, in a git
# work dir, on 2.1.197, 2.1.270 and 2.1.332): (pattern of the normalised command, why).
REVIEWED: List[Tuple[str, str]] = [
    (r"sh -c ps aux \| grep -E .*", "the IDE scan: relevance of the 'connect your IDE' tip"),
    (r"ps aux", "the same scan"),
    (r"grep -E code\|cursor\|.*", "the same scan"),
    (r"grep -v grep", "the same scan"),
    (r"git config --get user\.email", "the TUI's own user details (read only)"),
    (r"sh -c git config --get user\.email", "the same, through a shell (2.1.197)"),
    (
        r"git log -n 1000 --pretty=format: --name-only --diff-filter=M",
        "the input box's example prompt: a frequently changed file (read only)",
    ),
    (r"git ls-files --others --exclude-standard", "the @-mention file index (read only)"),
    (r"git ls-files --recurse-submodules", "the @-mention file index (read only)"),
    (r"rg --files .*", "the @-mention file index outside git (read only)"),
]
# Programs the hostile work dir holds (each writes its name to RAN when run).
DECOYS = ("git", "ps", "grep", "rg", "sh", "ssh", "xdg-open", "node", "code")
_EXEC = re.compile(r'^(\d+)\s+execve\("[^"]*", \[(.*)\], 0x[0-9a-f]+ /\* \d+ vars \*/(.*)$')
_RESUMED = re.compile(r"^(\d+)\s+<\.\.\. execve resumed>\)\s*= (-?\d+)")
_CHILD = re.compile(r"^(\d+)\s+.*(?:clone3?|v?fork)\b.*= (\d+)$")
_RUN_DIR = re.compile(r"/claude-print-\d+-")  # claude-print's private run dir in TMPDIR
_ARG = re.compile(r'"((?:[^"\\]|\\.)*)"')


def strace_or_fail() -> str:
    found = shutil.which("strace")
    if found is None:
        if os.environ.get("CLAUDE_PRINT_REQUIRE_E2E"):
            pytest.fail("strace is needed (apt-get install strace)")
        pytest.skip("strace is not installed")
    return found


def git_work_dir(sandbox: Sandbox) -> None:
    """A repository with one commit and one untracked file, its fsmonitor a decoy."""
    project = sandbox.project
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=project, check=True)
    (project / "tracked.txt").write_text("one\n")
    subprocess.run([*git, "add", "tracked.txt"], cwd=project, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], cwd=project, check=True)
    (project / "untracked.txt").write_text("two\n")
    ran = sandbox.home.parent / "RAN"
    monitor = sandbox.home.parent / "fsmonitor"
    monitor.write_text(f"#!/bin/sh\necho fsmonitor >> '{ran}'\nexit 1\n")
    monitor.chmod(0o755)
    subprocess.run(["git", "config", "core.fsmonitor", str(monitor)], cwd=project, check=True)
    for name in DECOYS:
        decoy = project / name
        decoy.write_text(f"#!/bin/sh\necho {name} >> '{ran}'\n")
        decoy.chmod(0o755)


def programs(trace: Path, sandbox: Sandbox, skip_root: str) -> Set[str]:
    """The normalised commands started under the traced process, but the first one
    (`skip_root`: the run itself) and everything started from claude-print's private run
    dir (its hook relay, the scripts there) with what those started."""
    parent: Dict[str, str] = {}
    execs: List[Tuple[str, List[str]]] = []
    pending: Dict[str, List[str]] = {}
    for line in trace.read_text(errors="replace").splitlines():
        child = _CHILD.match(line)
        if child:
            parent[child.group(2)] = child.group(1)
            continue
        started = _EXEC.match(line)
        if started:
            pid, args, end = started.groups()
            if end.endswith("<unfinished ...>"):
                pending[pid] = _ARG.findall(args)
            elif re.search(r"\) = 0$", end):
                execs.append((pid, _ARG.findall(args)))
            continue
        resumed = _RESUMED.match(line)
        if resumed and resumed.group(1) in pending:
            argv = pending.pop(resumed.group(1))
            if resumed.group(2) == "0":
                execs.append((resumed.group(1), argv))
    machinery: Set[str] = set()
    found: Set[str] = set()
    for pid, argv in execs:
        if skip_root in argv[0] or "claude_print" in argv:
            continue  # the run itself (its TUI's arguments name the run dir too)
        if any(_RUN_DIR.search(arg) for arg in argv) or ancestor_in(pid, machinery, parent):
            machinery.add(pid)
            continue
        found.add(normalised(argv, sandbox))
    return found


def ancestor_in(pid: str, pids: Set[str], parent: Dict[str, str]) -> bool:
    seen: Optional[str] = parent.get(pid)
    while seen is not None:
        if seen in pids:
            return True
        seen = parent.get(seen)
    return False


def normalised(argv: List[str], sandbox: Sandbox) -> str:
    """The program's name and arguments: git's `-c key=value` hardening dropped, the
    sandbox's paths named, each argument cut at 40 characters."""
    if argv[0].startswith(str(sandbox.home.parent)):
        return "$SANDBOX/" + os.path.basename(argv[0])  # a decoy: which one ran is enough
    words: List[str] = [os.path.basename(argv[0])]
    rest = iter(argv[1:])
    for arg in rest:
        if words[0] == "git" and arg == "-c":
            next(rest, None)
            continue
        arg = arg.replace(str(sandbox.project), "$PROJECT").replace(str(sandbox.home), "$HOME")
        words.append(arg.encode().decode("unicode_escape")[:40])
    return " ".join(words)


def traced(
    strace: str, sandbox: Sandbox, argv: List[str], trace: Path, api: FakeApiServer
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [strace, "-f", "-qq", "-e", "trace=execve,clone,clone3,fork,vfork", "-e",
         "signal=none", "-s", "400", "-o", str(trace), *argv],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        cwd=sandbox.project,
        env=sandbox.env(ANTHROPIC_BASE_URL=api.url),
        timeout=RUN_TIMEOUT,
    )  # fmt: skip


@pytest.mark.matrix
@pytest.mark.between
def test_the_tui_starts_no_program_claude_p_does_not_but_the_reviewed(
    tmp_path: Path,
    sandbox: Sandbox,
    fake_api: FakeApiServer,
    oracle_api: FakeApiServer,
    real_claude: str,
) -> None:
    strace = strace_or_fail()
    twin = sandbox.twin()
    for box in (sandbox, twin):
        git_work_dir(box)
    ours = traced(
        strace,
        sandbox,
        [sys.executable, "-m", "claude_print", "--claude-binary", real_claude, "what is 2+2"],
        tmp_path / "ours.trace",
        fake_api,
    )
    assert_exit(ours, 0)
    theirs = traced(
        strace, twin, [real_claude, "-p", "what is 2+2"], tmp_path / "theirs.trace", oracle_api
    )
    assert_exit(theirs, 0)
    assert ours.stdout == theirs.stdout == b"The answer is 4.\n"
    mine = programs(tmp_path / "ours.trace", sandbox, real_claude)
    their = programs(tmp_path / "theirs.trace", twin, real_claude)
    assert their, "the trace saw no program of claude -p's (git runs on every release)"
    unexplained = sorted(
        command
        for command in mine - their
        if not any(re.fullmatch(pattern, command) for pattern, _ in REVIEWED)
    )
    assert unexplained == [], (claude_release(real_claude), unexplained, sorted(their))
    # Nothing of the work dir's ran that claude -p does not run: no program named like
    # one Claude Code starts, and its fsmonitor only where that release's claude -p runs
    # it too (2.1.197 does: its git status lacks the hardening).
    ran = [set(ran_in(box)) for box in (sandbox, twin)]
    assert ran[0] <= ran[1] <= {"fsmonitor"}, ran


def ran_in(box: Sandbox) -> List[str]:
    """What the work dir's decoys wrote: the name of each that ran."""
    path = box.home.parent / "RAN"
    return path.read_text().split() if path.exists() else []
