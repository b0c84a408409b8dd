"""fingerprint.take: every change a warm TUI could have missed changes the fingerprint;
nothing else does (an unchanged tree gives the same one, so warm runs happen at all)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import pytest
from warm_helpers import git

from claude_print.warm_start import fingerprint


@pytest.fixture
def tree(tmp_path: Path) -> Tuple[Path, Path, Dict[str, str]]:
    home, project = tmp_path / "home", tmp_path / "work" / "project"
    (home / ".claude").mkdir(parents=True)
    project.mkdir(parents=True)
    environ = {"HOME": str(home), "PATH": os.environ.get("PATH", "")}
    return home, project, environ


def take(project: Path, environ: Dict[str, str], today: str = "2026-11-25") -> Dict[str, str]:
    return fingerprint.take(str(project), environ, today=lambda: today)


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


def test_what_changed_is_named(tree: Tuple[Path, Path, Dict[str, str]]) -> None:
    """A keeper that declines says what changed: a run at midnight is cold because the
    date turned (the system prompt says the day), not because something went wrong."""
    home, project, environ = tree
    before = take(project, environ, "2026-11-27")
    assert fingerprint.changed(before, take(project, environ, "2026-11-28")) == ["date"]
    (project / "CLAUDE.md").write_text("Be terse.\n")
    _write(home / ".claude" / "settings.json", "{}")
    assert fingerprint.changed(before, take(project, environ, "2026-11-27")) == [
        str(project / "CLAUDE.md"),
        str(home / ".claude" / "settings.json"),
    ]
    assert fingerprint.changed(before, {}) == list(before)  # a run that sent none


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


# --- issue 30: everything else the TUI reads at its start, by content -------------


def _claude_json(home: Path, state: Dict[str, object]) -> None:
    (home / ".claude.json").write_text(json.dumps(state))


def _imports(h: Path, p: Path) -> None:
    """CLAUDE.md imports notes.md (written before the fingerprint); notes.md changes."""
    (p / "notes.md").write_text("new notes\n")


MORE_CHANGES: Dict[str, Callable[[Path, Path], object]] = {
    "AGENTS.md in the project": lambda h, p: (p / "AGENTS.md").write_text("Be terse.\n"),
    "AGENTS.md one level up": lambda h, p: (p.parent / "AGENTS.md").write_text("x"),
    "a file CLAUDE.md imports": _imports,
    "a file an imported file imports": lambda h, p: (p / "deep.md").write_text("deeper\n"),
    "a file imported by ~ path": lambda h, p: (h / "mine.md").write_text("mine\n"),
    "a user MCP server (claude mcp add -s user)": lambda h, p: _claude_json(
        h, {"numStartups": 3, "mcpServers": {"s": {"command": "x"}}}
    ),
    "a local MCP server of the project": lambda h, p: _claude_json(
        h, {"numStartups": 3, "projects": {str(p): {"mcpServers": {"s": {"command": "x"}}}}}
    ),
    "a local MCP server of the parent project": lambda h, p: _claude_json(
        h, {"numStartups": 3, "projects": {str(p.parent): {"mcpServers": {"s": {"command": "x"}}}}}
    ),
    "a local MCP server two projects up": lambda h, p: _claude_json(
        h, {"projects": {str(p.parent.parent): {"mcpServers": {"s": {"command": "x"}}}}}
    ),
    "a .claude/routines file": lambda h, p: _write(p / ".claude" / "routines" / "r.md", "x"),
    "a .claude/workflows file": lambda h, p: _write(p / ".claude" / "workflows" / "w.yml", "x"),
    "a user settings.local.json": lambda h, p: _write(h / ".claude" / "settings.local.json", "{}"),
}


@pytest.fixture
def importing(tree: Tuple[Path, Path, Dict[str, str]]) -> Tuple[Path, Path, Dict[str, str]]:
    home, project, _environ = tree
    (project / "CLAUDE.md").write_text(
        "See @notes.md and @~/mine.md\n`@not-an-import.md`\n```\n@nor-this.md\n```\n"
    )
    (project / "notes.md").write_text("old notes @deep.md\n")
    _claude_json(home, {"numStartups": 2})
    return tree


@pytest.mark.parametrize("change", sorted(MORE_CHANGES))
def test_each_further_change_shows(
    importing: Tuple[Path, Path, Dict[str, str]], change: str
) -> None:
    home, project, environ = importing
    before = take(project, environ)
    MORE_CHANGES[change](home, project)
    assert take(project, environ) != before


def test_imports_in_code_are_not_followed(importing: Tuple[Path, Path, Dict[str, str]]) -> None:
    _home, project, environ = importing
    before = take(project, environ)
    (project / "not-an-import.md").write_text("x")
    (project / "nor-this.md").write_text("x")
    assert take(project, environ) == before


def _import_chain(project: Path, hops: int) -> List[Path]:
    """CLAUDE.md importing hop1.md, hop1.md importing hop2.md, ... up to `hops`; each
    file is there with its own text."""
    files = [project / "CLAUDE.md", *(project / f"hop{n}.md" for n in range(1, hops + 1))]
    for here, there in zip(files, files[1:]):
        here.write_text(f"{here.name} reads @{there.name}\n")
    files[-1].write_text("the last one\n")
    return files


def test_an_import_five_hops_away_shows_a_sixth_does_not(
    tree: Tuple[Path, Path, Dict[str, str]],
) -> None:
    """Claude Code follows `@` imports up to five hops from a memory file (its memory
    docs: "a maximum depth of 5 hops"): an edit of the fifth file changes the
    fingerprint; the sixth, which Claude Code does not read, leaves it."""
    _home, project, environ = tree
    files = _import_chain(project, 6)
    before = take(project, environ)
    files[6].write_text("six hops away, not read\n")
    assert take(project, environ) == before
    files[5].write_text("five hops away, read\n")
    assert take(project, environ) != before


@pytest.mark.parametrize("level", ["work", "tmp"])
def test_a_parent_directory_s_rules_show(
    tree: Tuple[Path, Path, Dict[str, str]], tmp_path: Path, level: str
) -> None:
    """.claude/rules of every parent of the cwd (2.1.197 lists them at its start): the
    cwd's own parent's, the nearest, as well as one further up."""
    _home, project, environ = tree
    parent = {"work": project.parent, "tmp": tmp_path}[level]
    before = take(project, environ)
    _write(parent / ".claude" / "rules" / "style.md", "Use tabs.\n")
    assert take(project, environ) != before


def test_a_sibling_or_child_directory_s_rules_do_not_show(
    tree: Tuple[Path, Path, Dict[str, str]],
) -> None:
    """The other side: rules of a directory that is no parent of the cwd."""
    _home, project, environ = tree
    before = take(project, environ)
    _write(project.parent / "sibling" / ".claude" / "rules" / "style.md", "Use tabs.\n")
    _write(project / "sub" / ".claude" / "rules" / "style.md", "Use tabs.\n")
    assert take(project, environ) == before


def test_what_claude_code_changes_at_every_start_does_not_show(
    importing: Tuple[Path, Path, Dict[str, str]],
) -> None:
    """~/.claude.json as a TUI's start leaves it (measured on 2.1.332): the counters and
    the last run's figures change, the session's parts do not. Else never a warm run."""
    home, project, environ = importing
    _claude_json(home, {"numStartups": 2, "projects": {str(project): {"allowedTools": []}}})
    before = take(project, environ)
    _claude_json(
        home,
        {
            "numStartups": 3,
            "firstStartTime": "2026-11-26T12:00:00Z",
            "projects": {
                str(project): {
                    "allowedTools": [],
                    "lastCost": 0.000248,
                    "lastSessionId": "54af35c8-cff1-4393-beee-da025c7851e2",
                    "lastDuration": 2790,
                }
            },
        },
    )
    assert take(project, environ) == before


def test_a_project_entry_outside_the_cwd_s_parents_does_not_show(
    importing: Tuple[Path, Path, Dict[str, str]],
) -> None:
    """The other side of "the cwd's and its parents' entries": a sibling project's and a
    child directory's MCP servers are not the TUI's here."""
    home, project, environ = importing
    before = take(project, environ)
    server = {"mcpServers": {"s": {"command": "x"}}}
    sibling, child = project.parent / "sibling", project / "sub"
    _claude_json(home, {"numStartups": 2, "projects": {str(sibling): server, str(child): server}})
    assert take(project, environ) == before


@pytest.mark.parametrize(
    "base",
    [
        "home/.claude/skills",
        "home/.claude/agents",
        "work/project/.claude/skills",
        "work/project/.claude/commands",
    ],
)
def test_an_edit_in_a_symlinked_folder_of_a_tree_shows(
    tree: Tuple[Path, Path, Dict[str, str]], tmp_path: Path, base: str
) -> None:
    """A skill folder that is a symlink (a shared checkout linked into ~/.claude/skills):
    Claude Code reads the files behind the link, so an edit there changes the fingerprint,
    its SKILL.md (with the files it imports) and its other files alike."""
    _home, project, environ = tree
    shared = tmp_path / "shared" / "linked"
    _write(shared / "SKILL.md", "Say yes. @notes.md\n")
    _write(shared / "notes.md", "first notes")
    _write(shared / "script.py", "print(1)\n")
    (tmp_path / base).mkdir(parents=True, exist_ok=True)
    (tmp_path / base / "linked").symlink_to(shared, target_is_directory=True)
    before = take(project, environ)
    assert take(project, environ) == before
    for name, text in [
        ("SKILL.md", "Say no!! @notes.md\n"),
        ("notes.md", "other notes"),
        ("script.py", "print(2)\n"),
    ]:
        (shared / name).write_text(text)
        after = take(project, environ)
        assert after != before, name
        before = after


def test_managed_files_show(
    tree: Tuple[Path, Path, Dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/etc/claude-code (here a stand-in: the real one is shared with every Claude Code
    on this machine): managed settings, MCP servers and memory, by content."""
    _home, project, environ = tree
    managed = tmp_path / "etc-claude-code"
    monkeypatch.setattr(fingerprint, "MANAGED_DIR", str(managed))
    before = take(project, environ)
    _write(managed / "managed-settings.json", '{"permissions":{"deny":["Bash"]}}')
    after_settings = take(project, environ)
    assert after_settings != before
    _write(managed / "managed-mcp.json", '{"mcpServers":{}}')
    assert take(project, environ) != after_settings
    before = take(project, environ)
    _write(managed / "managed-settings.json", '{"permissions":{"deny":["Read"]}}')
    assert take(project, environ) != before


def test_a_tree_file_rewritten_with_the_same_stat_shows(
    tree: Tuple[Path, Path, Dict[str, str]],
) -> None:
    home, project, environ = tree
    skill = home / ".claude" / "skills" / "s" / "SKILL.md"
    _write(skill, "Say yes.")
    before = take(project, environ)
    st = skill.stat()
    with open(skill, "r+") as f:  # same inode, same size
        f.write("Say no!!")
    os.utime(skill, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert take(project, environ) != before


FLAG_CASES = {
    "--append-system-prompt-file": ("file", "extra.md"),
    "--system-prompt-file": ("file", "system.md"),
    "--mcp-config": ("file", "mcp.json"),
    "--plugin-dir": ("tree", "plugin/commands/hello.md"),
    "--add-dir": ("project", "other/CLAUDE.md"),
}


@pytest.mark.parametrize("flag", sorted(FLAG_CASES))
def test_files_named_by_flags_show_by_content(
    tree: Tuple[Path, Path, Dict[str, str]], flag: str
) -> None:
    _home, project, environ = tree
    _kind, written = FLAG_CASES[flag]
    value = written.split("/")[0]
    _write(project / written, "first text")
    paths = fingerprint.named([flag, value], ())
    if flag == "--mcp-config":  # claude-print keeps these apart from the forwarded flags
        paths = fingerprint.named([], [value])
    before = fingerprint.take(str(project), environ, today=lambda: "d", paths=paths)
    (project / written).write_text("other text")
    assert fingerprint.take(str(project), environ, today=lambda: "d", paths=paths) != before


def test_named_reads_flag_values() -> None:
    flags = ["--model", "x", "--add-dir", "a", "b", "--plugin-dir=p", "--verbose"]
    assert fingerprint.named(flags, ["m.json"]) == [
        ("project", "a"),
        ("project", "b"),
        ("tree", "p"),
        ("file", "m.json"),
    ]


def test_a_projects_first_entry_with_empty_lists_does_not_show(
    tree: Tuple[Path, Path, Dict[str, str]],
) -> None:
    """What 2.1.332's first start in a project adds to ~/.claude.json (measured): the
    keeper's own TUI writes it after the keeper took its fingerprint."""
    home, project, environ = tree
    _claude_json(home, {"theme": "dark"})
    before = take(project, environ)
    entry = {
        "allowedTools": [],
        "mcpContextUris": [],
        "mcpServers": {},
        "enabledMcpjsonServers": [],
        "disabledMcpjsonServers": [],
        "hasTrustDialogAccepted": True,
        "hasClaudeMdExternalIncludesApproved": False,
        "hasClaudeMdExternalIncludesWarningShown": False,
    }
    _claude_json(home, {"numStartups": 1, "projects": {str(project): entry}})
    assert take(project, environ) == before


def test_git_state_runs_no_program_the_repository_names(tmp_path: Path) -> None:
    """Issue 41: a repository whose .git/config sets core.fsmonitor got that program run
    by every warm run's `git status`; Claude Code's own git calls turn it off."""
    import shutil

    from claude_print.warm_start.fingerprint import git_state

    git = shutil.which("git")
    assert git is not None, "git is needed here (.ci/run installs it)"
    repo, marker = tmp_path / "repo", tmp_path / "ran"
    repo.mkdir()
    monitor = tmp_path / "monitor.sh"
    monitor.write_text(f"#!/bin/sh\ntouch {marker}\n")
    monitor.chmod(0o755)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    for args in (["init", "-q"], ["config", "core.fsmonitor", str(monitor)]):
        subprocess.run([git, *args], cwd=repo, env=env, check=True)
    (repo / "file.txt").write_text("x\n")
    state = git_state(str(repo), env)
    assert b"file.txt" in state  # it did read the repository
    assert not marker.exists(), "git status ran the repository's core.fsmonitor program"


def _slug(path: Path) -> str:
    """Claude Code's project dir name, written out: every character but [A-Za-z0-9]
    becomes "-" (the paths here are short ASCII)."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in str(path.resolve()))


@pytest.mark.parametrize("where", ["the cwd", "the repository's top"])
def test_auto_memory_made_or_rewritten_shows(
    tree: Tuple[Path, Path, Dict[str, str]], where: str
) -> None:
    """Auto-memory (`<config>/projects/<slug>/memory/MEMORY.md`) made after a keeper's
    TUI started, then rewritten: each shows (a warm run sent none, then old and new)."""
    home, project, environ = tree
    git(project.parent, "init", "-q", "-b", "main")
    cwd = project if where == "the repository's top" else project / "sub"
    cwd.mkdir(exist_ok=True)
    owner = project.parent if where == "the repository's top" else cwd
    memory = home / ".claude" / "projects" / _slug(owner) / "memory" / "MEMORY.md"
    before = take(cwd, environ)
    _write(memory, "- the user likes tabs\n")
    made = take(cwd, environ)
    assert made != before
    memory.write_text("- the user likes spaces\n")
    assert take(cwd, environ) not in (before, made)


def test_an_empty_auto_memory_dir_does_not_show(
    tree: Tuple[Path, Path, Dict[str, str]],
) -> None:
    """The TUI makes `<config>/projects/<slug>/memory/` empty at its start (2.1.197,
    seen when a pool's third run found its keeper "changed" after another TUI started)."""
    home, project, environ = tree
    before = take(project, environ)
    (home / ".claude" / "projects" / _slug(project) / "memory").mkdir(parents=True)
    assert take(project, environ) == before


def test_another_projects_auto_memory_does_not_show(
    tree: Tuple[Path, Path, Dict[str, str]],
) -> None:
    home, project, environ = tree
    before = take(project, environ)
    sibling = project.parent / "other"
    _write(home / ".claude" / "projects" / _slug(sibling) / "memory" / "MEMORY.md", "x")
    assert take(project, environ) == before


@pytest.mark.parametrize("layout", ["a repository", "a worktree"])
def test_the_repositorys_own_git_user_name_shows(
    tree: Tuple[Path, Path, Dict[str, str]], tmp_path: Path, layout: str
) -> None:
    """`git config user.name` set in the repository (its .git/config, or for a worktree
    the main repository's config) wins over ~/.gitconfig's in the system prompt."""
    _home, project, environ = tree
    git(project, "init", "-q", "-b", "main")
    git(project, "commit", "-q", "--allow-empty", "-m", "first")
    cwd = project
    if layout == "a worktree":
        cwd = tmp_path / "wt"
        git(project, "worktree", "add", "-q", str(cwd))
    before = take(cwd, environ)
    assert take(cwd, environ) == before  # git's own calls leave it as it was
    git(project, "config", "user.name", "Someone Else")
    assert take(cwd, environ) != before


def test_a_user_name_in_the_worktree_config_shows(tree: Tuple[Path, Path, Dict[str, str]]) -> None:
    """Issue 41: with extensions.worktreeConfig, `git config --worktree user.name` (in
    .git/config.worktree, which Claude Code reads at start) names the system prompt's
    git user."""
    _home, project, environ = tree
    git(project, "init", "-q", "-b", "main")
    git(project, "config", "extensions.worktreeConfig", "true")
    before = take(project, environ)
    git(project, "config", "--worktree", "user.name", "Someone Else")
    assert (project / ".git" / "config.worktree").is_file()
    assert take(project, environ) != before


@pytest.mark.parametrize(
    "change", ["origin/HEAD retargeted", "origin/HEAD removed", "its packed target removed"]
)
def test_the_default_branch_shows(tree: Tuple[Path, Path, Dict[str, str]], change: str) -> None:
    """Issue 41 (found by tests/e2e/test_e2e_warm_reads.py changing what the TUI reads):
    the system prompt's "Main branch" is origin/HEAD's target if that ref exists, else
    origin/main or origin/master, refs git status does not show."""
    _home, project, environ = tree
    git(project, "init", "-q", "-b", "work")
    git(project, "commit", "-q", "--allow-empty", "-m", "first")
    for name in ("develop", "trunk"):
        git(project, "update-ref", f"refs/remotes/origin/{name}", "HEAD")
    git(project, "pack-refs", "--all")
    git(project, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/develop")
    before = take(project, environ)
    assert take(project, environ) == before
    if change == "origin/HEAD retargeted":
        git(project, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
    elif change == "origin/HEAD removed":
        git(project, "symbolic-ref", "--delete", "refs/remotes/origin/HEAD")
    else:
        git(project, "update-ref", "-d", "refs/remotes/origin/develop")
    assert take(project, environ) != before


@pytest.mark.parametrize("entry", [".", "", "bin"])
def test_git_state_never_runs_a_git_of_the_work_dir(tmp_path: Path, entry: str) -> None:
    """Issue 41: a PATH with a relative entry (".", an empty one, "bin") made the warm
    fingerprint run a `git` file of the work dir (Popen looks such an entry up from the
    child's cwd). Claude Code finds git by absolute PATH entries only
    (`resolveExecutableSafely`, 2.1.332); so does the fingerprint."""
    import shutil

    from claude_print.warm_start.fingerprint import git_state

    real = shutil.which("git")
    assert real is not None, "git is needed here (.ci/run installs it)"
    repo, marker = tmp_path / "repo", tmp_path / "ran"
    folder = repo / entry if entry else repo
    folder.mkdir(parents=True)
    planted = folder / "git"
    planted.write_text(f'#!/bin/sh\ntouch {marker}\nexec {real} "$@"\n')
    planted.chmod(0o755)
    path = os.pathsep.join([entry, os.path.dirname(real), "/usr/bin", "/bin"])
    env = {"PATH": path, "HOME": str(tmp_path)}
    subprocess.run([real, "init", "-q"], cwd=repo, env=env, check=True)
    state = git_state(str(repo), env)
    assert b"exit 0" in state  # the real git read the repository
    assert not marker.exists(), f"git_state ran the work dir's {planted}"


def test_with_git_on_relative_path_entries_only_a_run_is_cold(tmp_path: Path) -> None:
    """No git on an absolute PATH entry: the fingerprint runs none and never matches
    (the run goes cold, where the TUI's own git lookup decides)."""
    from claude_print.warm_start.fingerprint import git_state

    marker = tmp_path / "ran"
    planted = tmp_path / "git"
    planted.write_text(f"#!/bin/sh\ntouch {marker}\n")
    planted.chmod(0o755)
    env = {"PATH": ".", "HOME": str(tmp_path)}
    first, second = git_state(str(tmp_path), env), git_state(str(tmp_path), env)
    assert first.startswith(b"no git") and first != second
    assert not marker.exists()
