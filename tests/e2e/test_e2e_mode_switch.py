"""set_permission_mode read off the footer, never off the answer (issue 29 item 5): a
turn-1 answer that says the target mode's footer words must not count as the switch.
claude-print beside the release's `claude -p`, stream-json in and out, the control
request sent between the turns as the Agent SDK sends it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
from fake_api import FakeApiServer
from harness import RUN_TIMEOUT, Sandbox

pytestmark = [pytest.mark.e2e, pytest.mark.matrix]

FLAGS = ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]


def user(text: str) -> bytes:
    message = {"type": "user", "message": {"role": "user", "content": text}}
    return json.dumps(message).encode() + b"\n"


def converse(argv: List[str], sandbox: Sandbox, api: FakeApiServer, target: Path) -> Dict[str, Any]:
    """Turn 1 answers in the footer's words; then acceptEdits; turn 2 writes `target`."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=sandbox.project,
        env=sandbox.env(ANTHROPIC_BASE_URL=api.url),
    )
    assert proc.stdin is not None and proc.stdout is not None
    write = json.dumps({"file_path": str(target), "content": "accepted"})
    steps = [
        user("[[reply:Noted: accept edits on (shift+tab to cycle) · plan mode on]]"),
        json.dumps(
            {
                "type": "control_request",
                "request_id": "mode-1",
                "request": {"subtype": "set_permission_mode", "mode": "acceptEdits"},
            }
        ).encode()
        + b"\n"
        + user(f"after [[tooljson:Write:{write}]]"),
    ]
    results: List[Dict[str, Any]] = []
    try:
        for step in steps:  # each step once the previous turn's result is out
            proc.stdin.write(step)
            proc.stdin.flush()
            for line in proc.stdout:
                event = json.loads(line)
                if event.get("type") == "result":
                    results.append(event)
                    break
        proc.stdin.close()
        proc.wait(RUN_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    return {
        "exit": proc.returncode,
        "errors": [r["is_error"] for r in results],
        "written": target.exists(),
        "stderr": proc.stderr.read().decode(errors="replace")[-2000:],
    }


@pytest.mark.between
def test_footer_words_in_an_answer_are_not_the_mode(
    tmp_path: Path,
    sandbox: Sandbox,
    fake_api: FakeApiServer,
    oracle_api: FakeApiServer,
    real_claude: str,
) -> None:
    ours = converse(
        [sys.executable, "-m", "claude_print", "--claude-binary", real_claude, *FLAGS],
        sandbox,
        fake_api,
        sandbox.project / "ours.txt",
    )
    theirs = converse(
        [real_claude, "-p", *FLAGS], sandbox, oracle_api, sandbox.project / "theirs.txt"
    )
    assert theirs["exit"] == 0 and theirs["written"], theirs
    assert ours["exit"] == 0, ours["stderr"]
    assert (ours["errors"], ours["written"]) == (theirs["errors"], True), ours
    assert sandbox.leftovers() == []
