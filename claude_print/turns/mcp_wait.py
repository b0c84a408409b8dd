"""Hold the first prompt until the MCP servers are up.

`claude -p` connects its MCP servers before the first request; the TUI connects them in
the background, so a prompt typed at once would reach a model without their tools. Each
stdio server runs behind `mcp_gate`, which marks it ready once it has listed its tools:
the first prompt waits for all of them (bounded), then a moment more for the TUI to take
the tools in. For an argv prompt the relay's UserPromptSubmit hook does the waiting.
"""

from __future__ import annotations

from typing import Callable, Optional

from claude_print import contract
from claude_print.hooks.relay import Relay


class McpWait:
    def __init__(self, relay: Relay, started: float, trace: Callable[[str], None]) -> None:
        self.relay = relay
        self.started = started
        self.trace = trace
        self.ready_at: Optional[float] = None  # the servers' tools were listed
        self.settled = not relay.mcp_waits  # the first prompt has waited for them

    def holding(self, now: float) -> bool:
        """True while the prompt must wait."""
        if self.settled:
            return False
        if self.ready_at is None:
            pending = self.relay.mcp_pending()
            if pending and now - self.started < contract.MCP_WAIT_SECS:
                return True
            if pending:
                self.trace(f"{pending} MCP server(s) not ready after {contract.MCP_WAIT_SECS}s")
            self.ready_at = now
        if now - self.ready_at < contract.MCP_SETTLE_SECS:
            return True
        self.trace(f"MCP servers ready {now - self.started:.2f}s after start")
        self.relay.mcp_settled()
        self.settled = True
        return False
