"""Which e2e case runs on which release (tests/support/tiers.py): the whole table of
tiers x marks x modes, written out, and the tiers tests/matrix.txt gives CI."""

from __future__ import annotations

from pathlib import Path
from typing import FrozenSet, Tuple

import pytest
from harness import TESTS
from tiers import releases_marked, runs_on

OLD, MID, NEW = "2.1.197", "2.1.270", "2.1.332"
PLAIN: FrozenSet[str] = frozenset()
MATRIX = frozenset({"matrix"})
BETWEEN = frozenset({"between"})
BOTH = frozenset({"matrix", "between"})
REST = frozenset({"newest_only"})

# (release, marks) -> (runs in CI, runs with --full); OLD is `core`, MID `between`.
TABLE = {
    (NEW, PLAIN): (True, True),
    (NEW, MATRIX): (True, True),
    (NEW, BETWEEN): (True, True),
    (NEW, REST): (False, True),
    (OLD, PLAIN): (False, True),
    (OLD, MATRIX): (True, True),
    (OLD, BETWEEN): (False, True),
    (OLD, BOTH): (True, True),
    (OLD, REST): (False, False),
    (MID, PLAIN): (False, True),
    (MID, MATRIX): (False, True),
    (MID, BETWEEN): (True, True),
    (MID, BOTH): (True, True),
    (MID, REST): (False, False),
}


@pytest.mark.parametrize(
    "case", sorted(TABLE), ids=lambda c: f"{c[0]}-{'+'.join(sorted(c[1])) or 'plain'}"
)
def test_each_tier_takes_its_cases(case: Tuple[str, FrozenSet[str]]) -> None:
    release, marks = case
    for full, expected in zip((False, True), TABLE[case]):
        got = runs_on(release, marks, newest=NEW, core=[OLD], between=[MID], full=full)
        assert got == expected, (release, sorted(marks), "full" if full else "CI")


@pytest.mark.parametrize("release", [OLD, MID])
def test_a_run_of_one_release_tests_it_as_the_newest(release: str) -> None:
    """The release sweep drives one release at a time: a `core` or `between` one then
    takes every case but the rest of a space, as the newest does."""
    for marks, expected in ((PLAIN, True), (MATRIX, True), (BETWEEN, True), (REST, False)):
        got = runs_on(release, marks, newest=release, core=[OLD], between=[MID], full=False)
        assert got == expected, (release, sorted(marks))


def test_the_ci_matrix_is_the_oldest_core_one_between_and_the_newest(tmp_path: Path) -> None:
    matrix = TESTS / "matrix.txt"
    assert releases_marked("core", matrix) == ["2.1.197"]
    assert releases_marked("between", matrix) == ["2.1.270"]
    rows = [line.split()[0] for line in matrix.read_text().splitlines() if line[:1].isdigit()]
    assert rows == ["2.1.197", "2.1.270", "2.1.332"]
    other = tmp_path / "matrix.txt"
    other.write_text("# a comment naming core\n2.1.1 core between\n2.1.2\n")
    assert releases_marked("core", other) == ["2.1.1"]
    assert releases_marked("between", other) == ["2.1.1"]
