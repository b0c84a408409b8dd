"""The shipped file: dist/claude-print.pyz as build_zipapp.sh makes it, and its launcher.

Each case builds into a temp dir and runs the archive with a private HOME, so the
cache that shiv extracts into (~/.shiv) is this test's own.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Dict, List

import pytest
from harness import MOCK_CLAUDE, build_pyz


@pytest.fixture
def pyz(built_pyz: Path) -> Path:
    return built_pyz


def run_pyz(pyz: Path, home: Path, args: List[str], **env: str) -> subprocess.CompletedProcess[str]:
    """The archive under `python -X importtime`: stderr lists every module it imported."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SHIV_")}
    clean.pop("PYTHONPATH", None)  # the archive must find the package itself
    return subprocess.run(
        [sys.executable, "-X", "importtime", str(pyz), *args],
        env={**clean, "HOME": str(home), **env},
        cwd=str(home),
        capture_output=True,
        text=True,
        timeout=60,
    )


def imported(proc: subprocess.CompletedProcess[str]) -> Dict[str, int]:
    names: Dict[str, int] = {}
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names[line.rsplit("|", 1)[1].strip()] = 1
    return names


def cache_dirs(home: Path) -> List[str]:
    root = home / ".shiv"
    return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def test_first_start_extracts_later_starts_skip_shivs_bootstrap(pyz: Path, tmp_path: Path) -> None:
    build_id = json.loads(zipfile.ZipFile(pyz).read("environment.json"))["build_id"]
    first = run_pyz(pyz, tmp_path, ["--version"])
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("claude-print ")
    assert "_bootstrap" in imported(first)
    [cache] = cache_dirs(tmp_path)
    assert cache == f"claude-print.pyz_{build_id}"

    second = run_pyz(pyz, tmp_path, ["--version"])
    assert (second.returncode, second.stdout) == (0, first.stdout)
    names = imported(second)
    assert "claude_print.command.cli" in names
    assert not [n for n in names if n.startswith("_bootstrap")], sorted(names)


def test_a_shiv_variable_sends_the_start_through_shivs_bootstrap(pyz: Path, tmp_path: Path) -> None:
    assert run_pyz(pyz, tmp_path, ["--version"]).returncode == 0
    forced = run_pyz(pyz, tmp_path, ["--version"], SHIV_FORCE_EXTRACT="1")
    assert forced.returncode == 0, forced.stderr
    assert "_bootstrap" in imported(forced)


def test_a_full_run_through_the_fast_path(pyz: Path, tmp_path: Path) -> None:
    assert run_pyz(pyz, tmp_path, ["--version"]).returncode == 0  # extract
    proc = run_pyz(
        pyz, tmp_path, ["--claude-binary", str(MOCK_CLAUDE), "--output-format", "json", "hi"]
    )
    assert proc.returncode == 0, proc.stderr
    assert '"result":"ACK 2 ' in proc.stdout
    assert "_bootstrap" not in imported(proc)


def test_bytecode_is_kept_where_python_may_not_write_it(pyz: Path, tmp_path: Path) -> None:
    """With PYTHONDONTWRITEBYTECODE set (many container images set it) Python writes no
    bytecode, and every start compiled the package again; the launcher writes it into
    the cache once, for this interpreter, so the later starts read it."""
    tag = sys.implementation.cache_tag
    assert run_pyz(pyz, tmp_path, ["--version"], PYTHONDONTWRITEBYTECODE="1").returncode == 0
    [cache] = cache_dirs(tmp_path)
    package = tmp_path / ".shiv" / cache / "site-packages" / "claude_print"
    sources = sorted(package.rglob("*.py"))
    assert len(sources) > 50
    second = run_pyz(pyz, tmp_path, ["--version"], PYTHONDONTWRITEBYTECODE="1")
    assert second.returncode == 0, second.stderr
    missing = [
        str(src.relative_to(package))
        for src in sources
        if not (src.parent / "__pycache__" / f"{src.stem}.{tag}.pyc").is_file()
    ]
    assert missing == []


@pytest.mark.parametrize("home", ["/dev/null", ""], ids=["unusable-home", "empty-home"])
def test_no_usable_home_runs_from_the_archive(pyz: Path, tmp_path: Path, home: str) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SHIV_")}
    clean.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [sys.executable, str(pyz), "--version"],
        env={**clean, "HOME": home},
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("claude-print ")
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / ".shiv").exists()  # HOME="" must not mean ./.shiv


def test_the_build_is_reproducible(pyz: Path, tmp_path: Path) -> None:
    again = build_pyz(tmp_path / "claude-print.pyz")
    digest = [hashlib.sha256(p.read_bytes()).hexdigest() for p in (pyz, again)]
    assert digest[0] == digest[1]
    names = zipfile.ZipFile(again).namelist()
    assert all(
        n in ("__main__.py", "environment.json")
        or n.startswith(("_bootstrap/", "site-packages/claude_print/"))
        for n in names
    ), names
    assert again.stat().st_size < 288 * 1024  # build_zipapp.sh MAX_BYTES
