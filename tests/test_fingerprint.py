"""fingerprint.take: every change a warm TUI could have missed changes the fingerprint;
nothing else does (an unchanged tree gives the same one, so warm runs happen at all)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Callable, Dict, Tuple

import pytest

from claude_print import fingerprint


@pytest.fixture
def tree(tmp_path: Path) -> Tuple[Path, Path, Dict[str, str]]:
    home, project = tmp_path / "home", tmp_path / "work" / "project"
    (home / ".claude").mkdir(parents=True)
    project.mkdir(parents=True)
    environ = {"HOME": str(home), "PATH": os.environ.get("PATH", "")}
    return home, project, environ


def take(project: Path, environ: Dict[str, str], today: str = "2026-11-25") -> str:
    return fingerprint.take(str(project), environ, today=lambda: today)


def git(project: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True)


CHANGES: Dict[str, Callable[[Path, Path], object]] = {
    "CLAUDE.md in the project": lambda h, p: (p / "CLAUDE.md").write_text("Be terse.\n"),
    "CLAUDE.md two levels up": lambda h, p: (p.parent.parent / "CLAUDE.md").write_text("x"),
    "CLAUDE.local.md": lambda h, p: (p / "CLAUDE.local.md").write_text("mine"),
    ".claude/CLAUDE.md": lambda h, p: _write(p / ".claude" / "CLAUDE.md", "x"),
    "a project rules file": lambda h, p: _write(p / ".claude" / "rules" / "a.md", "x"),
    "a user rules file": lambda h, p: _write(h / ".claude" / "rules" / "deep" / "b.md", "x"),
    "the user's CLAUDE.md": lambda h, p: _write(h / ".claude" / "CLAUDE.md", "x"),
    "user settings": lambda h, p: _write(h / ".claude" / "settings.json", '{"model":"x"}'),
    "project settings": lambda h, p: _write(p / ".claude" / "settings.json", "{}"),
    "local settings": lambda h, p: _write(p / ".claude" / "settings.local.json", "{}"),
    ".mcp.json": lambda h, p: (p / ".mcp.json").write_text('{"mcpServers":{}}'),
    "a skill": lambda h, p: _write(h / ".claude" / "skills" / "s" / "SKILL.md", "x"),
    "a project agent": lambda h, p: _write(p / ".claude" / "agents" / "a.md", "x"),
    "a command": lambda h, p: _write(p / ".claude" / "commands" / "c.md", "x"),
    "an output style": lambda h, p: _write(h / ".claude" / "output-styles" / "o.md", "x"),
    "the git user name": lambda h, p: (h / ".gitconfig").write_text("[user]\n name = x\n"),
}


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_unchanged_is_equal(tree: Tuple[Path, Path, Dict[str, str]]) -> None:
    _home, project, environ = tree
    (project / "CLAUDE.md").write_text("Be terse.\n")
    assert take(project, environ) == take(project, environ)


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_each_change_shows(tree: Tuple[Path, Path, Dict[str, str]], change: str) -> None:
    home, project, environ = tree
    before = take(project, environ)
    CHANGES[change](home, project)
    assert take(project, environ) != before


def test_an_edit_of_the_same_size_shows(tree: Tuple[Path, Path, Dict[str, str]]) -> None:
    _home, project, environ = tree
    memory = project / "CLAUDE.md"
    memory.write_text("Answer in English.")
    before = take(project, environ)
    stat = memory.stat()
    memory.write_text("Answer in Swedish.")
    os.utime(memory, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size, same mtime
    assert take(project, environ) != before


def test_the_date_shows(tree: Tuple[Path, Path, Dict[str, str]]) -> None:
    _home, project, environ = tree
    assert take(project, environ, "2026-11-25") != take(project, environ, "2026-11-26")


def test_config_dir_is_claude_config_dir(tree: Tuple[Path, Path, Dict[str, str]]) -> None:
    home, project, environ = tree
    config = home / "elsewhere"
    environ = {**environ, "CLAUDE_CONFIG_DIR": str(config)}
    before = take(project, environ)
    _write(config / "CLAUDE.md", "x")
    assert take(project, environ) != before


@pytest.mark.parametrize(
    "change",
    ["an untracked file", "a staged file", "a commit", "another branch", "an edited file"],
)
def test_git_state_shows(tree: Tuple[Path, Path, Dict[str, str]], change: str) -> None:
    _home, project, environ = tree
    git(project, "init", "-q", "-b", "main")
    (project / "a.txt").write_text("a\n")
    git(project, "add", "a.txt")
    git(project, "commit", "-q", "-m", "first")
    before = take(project, environ)
    assert take(project, environ) == before  # git status itself changes nothing
    if change == "an untracked file":
        (project / "new.txt").write_text("n")
    elif change == "a staged file":
        (project / "new.txt").write_text("n")
        git(project, "add", "new.txt")
    elif change == "a commit":
        git(project, "commit", "-q", "--allow-empty", "-m", "second")
    elif change == "another branch":
        git(project, "checkout", "-q", "-b", "feature")
    else:
        (project / "a.txt").write_text("b\n")
    assert take(project, environ) != before


def test_a_tree_too_large_never_matches(
    tree: Tuple[Path, Path, Dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    _home, project, environ = tree
    monkeypatch.setattr(fingerprint, "LISTED_UP_TO", 3)
    for i in range(4):
        _write(project / ".claude" / "skills" / f"s{i}" / "SKILL.md", "x")
    assert take(project, environ) != take(project, environ)
