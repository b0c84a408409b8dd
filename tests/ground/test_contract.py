"""The version-aware contract: release facts folded from CHANGES, and the release of a
binary learned from its package without running it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from claude_print import contract
from claude_print.tui import release


def test_changes_are_oldest_first_and_inside_the_tested_range() -> None:
    versions = [contract.parse_version(c.since) for c in contract.CHANGES]
    assert all(v is not None for v in versions)
    assert versions == sorted(versions)  # type: ignore[type-var]
    oldest = contract.parse_version(contract.OLDEST_SUPPORTED)
    newest = contract.parse_version(contract.NEWEST_TESTED)
    assert all(oldest < v <= newest for v in versions)  # type: ignore[operator]
    fields = set(contract.Facts._fields)
    assert all(set(c.facts) <= fields for c in contract.CHANGES)


@pytest.mark.parametrize(
    ("version", "mode", "wraps", "denied_event", "cost_state"),
    [
        ("2.1.197", "default", False, False, False),
        ("2.1.222", "default", False, False, False),
        ("2.1.223", "default", False, True, False),  # scripts/scan-shapes, every release
        ("2.1.247", "default", False, True, True),
        ("2.1.282", "default", False, True, True),
        # scripts/sweep-releases: 2.1.283 to 2.1.289 start the TUI in auto mode (the
        # denied tool hung, or the classifier-billing dialog stopped the run)
        ("2.1.283", "auto", False, True, True),
        ("2.1.289", "auto", False, True, True),
        ("2.1.290", "auto", False, True, True),
        ("2.1.321", "auto", False, True, True),
        ("2.1.330", "auto", True, True, True),
    ],
)
def test_facts_change_at_the_measured_releases(
    version: str, mode: str, wraps: bool, denied_event: bool, cost_state: bool
) -> None:
    facts = contract.facts_for(version)
    assert facts.version == version and facts.tested
    assert facts.tui_default_mode == mode
    assert facts.paste_wraps is wraps
    assert facts.permission_denied_event is denied_event
    assert facts.cost_state is cost_state


@pytest.mark.parametrize(
    ("version", "mode"),
    [
        # measured: system/init permissionMode of claude -p --output-format stream-json
        ("2.1.282", "default"),
        ("2.1.283", "default"),  # the TUI is in auto mode here; claude -p is not
        ("2.1.284", "default"),
        ("2.1.285", "auto"),
        ("2.1.289", "auto"),
        ("2.1.290", "auto"),
        ("2.1.300", "auto"),
        ("2.1.310", "default"),
    ],
)
def test_claude_p_starts_in_auto_mode_only_from_2_1_285_to_2_1_300(version: str, mode: str) -> None:
    assert contract.facts_for(version).print_default_mode == mode


def test_newer_or_unknown_releases_use_the_newest_facts_and_say_so() -> None:
    newest = contract.facts_for(contract.NEWEST_TESTED)
    for version in ("2.1.9999", "3.0.0", None, "", "garbage"):
        facts = contract.facts_for(version)
        assert not facts.tested, version
        assert facts._replace(version="", tested=True) == newest._replace(version="")
    assert not contract.facts_for("2.1.100").tested  # older than supported


def test_parse_version() -> None:
    assert contract.parse_version("2.1.330") == (2, 1, 330)
    assert contract.parse_version("v2.1.330 (Claude Code)") == (2, 1, 330)
    assert contract.parse_version("2.1") is None


def write_package(folder: Path, name: str, version: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(json.dumps({"name": name, "version": version}))


def test_version_from_the_platform_package(tmp_path: Path) -> None:
    folder = tmp_path / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64"
    write_package(folder, "@anthropic-ai/claude-code-linux-x64", "2.1.330")
    (folder / "claude").write_text("")
    assert release.installed_version(str(folder / "claude")) == "2.1.330"


def test_version_through_the_npm_bin_link(tmp_path: Path) -> None:
    package = tmp_path / "lib" / "node_modules" / "@anthropic-ai" / "claude-code"
    write_package(package, "@anthropic-ai/claude-code", "2.1.270")
    (package / "bin").mkdir()
    (package / "bin" / "claude.exe").write_text("")
    link = tmp_path / "bin" / "claude"
    link.parent.mkdir()
    os.symlink(package / "bin" / "claude.exe", link)
    assert release.installed_version(str(link)) == "2.1.270"


def test_version_of_the_native_installer(tmp_path: Path) -> None:
    binary = tmp_path / "versions" / "2.1.321"
    binary.parent.mkdir()
    binary.write_text("")
    link = tmp_path / "claude"
    os.symlink(binary, link)
    assert release.installed_version(str(link)) == "2.1.321"


def test_no_version_from_a_foreign_package(tmp_path: Path) -> None:
    write_package(tmp_path, "some-other-tool", "1.2.3")
    (tmp_path / "claude").write_text("")
    assert release.installed_version(str(tmp_path / "claude")) is None
    assert release.installed_version(str(tmp_path / "missing")) is None


@pytest.mark.parametrize(
    ("version", "budget_reason"),
    [("2.1.197", False), ("2.1.220", False), ("2.1.221", True), ("2.1.330", True)],
)
def test_limit_terminal_reasons_from_2_1_221(version: str, budget_reason: bool) -> None:
    assert contract.facts_for(version).limit_terminal_reasons is budget_reason
