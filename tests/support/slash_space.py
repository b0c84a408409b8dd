"""The space of slash prompts, and the side effects a run leaves: shared by
scripts/capture-slash (which measures `claude -p` and the TUI per release) and the tests
that compare claude-print with those measurements.

A run's side effects are the files it creates, changes or deletes under HOME and the
work dir, apart from Claude Code's session bookkeeping (`BOOKKEEPING`: transcripts,
history, session registry, locks, backups), which every session writes, print mode or
not. The list is short and reviewed: a path outside it that a run touches is a side
effect to compare.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Dict, Iterable, List, Tuple

# (variant, prompt template): every built-in command is tried in each form.
VARIANTS: Tuple[Tuple[str, str], ...] = (
    ("bare", "/{name}"),
    ("args", "/{name} now"),
    ("del", "/{name}\x7f"),
    ("upper", "/{NAME}"),
    ("newline-args", "/{name}\nnow"),
)

# Names no release has: what claude -p does with a command it does not know (2.1.197
# says "Unknown command: /x"; 2.1.331 sends the text to the model).
UNKNOWN_PROBES: Tuple[str, ...] = ("nosuchcommand", "zq-unknown")

# Session bookkeeping that claude -p and the TUI both write, in different amounts, which
# is not a side effect of the prompt (reviewed: each entry names why it is here).
BOOKKEEPING: Tuple[str, ...] = (
    r"home/\.claude\.json",  # counters, per-project state, caches (both modes)
    r"home/\.claude\.json\.(backup|lock|tmp)[^/]*",  # its atomic rewrite
    r"home/\.claude/backups(/.*)?",  # backups of .claude.json
    r"home/\.claude/projects(/.*)?",  # transcripts
    r"home/\.claude/history\.jsonl",  # prompt history
    r"home/\.claude/sessions(/.*)?",  # the running sessions' registry
    r"home/\.claude/session-env(/.*)?",  # per-session environment snapshots
    r"home/\.claude/shell-snapshots(/.*)?",  # the Bash tool's shell snapshot
    r"home/\.claude/todos(/.*)?",  # per-session todo lists
    r"home/\.claude/file-history(/.*)?",  # per-session file checkpoints
    r"home/\.claude/paste-cache(/.*)?",  # large pastes of a session
    r"home/\.claude/statsig(/.*)?",  # feature-flag cache
    r"home/\.claude/stats[^/]*",  # usage statistics cache
    r"home/\.claude/debug(/.*)?",  # debug logs
    r"home/\.claude/telemetry(/.*)?",  # telemetry spool (traffic is off)
    r"home/\.claude/plugins(/.*)?",  # plugin registry bootstrap
    r"home/\.claude/cache(/.*)?",  # caches (changelog, ...)
    r"home/\.claude/ide(/.*)?",  # IDE lock files
    r"home/\.claude/tasks(/.*)?",  # per-session task lists
    r"home/\.claude/jobs(/.*)?",  # background job registry
    r"home/\.claude/\.[^/]*\.lock",  # Claude Code's own lock files
    r"home/\.claude/\.last-cleanup",  # the start-up cleanup's stamp: a background task
    # of both modes, which a short run can outlive (seen under load on 2.1.332)
    r"home/\.claude",  # the folder itself
    r"home/\.cache(/.*)?",  # runtime caches
    r"home/\.local",  # the folder itself (nothing under it: the TUI's URL handler was there)
    r"home/\.local/share",
    r"home/\.local/state",
    r"home/\.config",  # the folder itself
    r"home/\.npm(/.*)?",
)
_BOOKKEEPING = re.compile("|".join(f"(?:{p})" for p in BOOKKEEPING))


def prompts(names: Iterable[str]) -> List[Tuple[str, str, str]]:
    """(name, variant, prompt) for every name in every variant."""
    return [
        (name, variant, template.format(name=name, NAME=name.upper()))
        for name in sorted(set(names))
        for variant, template in VARIANTS
    ]


def snapshot(root: Path, parts: Iterable[str] = ("home", "project")) -> Dict[str, str]:
    """relative path -> what it is (a file's sha256, 'dir', or a link's target)."""
    found: Dict[str, str] = {}
    for part in parts:
        base = root / part
        for dirpath, dirnames, filenames in os.walk(base):
            rel = os.path.relpath(dirpath, root)
            if rel != part:
                found[rel] = "dir"
            links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
            for name in filenames + links:
                path = os.path.join(dirpath, name)
                key = os.path.join(rel, name)
                if os.path.islink(path):
                    found[key] = "link:" + os.readlink(path)
                    continue
                try:
                    with open(path, "rb") as handle:
                        found[key] = hashlib.sha256(handle.read()).hexdigest()[:16]
                except OSError as exc:
                    found[key] = f"unreadable:{exc.errno}"
    return found


def side_effects(before: Dict[str, str], after: Dict[str, str]) -> List[str]:
    """'+path', '-path', '~path' for each change outside the bookkeeping, sorted."""
    changes = []
    for path in sorted(set(before) | set(after)):
        if _BOOKKEEPING.fullmatch(path):
            continue
        if path not in before:
            changes.append("+" + path)
        elif path not in after:
            changes.append("-" + path)
        elif before[path] != after[path]:
            changes.append("~" + path)
    return changes


def dumps(value: object) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
