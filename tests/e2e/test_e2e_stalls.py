"""End to end: a TUI starved of CPU at the worst moment still gets its startup screens
answered right, and the run answers.

A loaded machine stops a TUI for a while at random; here it is stopped (SIGSTOP) at
chosen moments instead (support/stalled_run.py): keys claude-print writes meanwhile
wait in the terminal, and the TUI's timers are all due at once when it resumes. On
2.1.332 under load in CI (8 runs sharing a HOME) the trust dialog ended two ways this
reproduces: after our Enter on "Yes" the dialog's top rows stayed drawn, "No, exit" was
left without its caret, and the TUI drew nothing for seconds; claude-print took that
for a dialog it could not read and failed ("cannot find 'Yes, I trust this folder'"),
or, once the input box was up, still saw the dialog's rows above it. And a Down the
starved TUI had not read yet was pressed again: its lists wrap, so the second Down took
the caret from "Yes" back to "No, exit" under the Enter sent in between (Claude Code
exited: "this folder isn't trusted").
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from checks import assert_exit
from harness import Sandbox

pytestmark = [pytest.mark.e2e]

STALLED_RUN = Path(__file__).resolve().parent.parent / "support" / "stalled_run.py"
PROMPT = "What is 2+2?"
ANSWER = "The answer is 4."


@pytest.mark.parametrize(
    ("at", "seconds"),
    [
        ("key:down", 0.4),  # as the caret is moved: the key waits, the dialog's timers fire
        ("key:down", 2.5),  # long enough for the Down to be pressed again: both land
        ("key:enter", 1.5),  # as the choice is made: the dialog goes away slowly
        # The rest of the space (`scripts/test --full`).
        pytest.param("frame:Yes, I trust", 0.4, marks=pytest.mark.newest_only),  # drawn
        pytest.param("frame:Yes, I trust", 1.5, marks=pytest.mark.newest_only),
        pytest.param("key:enter", 0.4, marks=pytest.mark.newest_only),
    ],
)
def test_a_tui_stalled_at_the_trust_dialog_still_answers(
    sandbox: Sandbox, real_claude: str, at: str, seconds: float
) -> None:
    claude_print = ["--claude-binary", real_claude, "--output-format", "json", "--trace", PROMPT]
    done = subprocess.run(
        [sys.executable, str(STALLED_RUN), at, str(seconds), "--", *claude_print],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd=sandbox.project,
        env=sandbox.env(),
        timeout=120,
    )
    assert_exit(done, 0)
    if at == "key:down" and b"moving to" not in done.stderr:
        pytest.skip("this release's trust dialog has its caret on Yes: no Down to stall at")
    assert b"[stall] the TUI stopped" in done.stderr, "the stall never happened"
    assert json.loads(done.stdout)["result"] == ANSWER
    assert sandbox.leftovers() == []
