"""One run's options, and the choices made from them alone.

The command line (cli) builds an Options; the runner reads it. Keeping both apart
from cli means the runner needs nothing from the command line's module (no import
circle: cli calls run.entry.run). Which way the prompt goes in is the delivery's choice
(`delivery.choose_delivery`).
"""

from __future__ import annotations

from typing import Any, Dict, NamedTuple, Optional, Tuple

from claude_print.ids import random_uuid

DEFAULT_TIMEOUT = 3600.0


class Options(NamedTuple):
    """One run, as asked for (immutable: ``_replace`` makes a changed copy)."""

    prompt: str
    prompt_source: str  # "argv", "stdin", "file" or "argv+stdin"
    output_format: str = "text"
    timeout: float = DEFAULT_TIMEOUT
    claude_binary: str = "claude"
    max_turns: Optional[int] = None
    inherit_hooks: bool = True
    verbose: bool = False
    trace: bool = False  # --trace: claude-print's own lines on stderr
    prompt_via: str = "auto"
    forwarded: Tuple[str, ...] = ()  # flags passed to the TUI as they are
    skip_permissions: bool = False
    permission_mode: Optional[str] = None
    model: Optional[str] = None
    resume: bool = False  # --resume / --continue: the session id is not ours to choose
    session_id: Optional[str] = None  # --session-id: the caller's choice
    max_budget_usd: Optional[float] = None  # emulated: stop once the session costs this much
    no_session_persistence: bool = False  # emulated: the transcript is removed once read
    user_settings: Optional[Dict[str, Any]] = None  # --settings, merged into claude-print's
    json_schema: Optional[str] = None  # emulated with claude-print's StructuredOutput server
    input_format: str = "text"  # stream-json: prompts (and control requests) come on stdin
    permission_prompt_tool: Optional[str] = None  # "stdio": can_use_tool asks the caller
    include_hook_events: bool = False  # stream-json: every hook run, not SessionStart's only
    replay_user_messages: bool = False  # stream-json input: echo each user message back
    betas: Tuple[str, ...] = ()  # --betas: the TUI gets them in ANTHROPIC_BETAS
    mcp_configs: Tuple[str, ...] = ()  # --mcp-config: stdio servers gated (mcp_gate)
    files: Tuple[str, ...] = ()  # --file: downloaded by claude-print (file_downloads)
    warm: float = 0.0  # --warm: a warm TUI's idle lifetime in seconds (0: cold runs only)
    warm_pool: int = 1  # --warm-pool: how many warm TUIs a run leaves waiting for its key


def permission_mode(options: Options) -> str:
    """The mode the session runs in, as `system/init` and `initialize` report it."""
    if options.permission_mode:
        return options.permission_mode
    return "bypassPermissions" if options.skip_permissions else "default"


def new_session_id() -> str:
    """The id of a session claude-print starts (--session-id and --resume choose their own)."""
    return random_uuid()
