"""End to end: what a run leaves in HOME and the work dir is what `claude -p`'s leaves.

Both sides run the same prompt at once in twin sandboxes (a fresh HOME each, with a
stored login as users have); every file created, changed or deleted anywhere under HOME
and the work dir is compared, but Claude Code's own session bookkeeping
(tests/support/slash_space.BOOKKEEPING: the transcript, ~/.claude.json, history...). Issue 41:
the TUI registered itself as the claude-cli:// URL handler
(~/.local/share/applications/claude-code-url-handler.desktop) on every run.
"""

from __future__ import annotations

import pytest
from checks import assert_exit
from fake_api import FakeApiServer
from harness import Sandbox, run_pair

pytestmark = [pytest.mark.e2e, pytest.mark.matrix]


@pytest.mark.between
def test_a_run_leaves_in_home_what_claude_p_leaves(
    sandbox: Sandbox, fake_api: FakeApiServer, oracle_api: FakeApiServer, real_claude: str
) -> None:
    words = ["--output-format", "json", "--", "What is 2+2?"]
    pair = run_pair(sandbox, real_claude, fake_api, oracle_api, words, words, twin=True)
    assert_exit(pair.theirs, 0)
    assert_exit(pair.ours, 0)
    pair.assert_same_side_effects()
    desktop = sandbox.home / ".local" / "share" / "applications"
    assert not desktop.exists() or list(desktop.iterdir()) == []
