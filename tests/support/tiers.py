"""Which e2e case runs on which release in a test run: the tiers of tests/matrix.txt
(docs/compatibility.md, "CI"; decisions 60 and 66).

- the newest release of the run takes every case but the `newest_only` rest of a space,
  whatever tests/matrix.txt says of it (a run of one release, as the release sweep makes,
  tests that release as the newest);
- a `core` release (the oldest supported) takes the `matrix` cases: every test with a
  per-release rule and a sample of each space;
- a `between` release takes the `between` cases: one case of each per-release rule;
- `full` (`scripts/test --full`): every case on every release, the `newest_only` rest
  on the newest.
"""

from __future__ import annotations

from pathlib import Path
from typing import AbstractSet, List, Sequence


def releases_marked(tier: str, matrix: Path) -> List[str]:
    """The releases a tests/matrix.txt file marks `tier` (`core`, `between`)."""
    rows = [line.split() for line in matrix.read_text().splitlines() if line[:1].isdigit()]
    return [row[0] for row in rows if tier in row[1:]]


def runs_on(
    release: str,
    marks: AbstractSet[str],
    *,
    newest: str,
    core: Sequence[str],
    between: Sequence[str],
    full: bool,
) -> bool:
    """Whether a case with these marks runs on `release` in this run."""
    if release == newest:
        return full or "newest_only" not in marks
    if full:
        return "newest_only" not in marks
    if release in between:
        return "between" in marks
    if release in core and "matrix" not in marks:
        return False
    return "newest_only" not in marks
