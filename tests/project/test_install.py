"""install.sh, run from a release layout (install.sh + claude-print.pyz) into a temp PREFIX."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Dict, List, Optional

import pytest
from fake_api import FAKE_KEY, seed_home
from harness import ROOT


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory, built_pyz: Path) -> Path:
    """A release download's layout: install.sh beside claude-print.pyz."""
    rel = tmp_path_factory.mktemp("release")
    shutil.copy(built_pyz, rel / "claude-print.pyz")
    shutil.copy(ROOT / "install.sh", rel / "install.sh")
    return rel


def install(
    release: Path,
    tmp_path: Path,
    python: Optional[str] = None,
    path: Optional[str] = None,
    **extra: str,
) -> subprocess.CompletedProcess[str]:
    env: Dict[str, str] = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CLAUDE_PRINT", "SHIV_", "NEEDLE_", "XDG_"))
    }
    env.update(HOME=str(tmp_path / "home"), PREFIX=str(tmp_path / "prefix"), SKIP_CHECK="1")
    env["SKIP_MOCK_CLAUDE"] = "1"
    env.update(extra)
    if python is not None:
        env["CLAUDE_PRINT_PYTHON"] = python
    if path is not None:
        env["PATH"] = path
    (tmp_path / "home").mkdir(exist_ok=True)
    return subprocess.run(
        ["/bin/sh", str(release / "install.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def installed(tmp_path: Path) -> Path:
    return tmp_path / "prefix" / "bin" / "claude-print"


def first_line(path: Path) -> str:
    return path.read_bytes().split(b"\n", 1)[0].decode()


def test_installed_copy_names_the_real_interpreter_with_minus_s(
    release: Path, tmp_path: Path
) -> None:
    proc = install(release, tmp_path)
    assert proc.returncode == 0, proc.stderr
    target = installed(tmp_path)
    line = first_line(target)
    assert line.startswith("#!/") and line.endswith(" -S"), line
    interpreter = line[2:-3]
    assert os.access(interpreter, os.X_OK), interpreter
    assert "/shims/" not in interpreter
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    # The archive itself is untouched: same entries, same bytes.
    with zipfile.ZipFile(release / "claude-print.pyz") as a, zipfile.ZipFile(target) as b:
        assert [(i.filename, i.CRC) for i in a.infolist()] == [
            (i.filename, i.CRC) for i in b.infolist()
        ]
    run = subprocess.run(
        [str(target), "--version"],
        env={**os.environ, "HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("claude-print ")
    assert f"it runs with: {interpreter} -S" in proc.stdout


def test_reinstalling_the_same_build_keeps_no_prev(release: Path, tmp_path: Path) -> None:
    assert install(release, tmp_path).returncode == 0
    again = install(release, tmp_path)
    assert again.returncode == 0, again.stderr
    assert "already this build" in again.stdout
    assert not installed(tmp_path).with_name("claude-print.prev").exists()
    assert [p.name for p in installed(tmp_path).parent.iterdir()] == ["claude-print"]


def test_env_keeps_the_portable_first_line_and_the_previous_copy(
    release: Path, tmp_path: Path
) -> None:
    assert install(release, tmp_path).returncode == 0
    pinned = installed(tmp_path).read_bytes()
    proc = install(release, tmp_path, python="env")
    assert proc.returncode == 0, proc.stderr
    assert installed(tmp_path).read_bytes() == (release / "claude-print.pyz").read_bytes()
    assert installed(tmp_path).with_name("claude-print.prev").read_bytes() == pinned


def test_a_shorter_first_line_still_runs(release: Path, tmp_path: Path) -> None:
    # "#!/bin/python3 -S" is shorter than "#!/usr/bin/env python3": the zip's offsets
    # count from the start of the file, so install.sh pads; without it Python reads the
    # file as a script and fails with a SyntaxError.
    link_dir = Path(tempfile.mkdtemp(prefix="c", dir="/tmp"))
    try:
        (link_dir / "p").symlink_to(sys.executable)
        proc = install(release, tmp_path, python=str(link_dir / "p"))
        line = first_line(installed(tmp_path))
        assert len(line) + 1 < len("#!/usr/bin/env python3\n"), line
        assert proc.returncode == 0, proc.stderr + proc.stdout
        assert "claude-print --version: claude-print " in proc.stdout
    finally:
        shutil.rmtree(link_dir)


def test_a_shim_on_path_is_resolved_to_the_interpreter_behind_it(
    release: Path, tmp_path: Path
) -> None:
    shims = tmp_path / "shims"
    shims.mkdir()
    shim = shims / "python3"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    shim.chmod(0o755)
    proc = install(release, tmp_path, path=f"{shims}:/usr/bin:/bin")
    assert proc.returncode == 0, proc.stderr
    interpreter = first_line(installed(tmp_path))[2:-3]
    assert not interpreter.startswith(str(shims))
    behind = Path(sys.executable).resolve()
    if not str(behind).startswith(("/root/", "/home/")):  # else: the system's (below)
        assert Path(interpreter).resolve() == behind


def test_a_venv_python_is_replaced_by_its_base(release: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    proc = install(release, tmp_path, python=str(venv / "bin" / "python3"))
    assert proc.returncode == 0, proc.stderr
    interpreter = first_line(installed(tmp_path))[2:-3]
    assert not interpreter.startswith(str(venv)), interpreter
    shutil.rmtree(venv)  # the install outlives the venv
    run = subprocess.run(
        [str(installed(tmp_path)), "--version"],
        env={**os.environ, "HOME": str(tmp_path / "home")},
        capture_output=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr


def test_too_old_a_python_installs_nothing(release: Path, tmp_path: Path) -> None:
    old = tmp_path / "python2ish"
    old.write_text('#!/bin/sh\ncase "$*" in *"print("*) echo 3.7.9 ;; *) exit 1 ;; esac\n')
    old.chmod(0o755)
    proc = install(release, tmp_path, python=str(old))
    assert proc.returncode != 0
    assert "is 3.7.9: claude-print needs Python 3.8 or newer" in proc.stderr
    assert not (tmp_path / "prefix").exists()


# --- NEEDLE's adapter, and the check with config files present --------------------------


@pytest.fixture(scope="module")
def full_release(tmp_path_factory: pytest.TempPathFactory, release: Path) -> Path:
    """A release with what install.sh installs besides the .pyz."""
    rel = tmp_path_factory.mktemp("full-release")
    for name in ("claude-print.pyz", "install.sh"):
        shutil.copy(release / name, rel / name)
    shutil.copy(ROOT / "claude-print.yaml", rel / "claude-print.yaml")
    (rel / "mock_claude").mkdir()
    shutil.copy(ROOT / "mock_claude" / "mock_claude.py", rel / "mock_claude" / "mock_claude.py")
    return rel


def needle_config(tmp_path: Path, text: str) -> Path:
    config = tmp_path / "home" / ".config" / "needle" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(text)
    return config


def test_the_adapter_goes_where_needle_reads_it(full_release: Path, tmp_path: Path) -> None:
    # A fresh HOME where NEEDLE is configured but has never made its adapters folder;
    # XDG_CONFIG_HOME points elsewhere: NEEDLE does not read it.
    needle_config(tmp_path, "agent:\n  default: claude-print\n")
    proc = install(full_release, tmp_path, XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    assert proc.returncode == 0, proc.stderr
    home = tmp_path / "home"
    placed = home / ".config" / "needle" / "adapters" / "claude-print.yaml"
    assert placed.read_bytes() == (ROOT / "claude-print.yaml").read_bytes()
    assert not (tmp_path / "xdg").exists() and not (home / ".needle").exists()
    assert "agent.default: claude-print" in proc.stdout
    # NEEDLE's loader, as --check models it, now runs claude-print.
    from claude_print.needle import view as needle

    assert needle.check({"HOME": str(home), "PATH": "/usr/bin:/bin"})[0][0] == "ok"


def test_the_adapter_follows_adapters_dir(full_release: Path, tmp_path: Path) -> None:
    custom = tmp_path / "fleet adapters"
    needle_config(tmp_path, f"agent:\n  default: claude-print\n  adapters_dir: {custom}\n")
    proc = install(full_release, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (custom / "claude-print.yaml").is_file()
    assert not (tmp_path / "home" / ".config" / "needle" / "adapters").exists()


def test_no_needle_no_adapter(full_release: Path, tmp_path: Path) -> None:
    proc = install(full_release, tmp_path, path=f"{os.path.dirname(sys.executable)}:/usr/bin:/bin")
    assert proc.returncode == 0, proc.stderr
    assert "NEEDLE is not set up here" in proc.stdout
    assert not (tmp_path / "home" / ".config").exists()


def test_install_with_config_files_passes_its_check(full_release: Path, tmp_path: Path) -> None:
    """install.sh runs --check: with claude-print's and NEEDLE's config present, it passes."""
    home = tmp_path / "home"
    config = home / ".config" / "claude-print" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[defaults]\nmodel = "sonnet"\n')
    needle_config(tmp_path, "agent:\n  default: claude-print\n")
    seed_home(home)  # a Claude Code set up with an approved key: the login check passes
    bindir = tmp_path / "claude-bin"  # a Claude Code for the check to find: the mock
    bindir.mkdir()
    fake = bindir / "claude"
    fake.write_text(f'#!/bin/sh\nexec "{ROOT / "mock_claude" / "claude"}" "$@"\n')
    fake.chmod(0o755)
    path = f"{bindir}:{tmp_path / 'prefix' / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    proc = install(
        full_release,
        tmp_path,
        path=path,
        SKIP_CHECK="0",
        SKIP_MOCK_CLAUDE="0",
        TMPDIR=str(tmp_path),
        ANTHROPIC_API_KEY=FAKE_KEY,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "claude-print --check passed" in proc.stdout
    assert "internal error" not in proc.stdout + proc.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run as another user")
def test_the_installed_file_runs_for_another_user(release: Path, tmp_path: Path) -> None:
    """The default interpreter (here a pyenv build under /root) is not one another user
    can run: the installed first line names the system's python3 instead, and `nobody`
    runs the file."""
    shared = Path(tempfile.mkdtemp(prefix="cp-shared-", dir="/tmp"))
    try:
        shared.chmod(0o755)
        proc = install(release, tmp_path, PREFIX=str(shared))
        assert proc.returncode == 0, proc.stderr
        target = shared / "bin" / "claude-print"
        interpreter = first_line(target)[2:].split()[0]
        assert not interpreter.startswith(("/root/", "/home/")), interpreter
        home = shared / "nobody-home"
        home.mkdir()
        home.chmod(0o777)
        run = subprocess.run(
            [
                "setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                str(target),
                "--version",
            ],
            env={"PATH": "/usr/bin:/bin", "HOME": str(home)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout.startswith("claude-print ")
    finally:
        shutil.rmtree(shared)


def readme_uninstall() -> str:
    """The README's uninstall commands, as a user copies them."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("### Uninstall") :]
    return section.split("```sh\n", 1)[1].split("```", 1)[0]


def test_install_exits_0_and_shows_the_check_s_failures_as_next_steps(
    full_release: Path, tmp_path: Path
) -> None:
    """No Claude Code on PATH and no login: claude-print is installed and runs (exit 0);
    the check's FAIL lines are the steps left. STRICT_CHECK=1 makes them fatal (exit 2)."""
    path = f"{os.path.dirname(sys.executable)}:/usr/bin:/bin"
    proc = install(full_release, tmp_path, path=path, SKIP_CHECK="0", TMPDIR=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "FAIL claude: " in proc.stderr
    assert all(line.startswith(("FAIL ", "install.sh: ")) for line in proc.stderr.splitlines())
    assert "fix what claude-print --check reports above" in proc.stderr
    assert (
        subprocess.run([str(installed(tmp_path)), "--version"], capture_output=True).returncode == 0
    )
    strict = install(
        full_release, tmp_path, path=path, SKIP_CHECK="0", TMPDIR=str(tmp_path), STRICT_CHECK="1"
    )
    assert strict.returncode == 2, strict.stdout + strict.stderr
    assert "FAIL claude: " in strict.stderr and installed(tmp_path).exists()


def listing(root: Path) -> List[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_the_readme_s_uninstall_leaves_nothing(full_release: Path, tmp_path: Path) -> None:
    """Install into a fresh HOME (NEEDLE configured), run the installed claude-print
    (the check unpacks it; a warm TUI leaves the runtime dir), then run the README's
    uninstall lines: HOME holds only the user's own files, the runtime dirs are gone."""
    home = tmp_path / "home"
    needle_config(tmp_path, "agent:\n  default: claude-print\n")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    run = Path(tempfile.mkdtemp(prefix="cp-run-", dir="/tmp"))  # a socket path is short
    try:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("CLAUDE_PRINT", "SHIV_", "NEEDLE_", "XDG_", "CLAUDE_CODE_"))
        }
        env.update(
            HOME=str(home),
            TMPDIR=str(tmp),
            XDG_RUNTIME_DIR=str(run),
            PATH=f"{home / '.local' / 'bin'}:{os.path.dirname(sys.executable)}:/usr/bin:/bin",
            SKIP_MOCK_CLAUDE="0",
        )
        env.pop("PREFIX", None)
        proc = subprocess.run(
            ["/bin/sh", str(full_release / "install.sh")],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        config = home / ".config" / "claude-print" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text("[defaults]\nwarm_idle_secs = 1\n")
        mock = home / ".local" / "bin" / "mock-claude"
        up = subprocess.run(
            ["claude-print", "--claude-binary", str(mock), "--warm-up"],
            env=env,
            cwd=tmp,
            capture_output=True,
            timeout=120,
        )
        assert up.returncode == 0, up.stderr
        runtime = run / f"claude-print-{os.getuid()}"
        deadline = time.monotonic() + 60
        while not list(runtime.glob("warm-*.sock")) or not list(runtime.glob("warm-*")):
            assert time.monotonic() < deadline, "no keeper appeared"
            time.sleep(0.02)
        while list(runtime.glob("warm-*.sock")):  # it stops itself after warm_idle_secs
            assert time.monotonic() < deadline, "the keeper outlived its idle time"
            time.sleep(0.05)
        before = listing(home)
        assert any(name.startswith(".shiv/.claude-print") for name in before), before
        config.unlink()  # the user's own: the README says so
        config.parent.rmdir()
        done = subprocess.run(
            ["/bin/sh", "-c", readme_uninstall()], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        left = [
            name
            for name in listing(home)
            if not name.startswith((".claude", ".config/needle/config.yaml"))
        ]
        dirs_only = [name for name in left if (home / name).is_dir()]
        assert left == dirs_only, left  # no file of claude-print's
        assert set(dirs_only) <= {
            ".cache",
            ".config",
            ".config/needle",
            ".config/needle/adapters",
            ".local",
            ".local/bin",
        }, dirs_only
        assert not runtime.exists()
        assert listing(tmp) == []
    finally:
        shutil.rmtree(run, ignore_errors=True)
