"""The plan of a run: the plain decisions the lower layers need, worked out once from
the command line (`Options`) at the top of the run.

The session's parts below the run package (the stream-json channel, the startup
screens, the stream-json output, the turn) each need one or two choices made from the
options, not the options: which way the prompt goes in, the permission mode, whether
bypass mode was asked for. Made here, once, each part is handed the value it uses and
depends on nothing else of the command line (docs/decisions.md, 69).
"""

from __future__ import annotations

from typing import NamedTuple, Optional

from claude_print.options import Options, new_session_id, permission_mode
from claude_print.tui.delivery import choose_delivery


class RunPlan(NamedTuple):
    """What a run does, as decided from its options alone (immutable)."""

    multi_turn: bool  # stream-json input: many prompts into one TUI, typed as they come
    delivery: str  # how prompts go in: "argv", "editor" or "paste" (choose_delivery)
    argv_prompt: Optional[str]  # the prompt on the TUI's command line ("argv" delivery)
    permission_mode: str  # as `system/init` and `initialize` report it, until changed
    wants_bypass: bool  # bypass mode asked for: its warning screen is accepted
    can_use_tool: bool  # --permission-prompt-tool stdio: the caller answers tool asks
    session_id: Optional[str]  # the session's id; None: the TUI chooses it (--resume)


def wants_bypass(options: Options) -> bool:
    """Bypass mode was asked for: its warning screen is skipped (settings) or accepted."""
    return (
        options.skip_permissions
        or options.permission_mode == "bypassPermissions"
        or "--allow-dangerously-skip-permissions" in options.forwarded
    )


def plan_run(options: Options) -> RunPlan:
    """The run's plan; ClaudePrintError for a prompt that cannot be delivered."""
    bypass = wants_bypass(options)
    multi_turn = options.input_format == "stream-json"
    delivery = choose_delivery(options, multi_turn=multi_turn)
    return RunPlan(
        multi_turn=multi_turn,
        delivery=delivery,
        argv_prompt=options.prompt if delivery == "argv" else None,
        permission_mode=permission_mode(options),
        wants_bypass=bypass,
        can_use_tool=options.permission_prompt_tool == "stdio",
        session_id=options.session_id or (None if options.resume else new_session_id()),
    )


__all__ = ["RunPlan", "plan_run", "wants_bypass"]
