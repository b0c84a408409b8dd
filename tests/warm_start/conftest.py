"""The fixtures of the warm start's tests."""

from __future__ import annotations

from typing import Iterator

import pytest
from harness import Sandbox
from warm_helpers import stop_keepers


@pytest.fixture
def warm_sandbox(sandbox: Sandbox) -> Iterator[Sandbox]:
    """The sandbox, and after the test no keeper and no TUI left in it (its runtime dir
    goes with the sandbox)."""
    yield sandbox
    stop_keepers(sandbox)
