"""The user docs stay in step with the code: every flag of `--help` is in README.md."""

from __future__ import annotations

import re
from typing import Set

from conftest import ROOT

from claude_print import flags
from claude_print.cli import build_parser

README = (ROOT / "README.md").read_text(encoding="utf-8")


def parser_flags() -> Set[str]:
    flags: Set[str] = set()
    for action in build_parser()._actions:
        flags.update(action.option_strings)
    return flags


def readme_flag_table() -> str:
    start = README.index("\n## Flags\n")
    end = README.index("\n## ", start + 1)
    return README[start:end]


def test_every_flag_is_documented() -> None:
    table = readme_flag_table()
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    documented = {flag for row in rows for flag in re.findall(r"`(-[-\w]+)", row.split("|")[1])}
    assert documented == parser_flags()


def test_each_flag_is_under_its_kind() -> None:
    """The README's four flag tables hold the rows of flags.FLAGS of their kind."""
    table = readme_flag_table()
    headings = {
        flags.OWN: "### claude-print's own",
        flags.FORWARDED: "### Forwarded",
        flags.EMULATED: "### Emulated",
        flags.REFUSED: "### Refused",
    }
    for kind, heading in headings.items():
        start = table.index(heading)
        end = min(
            [table.index(h) for h in headings.values() if table.index(h) > start] or [len(table)]
        )
        rows = [line for line in table[start:end].splitlines() if line.startswith("| `")]
        documented = {f for row in rows for f in re.findall(r"`(-[-\w]+)", row.split("|")[1])}
        wanted = {name for flag in flags.of_kind(kind) for name in flag.names}
        if kind == flags.OWN:
            wanted |= {"-h", "--help"}
        assert documented == wanted, kind


def test_readme_opens_with_the_demo_and_the_test_command() -> None:
    head = README[: README.index("\n## ")]
    assert "./scripts/demo" in head
    assert "scripts/test" in head and "./.ci/run" in head
    assert "python3 -m venv .venv && .venv/bin/pip install -r requirements-dev.txt" in head
