"""The TypeScript Agent SDK (`@anthropic-ai/claude-agent-sdk`, installed from npm here)
with claude-print as `pathToClaudeCodeExecutable`, against the same program on the real
CLI, on the oldest and newest Claude Code of the matrix: the cases of
tests/support/ts_sdk_cases.mjs (plain, three turns of one streaming query, `canUseTool`,
a hook callback, `setPermissionMode` between turns, an in-process MCP tool) must see the
same messages, keys and results, and leave an interactive session and nothing behind.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from harness import ROOT, SUPPORT, Sandbox, claude_release, entrypoints
from sdk_harness import (
    KEYS_EXTRA,
    KEYS_MAY_MISS,
    NOT_REPORTED,
    Harness,
    case_summary,
    result_content,
    tail,
)

from claude_print import contract

pytestmark = pytest.mark.e2e

TS_SDK = "@anthropic-ai/claude-agent-sdk"
TS_SDK_VERSION = "0.3.331"  # npm's newest when this was written; its peer zod 4
CACHE = Path.home() / ".cache" / "claude-print-test" / f"ts-sdk-{TS_SDK_VERSION}"
PACKAGES = (f"{TS_SDK}@{TS_SDK_VERSION}", "zod@4")
# An SDK session of the real CLI offers the tools that ask the host; claude-print's TUI
# leaves them out as for `claude -p` (README; docs/decisions.md 43).
TOOLS_MAY_MISS = {"AskUserQuestion", "EnterPlanMode", "ExitPlanMode"}
CASES_JS = SUPPORT / "ts_sdk_cases.mjs"
# The oldest release takes plain, the interrupt, the mode switch and the MCP tool; the
# others go the TUI's ways the Python SDK's cases take there too (test_e2e_sdk.py).
CASES = [
    "plain",
    "background_command",
    pytest.param("client_three_turns", marks=pytest.mark.newest_only),
    pytest.param("tool_allowed", marks=pytest.mark.newest_only),
    pytest.param("hook_pretooluse_deny", marks=pytest.mark.newest_only),
    # Interrupts as soon as system/init arrives: under load on 2.1.197 that Esc could land
    # before the TUI's turn was under way and be lost; it is pressed again while the busy
    # footer stays (turn_watch.ESC_AGAIN_AFTER).
    "interrupt",
    "set_permission_mode",
    "sdk_mcp_tool",
]
PROCESS_TIMEOUT = 120


@pytest.fixture(scope="session")
def ts_sdk() -> Path:
    """node_modules holding the TypeScript SDK, installed once (xdist workers take turns)."""
    modules = CACHE / "node_modules"
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("the TypeScript SDK e2e tests need node and npm")
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (modules / TS_SDK / "package.json").exists():
            proc = subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(CACHE), *PACKAGES],
                capture_output=True,
                timeout=600,
            )
            assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    return modules


@pytest.fixture
def newest(real_claude: str) -> str:
    release = claude_release(real_claude)
    lines = (ROOT / "tests" / "matrix.txt").read_text().splitlines()
    releases = [line.split()[0] for line in lines if line.strip() and not line.startswith("#")]

    def key(version: str) -> Tuple[int, ...]:
        return tuple(int(p) for p in version.split("."))

    if release not in (min(releases, key=key), max(releases, key=key)):
        pytest.skip("the TypeScript SDK runs on the oldest and newest releases of the matrix")
    return real_claude


def run_case(
    sandbox: Sandbox, modules: Path, cli_path: str, case: str, workdir: Path, **env: str
) -> Tuple[Dict[str, Any], str]:
    workdir.mkdir(exist_ok=True)
    argv = ["node", str(CASES_JS), "--cli-path", cli_path, "--case", case]
    argv += ["--workdir", str(workdir)]
    proc = subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd=workdir,
        env=sandbox.env(NODE_PATH=str(modules), **env),
        timeout=PROCESS_TIMEOUT,
    )
    return case_summary(proc, "ts_sdk_cases.mjs", {str(workdir): "$WORKDIR"})


def view(summary: Dict[str, Any]) -> List[Dict[str, Any]]:
    """What a program sees, without ids, times and the keys compared separately."""
    out = []
    for message in reported(summary):
        seen = {k: v for k, v in message.items() if k not in ("keys", "session_id", "tools")}
        for result in seen.get("tool_results", []):
            result["content"] = result_content(result.get("content"))
        out.append(seen)
    return out


def reported(summary: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The messages claude-print reports (tests/support/sdk_harness.NOT_REPORTED)."""
    return [m for m in summary["messages"] if m.get("subtype") not in NOT_REPORTED]


def tool_problems(real: Dict[str, Any], ours: Dict[str, Any], release: str) -> List[str]:
    """Ours as the CLI's but the asking tools; before the TUI records its request
    shapes (README, "Output formats": stream-json) the list is empty."""
    problems = []
    shapes = contract.facts_for(release).request_shape_record
    for theirs, mine in zip(real["messages"], ours["messages"]):
        if "tools" in theirs and (shapes or mine.get("tools")):
            wanted = [t for t in theirs["tools"] if t not in TOOLS_MAY_MISS]
            if mine.get("tools") != wanted:
                problems.append(
                    f"init tools: real {theirs['tools']}, claude-print {mine.get('tools')}"
                )
    return problems


def key_problems(real: Dict[str, Any], ours: Dict[str, Any]) -> List[str]:
    problems = []
    for i, (theirs, mine) in enumerate(zip(reported(real), reported(ours))):
        extra = KEYS_EXTRA.get(theirs["type"], set())
        missing = set(theirs["keys"]) - set(mine["keys"]) - KEYS_MAY_MISS.get(theirs["type"], set())
        added = set(mine["keys"]) - set(theirs["keys"]) - extra
        if missing or added:
            problems.append(f"messages[{i}] ({theirs['type']}): missing {missing}, added {added}")
    return problems


@pytest.mark.parametrize("case", CASES)
def test_ts_sdk_case_matches_real_cli(
    newest: str, sandbox: Sandbox, ts_sdk: Path, case: str
) -> None:
    real, _ = run_case(sandbox, ts_sdk, newest, case, sandbox.project / "real")
    harness = Harness(sandbox, newest)
    ours, stderr = run_case(
        sandbox,
        ts_sdk,
        str(harness.cli_path),
        case,
        sandbox.project / "ours",
        CLAUDE_PRINT_TRACE="1",
    )
    trace = f"claude-print's stderr:\n{tail(stderr)}"
    assert "exception" not in real, f"the real CLI's run failed: {real}"
    assert "exception" not in ours, f"{ours.get('exception')}: {ours.get('message')}\n{trace}"
    assert view(ours) == view(real), trace
    assert key_problems(real, ours) == [], trace
    assert tool_problems(real, ours, claude_release(newest)) == [], trace
    facts = ("result_texts", "asked", "tool_calls", "fired", "written_before", "written_after")
    for fact in (*facts, "written"):
        assert ours.get(fact) == real.get(fact), fact
    [spawn] = harness.spawns()
    ids = {m.get("session_id") for m in ours["messages"] if m.get("session_id")}
    transcripts = [p for p in sandbox.transcripts() if p.stem in ids]
    assert transcripts and all(set(entrypoints(p)) == {"cli"} for p in transcripts), spawn
    assert sandbox.leftovers() == [], trace
