"""claude-print's own git calls, made as Claude Code makes its own.

The warm fingerprint runs `git status` in the caller's work dir, which may be a
repository someone else wrote: nothing of it may run. Two ways it could:

- its `.git/config` names programs git runs on its own (`core.fsmonitor` at every
  `git status`, hooks): turned off with the `-c` options Claude Code passes to its own
  calls (read in 2.1.332's code);
- a relative PATH entry (".", an empty one, "bin") makes a `git` file of the work dir
  the program run, as a lookup from the child's cwd finds it there first. Claude Code
  finds its git by the absolute entries only (`resolveExecutableSafely`, 2.1.332:
  `path.isAbsolute` of each entry); so does `program`.
"""

from __future__ import annotations

import os
import shutil
from typing import Dict, List, Mapping, Optional

HARDENING = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=", "--no-optional-locks")


def program(environ: Mapping[str, str]) -> Optional[str]:
    """The absolute path of the git the caller's PATH names, looked up in its absolute
    entries only; None where there is none."""
    entries = environ.get("PATH", os.defpath).split(os.pathsep)
    return shutil.which("git", path=os.pathsep.join(e for e in entries if os.path.isabs(e)))


def argv(environ: Mapping[str, str], *args: str) -> Optional[List[str]]:
    """The command line of `git ARGS`, hardened; None where no git is found."""
    found = program(environ)
    return None if found is None else [found, *HARDENING, *args]


def env(environ: Mapping[str, str]) -> Dict[str, str]:
    """The environment of the call: the caller's, as the TUI's git gets it, without
    git's optional locks (a status must not take the index lock a user's git waits on)."""
    return dict(environ, GIT_OPTIONAL_LOCKS="0")
