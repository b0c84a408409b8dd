"""claude-print run as a user runs it (a subprocess, its own stdin and stdout) against
mock_claude's scenarios, for the fault tests (tests/*/test_faults_*.py, issue 4), and
what they check: the exit code, stderr naming what went wrong (never a traceback), and
nothing left behind (`sandbox.leftovers()`: no claude-print temp dir, no live or zombie
process that mentions the sandbox). Waits are on events (a file the mock writes, the
process ending), with generous upper bounds; "< N s" bounds (HUNG) only say "ended
instead of hanging".
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from harness import MOCK_CLAUDE, Sandbox, run_claude_print

MOCK = str(MOCK_CLAUDE)
HUNG = 60.0  # "ended instead of hanging": far above any normal run, far below a hang


def prompt_log(sandbox: Sandbox) -> Path:
    return sandbox.home.parent / "prompts.b64"


def argv_log(sandbox: Sandbox) -> Path:
    return sandbox.home.parent / "argv.json"


def mock_env(sandbox: Sandbox, scenario: str, extra: Optional[Dict[str, str]]) -> Dict[str, str]:
    env = {
        "MOCK_CLAUDE_SCENARIO": scenario,
        "MOCK_CLAUDE_PROMPT_LOG": str(prompt_log(sandbox)),
        "MOCK_CLAUDE_ARGV_LOG": str(argv_log(sandbox)),
    }
    env.update(extra or {})
    return env


def run_mock(
    sandbox: Sandbox,
    args: List[str],
    scenario: str = "ok",
    *,
    stdin: Optional[bytes] = None,
    env: Optional[Dict[str, str]] = None,
) -> subprocess.CompletedProcess[bytes]:
    return run_claude_print(
        sandbox, args, stdin=stdin, binary=MOCK, env=mock_env(sandbox, scenario, env)
    )


def start_mock(
    sandbox: Sandbox,
    args: List[str],
    scenario: str = "ok",
    *,
    env: Optional[Dict[str, str]] = None,
) -> subprocess.Popen[bytes]:
    """claude-print in the background (stdin /dev/null), for signals and closed pipes."""
    argv = [sys.executable, "-m", "claude_print", "--claude-binary", MOCK, *args]
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=sandbox.project,
        env=sandbox.env(**mock_env(sandbox, scenario, env)),
    )


def submitted(sandbox: Sandbox) -> List[bytes]:
    """The exact bytes of every prompt the mock received (MOCK_CLAUDE_PROMPT_LOG)."""
    path = prompt_log(sandbox)
    if not path.exists():
        return []
    return [base64.b64decode(line) for line in path.read_text().splitlines()]


def child_argv(sandbox: Sandbox) -> Optional[List[str]]:
    """What the mock was started with; None when it never ran."""
    path = argv_log(sandbox)
    if not path.exists():
        return None
    argv: List[str] = json.loads(path.read_text())
    return argv


def ack(prompt: str) -> str:
    digest = hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:12]
    return f"ACK {len(prompt)} {digest}"


def err(proc: subprocess.CompletedProcess[bytes]) -> str:
    return proc.stderr.decode("utf-8", "replace")


def check(
    sandbox: Sandbox, proc: subprocess.CompletedProcess[bytes], code: int, *words: str
) -> None:
    """Exit code, stderr naming the problem without a traceback, nothing left behind."""
    stderr = err(proc)
    assert proc.returncode == code, f"exit {proc.returncode}\n{stderr}"
    assert "Traceback" not in stderr, stderr
    for word in words:
        assert word in stderr, f"{word!r} not in stderr:\n{stderr}"
    if code not in (0, 1):  # exit 1 (the model's error) is reported on stdout, as by claude -p
        assert stderr.startswith("claude-print: error: ") or stderr.startswith("usage:"), stderr
    assert sandbox.leftovers() == []


def json_out(proc: subprocess.CompletedProcess[bytes]) -> Dict[str, Any]:
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == 1, proc.stdout
    obj: Dict[str, Any] = json.loads(lines[0])
    return obj
