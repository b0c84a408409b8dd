"""`claude-print --check`: the credential-free doctor (claude_print/command/doctor.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Dict, List

import pytest
from fake_api import FAKE_KEY, seed_home
from harness import MOCK_CLAUDE, ROOT

from claude_print import contract
from claude_print.command import doctor

LINE = re.compile(r"^(ok  |warn|FAIL) ([a-z ]+): \S")
DEAD_PID = 4194399  # above Linux's largest pid_max (2**22): never a live process
TWO_HOURS_AGO = time.time() - 7200


@pytest.fixture
def tmp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private tempfile.gettempdir() for the in-process runs."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(logged_in_home(tmp_path)))
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return root


def logged_in_home(where: Path) -> Path:
    """A HOME whose Claude Code is set up and has approved FAKE_KEY."""
    home = where / "home"
    home.mkdir(exist_ok=True)
    seed_home(home)
    return home


def relay_dir(root: Path, pid: int, mtime: float = TWO_HOURS_AGO) -> Path:
    path = root / f"claude-print-{pid}-abc123"
    path.mkdir()
    (path / "relay.fifo").write_text("")
    os.utime(path, (mtime, mtime))
    return path


def checks(out: str) -> Dict[str, str]:
    """check name -> status, asserting every line has the documented shape."""
    found = {}
    for line in out.splitlines():
        match = LINE.match(line)
        assert match, f"not a check line: {line!r}"
        found[match.group(2)] = match.group(1).strip()
    return found


def said(proc: subprocess.CompletedProcess[str]) -> str:
    """For an exit-code assert's message: what the run printed."""
    return f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"


def run_check(args: List[str], tmp: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_")}
    full_env.update(TMPDIR=str(tmp), PYTHONPATH=str(ROOT), XDG_CONFIG_HOME=str(tmp / "cfg"))
    home_root = tmp if tmp.exists() else tmp.parent
    full_env.update(HOME=str(logged_in_home(home_root)), ANTHROPIC_API_KEY=FAKE_KEY)
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "claude_print", "--check", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=120,
    )


def test_all_good_in_process(
    tmp_root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whether Anthropic's hosts answer here is the machine's business (test_startup_fetches).
    monkeypatch.setenv(contract.NONESSENTIAL_TRAFFIC_VAR, "1")
    # mock_claude reports the tested version, so it stands in for Claude Code here too.
    code = doctor.run(str(MOCK_CLAUDE))
    out = capsys.readouterr().out
    assert code == 0, out
    assert checks(out) == {
        "python": "ok",
        "config": "ok",
        "claude": "ok",
        "login": "ok",
        "pty": "ok",
        "tmpdir": "ok",
        "startup fetches": "ok",
        "round trip": "ok",
        "temp dirs": "ok",
    }
    assert doctor.expected_answer(doctor.ROUND_TRIP_PROMPT) in out
    assert "entrypoint cli" in out
    assert os.listdir(tmp_root) == []  # the throw-away HOME and FIFO dir are gone


def test_missing_binary_fails_in_process(
    tmp_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = doctor.run(str(tmp_root / "no-such-claude"))
    out = capsys.readouterr().out
    assert code == 2, out
    found = checks(out)
    assert found["claude"] == "FAIL"
    assert found["round trip"] == "ok"  # the other checks still run


def test_missing_binary_exits_2(tmp_path: Path) -> None:
    proc = run_check(["--claude-binary", str(tmp_path / "nowhere" / "claude")], tmp_path)
    assert proc.returncode == 2, said(proc)
    assert checks(proc.stdout)["claude"] == "FAIL"
    assert "not an executable file" in proc.stdout


def test_claude_not_on_path_exits_2(tmp_path: Path) -> None:
    proc = run_check([], tmp_path, PATH=os.path.dirname(sys.executable) + ":/bin:/usr/bin")
    if checks(proc.stdout)["claude"] == "ok":
        pytest.skip("a `claude` is installed in /bin or /usr/bin")
    assert proc.returncode == 2, said(proc)
    assert "FAIL claude: Claude Code not found" in proc.stdout


def test_subprocess_all_good(tmp_path: Path) -> None:
    proc = run_check(["--claude-binary", str(MOCK_CLAUDE)], tmp_path)
    assert proc.returncode == 0, said(proc)
    assert set(checks(proc.stdout).values()) == {"ok"}
    assert proc.stderr == ""


@pytest.mark.parametrize(
    ("version", "verdict", "says"),
    [
        ("9.9.9", "warn", f"newer than tested ({contract.OLDEST_SUPPORTED} to"),
        ("2.1.100", "warn", "older than the oldest supported release"),
        (contract.NEWEST_TESTED, "ok", "tested range"),
        (contract.OLDEST_SUPPORTED, "ok", "tested range"),
    ],
)
def test_release_outside_the_tested_range_is_a_warning(
    tmp_path: Path, version: str, verdict: str, says: str
) -> None:
    fake = tmp_path / "claude"
    fake.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    fake.chmod(0o755)
    proc = run_check(["--claude-binary", str(fake)], tmp_path)
    assert proc.returncode == 0, said(proc)
    assert checks(proc.stdout)["claude"] == verdict, proc.stdout
    assert says in proc.stdout


def test_a_config_file_does_not_crash_the_check(tmp_path: Path) -> None:
    config = tmp_path / "cfg" / "claude-print" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[defaults]\nmodel = "sonnet"\n')
    proc = run_check(["--claude-binary", str(MOCK_CLAUDE)], tmp_path)
    assert "internal error" not in proc.stdout + proc.stderr
    assert checks(proc.stdout)["config"] == "ok", proc.stdout


def test_not_claude_code_fails(tmp_path: Path) -> None:
    fake = tmp_path / "claude"
    fake.write_text("#!/bin/sh\necho 'something else 1.0'\n")
    fake.chmod(0o755)
    proc = run_check(["--claude-binary", str(fake)], tmp_path)
    assert proc.returncode == 2, said(proc)
    assert "did not print a Claude Code version" in proc.stdout


def test_broken_config_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "cfg" / "claude-print" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[defaults]\nmax_turns = 'many'\n")
    # The CLI reads the config before dispatching to the doctor: exit 2 either way.
    proc = run_check(["--claude-binary", str(MOCK_CLAUDE)], tmp_path)
    assert proc.returncode == 2, said(proc)
    assert "max_turns must be an integer" in proc.stdout + proc.stderr
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
        report = doctor.Report(sys.stdout)
        doctor.check_config(report)
    assert report.failed
    assert capsys.readouterr().out.startswith(f"FAIL config: config file {config}, line 2:")


def test_orphans_are_reported_not_removed(
    tmp_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = relay_dir(tmp_root, DEAD_PID)
    live = relay_dir(tmp_root, os.getpid())
    young = relay_dir(tmp_root, DEAD_PID + 1, mtime=time.time())
    doctor.check_orphans(doctor.Report(sys.stdout), clean=False)
    out = capsys.readouterr().out
    assert out.startswith("warn temp dirs: 2 ")
    assert dead.name in out and live.name in out and young.name not in out
    assert dead.is_dir() and live.is_dir() and young.is_dir()


def test_clean_removes_only_dirs_whose_process_is_gone(
    tmp_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = relay_dir(tmp_root, DEAD_PID)
    live = relay_dir(tmp_root, os.getpid())
    young = relay_dir(tmp_root, DEAD_PID + 1, mtime=time.time())
    other = tmp_root / "claude-print-check-home-xyz"  # not a relay dir
    other.mkdir()
    os.utime(other, (TWO_HOURS_AGO, TWO_HOURS_AGO))
    doctor.check_orphans(doctor.Report(sys.stdout), clean=True)
    out = capsys.readouterr().out
    assert not dead.exists()
    assert live.is_dir() and young.is_dir() and other.is_dir()
    assert out.startswith("warn temp dirs: removed 1 orphaned dir(s)")
    assert f"pid {os.getpid()} is running" in out
    # Nothing old and dead is left: a second --clean is all ok... apart from the live one.
    doctor.check_orphans(doctor.Report(sys.stdout), clean=True)
    assert capsys.readouterr().out.startswith("warn temp dirs: removed 0 ")


def test_clean_as_a_subprocess(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    dead = relay_dir(tmp, DEAD_PID)
    live = relay_dir(tmp, os.getpid())  # this pytest outlives the subprocess
    proc = run_check(["--claude-binary", str(MOCK_CLAUDE)], tmp)
    assert proc.returncode == 0, said(proc)  # orphans are a warning, not a failure
    assert checks(proc.stdout)["temp dirs"] == "warn"
    assert dead.is_dir()
    proc = run_check(["--clean", "--claude-binary", str(MOCK_CLAUDE)], tmp)
    assert proc.returncode == 0, said(proc)
    assert not dead.exists() and live.is_dir()
    shutil.rmtree(live)
    proc = run_check(["--clean", "--claude-binary", str(MOCK_CLAUDE)], tmp)
    assert checks(proc.stdout)["temp dirs"] == "ok"


def test_symlinks_and_other_users_dirs_are_left_alone(
    tmp_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "precious"
    target.mkdir()
    link = tmp_root / f"claude-print-{DEAD_PID}-link"
    link.symlink_to(target)
    os.utime(link, (TWO_HOURS_AGO, TWO_HOURS_AGO), follow_symlinks=False)
    doctor.check_orphans(doctor.Report(sys.stdout), clean=True)
    assert capsys.readouterr().out.startswith("ok   temp dirs")
    assert link.is_symlink() and target.is_dir()


def test_clean_without_check_is_a_usage_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "claude_print", "--clean", "hi"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert proc.returncode == 2, said(proc)
    assert "--clean only goes with --check" in proc.stderr


def test_round_trip_failure_is_reported(
    tmp_root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(doctor, "expected_answer", lambda prompt: "something else")
    report = doctor.Report(sys.stdout)
    doctor.check_round_trip(report)
    assert report.failed
    assert capsys.readouterr().out.startswith("FAIL round trip: expected result 'something else'")


def test_round_trip_skipped_without_mock(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(doctor, "find_mock_claude", lambda: None)
    report = doctor.Report(sys.stdout)
    doctor.check_round_trip(report)
    assert not report.failed
    assert capsys.readouterr().out.startswith("warn round trip: skipped")


def test_mock_beside_an_installed_zipapp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """install.sh puts mock-claude beside claude-print; a .pyz's argv[0] is its own path."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    pyz = bindir / "claude-print"
    with zipfile.ZipFile(pyz, "w") as archive:
        archive.writestr("__main__.py", "")
    mock = bindir / "mock-claude"
    mock.write_text("#!/bin/sh\n")
    mock.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(pyz), "--check"])
    assert doctor.find_mock_claude() == str(mock)
    argv, extra = doctor.self_command()
    assert argv == [sys.executable, str(pyz)] and extra == {}


def test_checkout_mock_and_module_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", [str(ROOT / "claude_print" / "__main__.py"), "--check"])
    assert doctor.find_mock_claude() == str(MOCK_CLAUDE)
    argv, extra = doctor.self_command()
    assert argv == [sys.executable, "-m", "claude_print"]
    assert extra == {"PYTHONPATH": str(ROOT)}


def test_pid_alive() -> None:
    assert doctor.pid_alive(os.getpid())
    assert not doctor.pid_alive(DEAD_PID)
    assert not doctor.pid_alive(0)


def test_tmpdir_that_does_not_exist_fails(tmp_path: Path) -> None:
    proc = run_check(["--claude-binary", str(MOCK_CLAUDE)], tmp_path / "missing")
    assert proc.returncode == 2, said(proc)
    assert f"FAIL tmpdir: TMPDIR={tmp_path / 'missing'} does not exist" in proc.stdout


@pytest.mark.parametrize(
    ("setup", "ok", "words"),
    [
        ("fresh", False, "not set up for this user"),
        ("onboarded-key-unknown", False, "never been told to use it"),
        ("onboarded-key-rejected", False, "was rejected"),
        ("onboarded-key-approved", True, "approved"),
        ("onboarded-no-login", False, "no login"),
        ("onboarded-oauth-token", True, "CLAUDE_CODE_OAUTH_TOKEN is set"),
        ("onboarded-credentials", True, "subscription login"),
        ("onboarded-credentials", True, "claude setup-token"),
    ],
)
def test_check_predicts_whether_the_tui_gets_past_start_up(
    tmp_path: Path, setup: str, ok: bool, words: str
) -> None:
    """Each setup as the TUI meets it (onboarding, the API-key question, the login
    screen), judged from the files alone: no request is spent."""
    from claude_print.command.login_check import startup_verdict

    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home)}
    if setup != "fresh":
        config: Dict[str, object] = {"hasCompletedOnboarding": True}
        if setup.startswith("onboarded-key"):
            env["ANTHROPIC_API_KEY"] = FAKE_KEY
            kind = setup.rsplit("-", 1)[1]
            answers = {"approved": [FAKE_KEY[-20:]] if kind == "approved" else []}
            answers["rejected"] = [FAKE_KEY[-20:]] if kind == "rejected" else []
            config["customApiKeyResponses"] = answers
        if setup == "onboarded-oauth-token":
            env["CLAUDE_CODE_OAUTH_TOKEN"] = "sk-ant-oat01-x"
        if setup == "onboarded-credentials":
            (home / ".claude").mkdir()
            creds = {"claudeAiOauth": {"accessToken": "x", "refreshToken": "y"}}
            (home / ".claude" / ".credentials.json").write_text(json.dumps(creds))
        (home / ".claude.json").write_text(json.dumps(config))
    verdict = startup_verdict(env)
    assert (verdict.ok, words in verdict.detail) == (ok, True), verdict


def test_check_fails_for_a_claude_code_not_set_up(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh-home"
    fresh.mkdir()
    proc = run_check([], tmp_path, HOME=str(fresh), CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    assert proc.returncode == 2, said(proc)
    assert checks(proc.stdout)["login"] == "FAIL"
