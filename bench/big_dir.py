#!/usr/bin/env python3
"""What a big work dir costs a run (issues 41 and 43): claude-print cold and `claude -p`,
each in an empty work dir and in one of N files, paired and rotating.

    python3 bench/big_dir.py [--release 2.1.332] [--files 150000] [--runs 5] [--git]

The work dir holds N small files in folders of 1,000 (with --git: committed, as a
checkout is). Each measurement is one run of a one-line prompt against the fake API
(tests/support/fake_api.py, in this process) from a throw-away HOME that trusts both
dirs: wall time, and the CPU of the whole process tree (wait4 of the run: its own and
every descendant's it reaped). Prints medians and the ratios; nothing asserts on them.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "support"), str(ROOT)]

from fake_api import FakeApiServer, seed_home  # noqa: E402
from harness import Sandbox  # noqa: E402


def fill(folder: Path, files: int, git: bool) -> None:
    for n in range(files):
        sub = folder / f"d{n // 1000:04d}"
        if n % 1000 == 0:
            sub.mkdir()
        (sub / f"f{n:06d}.txt").write_text(f"{n}\n")
    if git:
        who = ["-c", "user.name=b", "-c", "user.email=b@example.com"]
        for words in (["init", "-q"], ["add", "-A"], [*who, "commit", "-q", "-m", "files"]):
            subprocess.run(["git", *words], cwd=folder, stdout=subprocess.DEVNULL, check=True)


def measure(argv: List[str], cwd: Path, env: Dict[str, str]) -> Tuple[float, float]:
    """(wall s, CPU s of the tree) of one run, which must answer."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=300)
    wall = time.monotonic() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0 or b"The answer is 4." not in out:
        sys.exit(f"big_dir: {argv[0]} failed ({proc.returncode}): {err.decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", default="2.1.332")
    parser.add_argument("--files", type=int, default=150_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--git", action="store_true", help="the big dir is a git checkout")
    args = parser.parse_args()
    binary = (
        subprocess.run(
            [str(ROOT / "scripts" / "install-claude-code"), args.release],
            stdout=subprocess.PIPE,
            check=True,
        )
        .stdout.decode()
        .split()[-1]
    )
    api = FakeApiServer().start()
    root = Path(tempfile.mkdtemp(prefix="bench-big-"))
    try:
        home, tmp, empty, big = (root / n for n in ("home", "tmp", "empty", "big"))
        for folder in (home, tmp, empty, big):
            folder.mkdir()
        fill(big, args.files, args.git)
        seed_home(home, trusted=[empty, big])
        env = Sandbox(home, empty, tmp, api.url).env()
        sides = {
            "claude-print": [sys.executable, "-m", "claude_print", "--claude-binary", binary],
            "claude -p": [binary, "-p"],
        }
        got: Dict[Tuple[str, str], List[Tuple[float, float]]] = {}
        for run in range(args.runs):
            for name, argv in sides.items():
                for where, folder in (("empty", empty), ("big", big)):
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    wall, cpu = measure([*argv, "what is 2+2"], folder, env)
                    cpu -= before.ru_utime + before.ru_stime
                    got.setdefault((name, where), []).append((wall, cpu))
            print(f"run {run + 1}/{args.runs} done", file=sys.stderr)
        print(f"Claude Code {args.release}, {args.files} files{' (git)' if args.git else ''}, "
              f"{args.runs} runs each, load {os.getloadavg()[0]:.1f}")  # fmt: skip
        print(f"{'':14} {'empty wall':>10} {'big wall':>9} {'empty cpu':>10} {'big cpu':>8}")
        medians: Dict[Tuple[str, str], Tuple[float, float]] = {}
        for name in sides:
            row = []
            for where in ("empty", "big"):
                walls, cpus = zip(*got[(name, where)])
                medians[(name, where)] = (statistics.median(walls), statistics.median(cpus))
            e, b = medians[(name, "empty")], medians[(name, "big")]
            row = [f"{e[0]:9.2f}s", f"{b[0]:8.2f}s", f"{e[1]:9.2f}s", f"{b[1]:7.2f}s"]
            print(f"{name:14} " + " ".join(row))
        for where in ("empty", "big"):
            ours, theirs = medians[("claude-print", where)], medians[("claude -p", where)]
            print(f"{where}: claude-print / claude -p = {ours[0] / theirs[0]:.2f}x wall, "
                  f"{ours[1] / theirs[1]:.2f}x cpu")  # fmt: skip
        for name in sides:
            e, b = medians[(name, "empty")], medians[(name, "big")]
            print(f"{name}: big - empty = {b[0] - e[0]:+.2f} s wall, {b[1] - e[1]:+.2f} s cpu")
    finally:
        api.shutdown()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
