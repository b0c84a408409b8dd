"""The Agent SDK e2e tests' shared parts (tests/e2e/test_e2e_sdk.py, Python;
test_e2e_ts_sdk.py, TypeScript): claude-print as the SDK's CLI, what may differ from the
real CLI's messages, and a case program's summary."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from typing import Any, Dict, List, Set, Tuple

from harness import Sandbox

from claude_print import contract

TRACE_TAIL = 8000  # characters of claude-print's stderr traces in a failure message

# Keys of the real CLI's raw messages that claude-print may leave out, per message type:
# a background task's `run_id` (task events, 2.1.292 on), which the TUI records nowhere.
KEYS_MAY_MISS: Dict[str, Set[str]] = {"system": {"run_id"}}
# Keys claude-print adds to the real CLI's: `claude_version` on results (README, "Output
# formats": the one key claude-print adds, the release of Claude Code that ran).
KEYS_EXTRA: Dict[str, Set[str]] = {"result": {"claude_version"}}


class Harness:
    """claude-print as the SDK's `cli_path`: a wrapper script running `python -m
    claude_print --claude-binary SPAWN`, where SPAWN is a wrapper that logs one line per
    TUI it starts (with the CLAUDE_CODE_ENTRYPOINT the TUI gets) and execs Claude Code.
    Both live in the sandbox's TMPDIR, so every process of a run mentions it
    (Sandbox.leftovers finds them)."""

    def __init__(self, sandbox: Sandbox, claude: str) -> None:
        self.sandbox = sandbox
        self.dir = sandbox.tmp / "sdk-bin"
        self.dir.mkdir()
        self.spawn_log = self.dir / "spawns"
        self.spawn_log.touch()
        spawn = self.dir / "spawn-claude"
        spawn.write_text(
            "#!/bin/sh\n"
            'printf \'%s entrypoint=%s\\n\' "$$" "${CLAUDE_CODE_ENTRYPOINT-unset}"'
            f" >> {shlex.quote(str(self.spawn_log))}\n"
            f'exec {shlex.quote(claude)} "$@"\n'
        )
        self.cli_path = self.dir / "claude-print"
        self.cli_path.write_text(
            "#!/bin/sh\n"
            f"exec {shlex.quote(sys.executable)} -m claude_print"
            f' --claude-binary {shlex.quote(str(spawn))} "$@"\n'
        )
        for script in (spawn, self.cli_path):
            script.chmod(0o755)

    def env(self, **extra: str) -> Dict[str, str]:
        return self.sandbox.env(CLAUDE_PRINT_TRACE="1", **extra)

    def spawns(self) -> List[str]:
        return self.spawn_log.read_text().splitlines()


# Known difference: a tool that would ask is refused with claude-print's own message
# (contract.DENY_MESSAGE, given by its PermissionRequest hook), where print mode words
# its refusal per release and per path ("... needs approval ..." on 2.1.330, "... was
# blocked ..." on 2.1.197). Both are the same outcome: an error tool_result, the turn
# goes on, the denial is listed in permission_denials (compared).
REFUSAL = "<a tool that would ask, refused>"
_PRINT_MODE_REFUSALS = (
    " needs approval. ",
    " was blocked. For security, ",
    ", but you haven't granted it yet.",
)


def result_content(content: Any) -> Any:
    """A tool result's text, but for what differs from run to run: a background task's
    id and output file."""
    if is_refusal(content):
        return REFUSAL
    if isinstance(content, str) and content.startswith("Command running in background"):
        # Known difference (docs/compatibility.md): on 2.1.332 the TUI's advice after
        # "...when it completes" is the interactive one (not to poll the file).
        content = content.split(" You will be notified when it completes")[0]
        return re.sub(r"\bID: \w+|: \S+/tasks/\w+\.output", "<task>", content)
    if isinstance(content, str) and "\nagentId: " in content:
        # A subagent's id, output file and duration differ from run to run.
        return re.sub(
            r"(agentId: |to: ')\w+|\S+/tasks/\w+\.output|duration_ms: \d+", "<run>", content
        )
    return content


def is_refusal(content: Any) -> bool:
    if not isinstance(content, str):
        return False
    return content == contract.DENY_MESSAGE or any(r in content for r in _PRINT_MODE_REFUSALS)


# Known difference (docs/compatibility.md, "Background work"): the real CLI also reports a
# background task's status changes (`task_updated`) and the set of tasks running
# (`background_tasks_changed`, 2.1.270 on); claude-print reports a task's start and its
# notification, which the SDK tracks tasks by, from what the TUI records.
NOT_REPORTED = ("task_updated", "background_tasks_changed")


def tail(text: str) -> str:
    return text if len(text) <= TRACE_TAIL else "...\n" + text[-TRACE_TAIL:]


def case_summary(
    proc: subprocess.CompletedProcess[bytes], program: str, paths: Dict[str, str]
) -> Tuple[Dict[str, Any], str]:
    """A case program's (sdk_cases.py, ts_sdk_cases.mjs) summary, its last line of JSON,
    with each path of `paths` written as its placeholder, and its stderr. The program
    must have exited 0 and printed a summary."""
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 0, f"{program} exited {proc.returncode}; stderr:\n{stderr}"
    text = proc.stdout.decode("utf-8", "replace").strip()
    assert text, f"{program} printed no summary; stderr:\n{stderr}"
    for path, placeholder in paths.items():
        text = text.replace(path, placeholder)
    summary: Dict[str, Any] = json.loads(text.splitlines()[-1])
    return summary, stderr
