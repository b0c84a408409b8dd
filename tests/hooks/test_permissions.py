"""The permission mode the TUI is told to start in: the one `claude -p` would use."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import pytest

from claude_print import contract
from claude_print.hooks import permissions

AUTO = contract.facts_for("2.1.290")  # the TUI starts in auto mode from here
OLD = contract.facts_for("2.1.280")
FILES = {
    "user": "home/.claude/settings.json",
    "project": ".claude/settings.json",
    "local": ".claude/settings.local.json",
}
# Every --setting-sources value worth telling apart (None: the flag not given).
SOURCE_FLAGS: List[Optional[str]] = [
    None,
    "",
    "user",
    "project",
    "local",
    "user,project",
    "project,local",
    "user,local",
    "user,project,local",
    " local , user ",
]


def flags(
    tmp_path: Path,
    facts: contract.Facts,
    asked: bool = False,
    sources: Sequence[str] = permissions.SOURCES,
    flag_settings: Optional[Dict[str, Any]] = None,
) -> str:
    environ: Dict[str, str] = {"HOME": str(tmp_path / "home")}
    return " ".join(
        permissions.mode_flags(
            facts,
            asked=asked,
            sources=sources,
            cwd=str(tmp_path),
            environ=environ,
            flag_settings=flag_settings,
        )
    )


def write_settings(path: Path, mode: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": {"defaultMode": mode}}))


def test_an_auto_mode_tui_is_told_default(tmp_path: Path) -> None:
    assert flags(tmp_path, AUTO) == "--permission-mode default"
    assert flags(tmp_path, OLD) == ""  # already starts in default


def test_a_mode_the_user_asked_for_wins(tmp_path: Path) -> None:
    assert flags(tmp_path, AUTO, asked=True) == ""


@pytest.mark.parametrize("inherit", [True, False])
@pytest.mark.parametrize("flag", SOURCE_FLAGS, ids=repr)
@pytest.mark.parametrize("where", sorted(FILES))
def test_a_default_mode_applies_only_from_a_file_the_tui_reads(
    tmp_path: Path, where: str, flag: Optional[str], inherit: bool
) -> None:
    """A `defaultMode` in one settings file leaves the TUI alone only when that file is
    among the sources the TUI reads, as for `claude -p` with the same flags."""
    write_settings(tmp_path / FILES[where], "acceptEdits")
    forwarded = [] if flag is None else ["--setting-sources", flag]
    sources = permissions.setting_sources(inherit, forwarded)
    read = inherit and (flag is None or where in [p.strip() for p in flag.split(",")])
    assert flags(tmp_path, AUTO, sources=sources) == ("" if read else "--permission-mode default")


def test_setting_sources_words() -> None:
    assert permissions.setting_sources(True, []) == ("user", "project", "local")
    assert permissions.setting_sources(False, []) == ()
    assert permissions.setting_sources(True, ["--setting-sources="]) == ()
    assert permissions.setting_sources(True, ["--setting-sources=project"]) == ("project",)
    assert permissions.setting_sources(True, ["--setting-sources", "local,user"]) == (
        "local",
        "user",
    )
    # the last one wins, as for any repeated flag
    words = ["--setting-sources", "user", "--setting-sources", "project"]
    assert permissions.setting_sources(True, words) == ("project",)


@pytest.mark.parametrize("mode", ["acceptEdits", "plan", "bypassPermissions", "default", "auto"])
def test_a_default_mode_in_the_settings_flag_applies_too(tmp_path: Path, mode: str) -> None:
    settings = {"permissions": {"defaultMode": mode}}
    assert flags(tmp_path, AUTO, sources=(), flag_settings=settings) == ""
    assert flags(tmp_path, AUTO, sources=(), flag_settings={"permissions": {}}) != ""


def test_config_dir_and_broken_files(tmp_path: Path) -> None:
    config = tmp_path / "config"
    write_settings(config / "settings.json", "plan")
    files = permissions.settings_files(str(tmp_path), {"CLAUDE_CONFIG_DIR": str(config)})
    assert permissions.configured_default_mode(files) == "plan"
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{not json")
    assert permissions.configured_default_mode(files) == "plan"
    assert permissions.configured_default_mode([str(tmp_path / "missing.json")]) is None


@pytest.mark.parametrize(
    ("words", "told"),
    [
        ([], False),
        (["--no-inherit-hooks"], True),
        (["--setting-sources", "project"], True),
        (["--setting-sources", "user"], False),
        (["--setting-sources="], True),
    ],
)
def test_the_tui_argv_follows_the_settings_it_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, words: List[str], told: bool
) -> None:
    """End of the chain: options -> build_argv, with a user `defaultMode` on a release that
    starts in auto mode (the TUI then must be told `default` unless it reads that file)."""
    from claude_print.command.cli import parse_options
    from claude_print.hooks.relay import Relay
    from claude_print.run.launch import build_argv

    home = tmp_path / "home"
    write_settings(home / ".claude" / "settings.json", "acceptEdits")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    _, options = parse_options([*words, "--", "hi"], None, dict(os.environ))
    assert options is not None
    relay = Relay(tmp_root=str(tmp_path))
    try:
        argv = build_argv(options, "claude", relay, None, "argv", contract.facts_for("2.1.331"))
    finally:
        relay.close()
    pairs = list(zip(argv, argv[1:]))
    assert (("--permission-mode", "default") in pairs) is told, argv
