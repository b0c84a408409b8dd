"""What changed between Claude Code releases, as data: the supported range, the `Facts` of
one release, and `CHANGES` (each difference with the release that introduced it), which
`facts_for(version)` folds into one release's `Facts`. Part of the contract
(`contract` re-exports every name here): the constants that hold for every supported
release are in contract.py; docs/contract.md says where each fact came from.
"""

from __future__ import annotations

import re
from typing import Any, Dict, NamedTuple, Optional, Tuple

OLDEST_SUPPORTED = "2.1.197"
NEWEST_TESTED = "2.1.332"


class Facts(NamedTuple):
    """What one Claude Code release does, where releases differ (see CHANGES)."""

    version: str  # the release these facts are for ("" when it could not be learned)
    tested: bool  # False for a release newer than NEWEST_TESTED, or unknown
    # Permission mode the TUI starts in when none is asked for. A TUI that starts in
    # "auto" gets --permission-mode default: no PermissionRequest hook fires in auto mode.
    tui_default_mode: str
    # The mode `claude -p` starts in. Where it is "auto" (2.1.285 to 2.1.300) claude-print
    # still runs the TUI in "default": its stream-json then lacks `claude -p`'s auto-mode
    # `system/informational` notice and says permissionMode "default".
    print_default_mode: str
    # A paste that collapses to "[Pasted text #N +K lines]" reaches the model wrapped in
    # <pasted_content id="..."> tags instead of as the text itself.
    paste_wraps: bool
    # stream-json has a system/permission_denied event before a denied tool's result.
    permission_denied_event: bool
    # The transcript gets a `cost-state` record (the TUI's own session cost) at exit.
    cost_state: bool
    # `claude -p`'s --max-budget-usd and --json-schema retry-limit results carry a
    # terminal_reason ("budget_exhausted", "structured_output_retry_exhausted").
    limit_terminal_reasons: bool
    # stream-json input (the Agent SDK): the `initialize` answer carries the session's
    # state keys (claude_code_version, current_permission_mode, ...) and the `interrupt`
    # answer `{"still_queued": []}`.
    sdk_session_keys: bool
    # ... and `sandbox_enabled` after `analytics_disabled`.
    sdk_sandbox_key: bool
    # The TUI turns CR, VT, FF, NEL, LS and PS into "\n" and drops other control
    # characters (C0 but tab and newline, DEL, C1, the BOM) from every prompt, argv too.
    sanitizes_controls: bool
    # Text loaded with the editor key is NFC-normalised ("e\u0301" reaches the model as
    # "\u00e9"); the positional argument is not.
    nfc_loaded_text: bool
    # stream-json: an MCP tool call's `tool_use_meta` entry names the server's own tool
    # (`tool_name`).
    tool_use_meta_tool_name: bool
    # stream-json: a tool result claude-print's hook denied carries claude -p's
    # `tool_result_meta` (its print-mode rejection): "" none, "kind" the
    # non_execution_kind, "decision" with the permission_decision too.
    tool_result_meta: str
    # The transcript records the turn's model (a `model` attachment) before the request,
    # and (2.1.330 on) the request's shape with its tools: when a turn's init line can go.
    model_record: bool
    request_shape_record: bool
    # The kinds of background task (the Stop hook's `background_tasks[].type`) that keep
    # `claude -p` from exiting until they end; other kinds it stops after
    # BACKGROUND_GRACE_SECS of an idle main thread.
    background_holds: Tuple[str, ...]
    # `claude -p --output-format text` prints every result of a run (a background task's
    # notification starts another turn), a blank line between them; else only the last.
    text_every_result: bool
    # A running background command claude -p waits for keeps its ceiling off (the
    # command's own time limit ends it; the TUI stops it there too).
    ceiling_spares_shells: bool
    # stream-json's task_started says `is_backgrounded`.
    task_started_backgrounded: bool
    # ... and, a subagent's, its `spawn_depth`.
    task_started_spawn_depth: bool
    # A subagent's task_notification `summary` is its report (the notification's
    # `<result>`; a foreground one's last text), not the notification's `<summary>` (a
    # foreground one's: its description).
    agent_summary_is_report: bool
    # A subagent's messages say its `agent_id`, its task_notification
    # `summary_is_report` (turns/subagent_stream.py).
    subagent_agent_id: bool


class Change(NamedTuple):
    since: str  # the first release that behaves this way
    what: str
    facts: Dict[str, Any]


BASELINE = Facts(
    version=OLDEST_SUPPORTED,
    tested=True,
    tui_default_mode="default",
    print_default_mode="default",
    paste_wraps=False,
    permission_denied_event=False,
    cost_state=False,
    limit_terminal_reasons=False,
    sdk_session_keys=False,
    sdk_sandbox_key=False,
    sanitizes_controls=False,
    nfc_loaded_text=True,
    tool_use_meta_tool_name=False,
    tool_result_meta="",
    model_record=False,
    request_shape_record=False,
    background_holds=("subagent",),
    text_every_result=False,
    ceiling_spares_shells=False,
    task_started_backgrounded=False,
    task_started_spawn_depth=False,
    agent_summary_is_report=False,
    subagent_agent_id=False,
)

# `claude -p` at the end of a run with background work still running (its "print
# wind-down", read in the 2.1.197, 2.1.270 and 2.1.332 binaries and measured): tasks of
# a kind in Facts.background_holds are waited for; once only others are left, and no
# notification is pending, it waits this long and then kills them.
BACKGROUND_GRACE_SECS = 5.0
# ... and it stops waiting even for those after this long (milliseconds; 0: never).
BACKGROUND_CEILING_VAR = "CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS"
BACKGROUND_CEILING_MS = 600000

# Oldest first. Each entry was measured on the real binary (docs/compatibility.md).
CHANGES: Tuple[Change, ...] = (
    Change(
        "2.1.203",
        "a status line leaves the ready footer drawn (bisected: on 2.1.202 any status line, "
        "ours that runs nothing too, puts '← for agents' in its place: READY_FOOTERS)",
        {},
    ),
    Change(
        "2.1.205",
        "ready footer '⏸ manual mode on · ? for shortcuts' in the default mode",
        {},
    ),
    Change(
        "2.1.216",
        "stream-json: a denied tool's result carries tool_result_meta "
        "(non_execution_kind 'user-rejected'; scripts/scan-shapes: 2.1.215 has none)",
        {"tool_result_meta": "kind"},
    ),
    Change(
        "2.1.221",
        "claude -p's --max-budget-usd and --json-schema retry-limit results have a "
        "terminal_reason (absent in 2.1.205; the releases in between were not measured)",
        {"limit_terminal_reasons": True},
    ),
    Change(
        "2.1.223",
        "stream-json: a system/permission_denied event before a denied tool's result "
        "(scripts/scan-shapes over every release: 2.1.222 has none)",
        {"permission_denied_event": True},
    ),
    Change(
        "2.1.247",
        "the REPL draws in the alternate screen with a compact banner; the transcript "
        "gets a cost-state record (the TUI's own cost) when the session ends",
        {"cost_state": True},
    ),
    Change(
        "2.1.248",
        "dialogs (trust, API key, bypass) list their choices unnumbered; the trust dialog "
        "puts 'No, exit' first and under the caret (screens are read by structure and "
        "answered one key at a time, so nothing else changes)",
        {},
    ),
    Change(
        "2.1.270",
        "stream-json: task_started says is_backgrounded (measured: 2.1.197 has none, "
        "2.1.270 has it; not bisected)",
        {"task_started_backgrounded": True},
    ),
    Change(
        "2.1.270",
        "stream-json: a subagent's task_started says spawn_depth and its task_notification "
        "summary is the subagent's report, not the notification's summary line (measured "
        "with claude -p, background and foreground subagents: 2.1.197 has neither, 2.1.270 "
        "both; not bisected)",
        {"task_started_spawn_depth": True, "agent_summary_is_report": True},
    ),
    Change(
        "2.1.270",
        "the transcript records the turn's model (a model attachment) before its request "
        "(measured: 2.1.197 does not)",
        {"model_record": True},
    ),
    Change(
        "2.1.270",
        "text loaded with the editor key is no longer NFC-normalised (bisected: 2.1.269 "
        "still composes 'e\\u0301' into '\\u00e9'; 2.1.197 does)",
        {"nfc_loaded_text": False},
    ),
    Change(
        "2.1.277",
        "the TUI drops control characters (C0 but tab and newline, DEL, C1, the BOM) from "
        "the prompt, loaded, pasted or the positional argument alike, and turns CR, VT, FF, "
        "NEL, LS and PS into '\\n' (CRLF too, but where every line break is one); bisected: "
        "2.1.276 keeps them. `claude -p` sends them as given: no way into the TUI keeps them",
        {"sanitizes_controls": True},
    ),
    Change(
        "2.1.283",
        "the TUI starts in auto mode ('Auto mode is now Claude Code's default permission "
        "mode'), where no PermissionRequest hook fires and a denied tool blocks the turn "
        "(2.1.283 to 2.1.286: no answer; 2.1.287 on, with a gateway URL: the classifier "
        "billing dialog): claude-print passes --permission-mode default (found by "
        "scripts/sweep-releases; 2.1.282 starts in default)",
        {"tui_default_mode": "auto"},
    ),
    Change(
        "2.1.285",
        "claude -p starts in auto mode too, up to 2.1.300: system/init permissionMode "
        "'auto', a system/informational notice about the classifier's billing, the "
        "afk-mode and dangerous-tool-use betas (measured on 2.1.282 to 2.1.289: 2.1.284 "
        "still says 'default')",
        {"print_default_mode": "auto"},
    ),
    Change(
        "2.1.292",
        "claude -p waits for the commands the model ran in the background too, not only "
        "for subagents (holdForBackgroundShells, on unless Anthropic's flag service turns "
        "tengu_tidy_sloth off), and such a command's own time limit postpones its ceiling "
        "(bisected by a scan of every release's code and runs: on 2.1.291 a background "
        "`sleep 20` is killed 5 s after the answer, on 2.1.292 it runs to its end)",
        {"background_holds": ("subagent", "shell"), "ceiling_spares_shells": True},
    ),
    Change(
        "2.1.293",
        "stream-json: tool_result_meta adds permission_decision {'decision': 'reject', "
        "'source': 'config'} (scripts/scan-shapes: 2.1.292 has none; up to 2.1.301 claude "
        "-p, in auto mode, adds a reason_type)",
        {"tool_result_meta": "decision"},
    ),
    Change(
        "2.1.295",
        "claude -p --output-format text prints every result of the run, each followed by "
        "'\\n' and a blank line between them ('r0\\n\\nr1\\n'; bisected: 2.1.294 prints "
        "only the last)",
        {"text_every_result": True},
    ),
    Change(
        "2.1.310",
        "claude -p starts in the default permission mode again (the TUI stays in auto)",
        {"print_default_mode": "default"},
    ),
    Change(
        "2.1.321",
        "with non-essential traffic off the TUI sends no session-title request (no "
        "ai-title record), so its cost-state equals claude -p's cost",
        {},
    ),
    Change(
        "2.1.330",
        "the transcript records each request's shape (api-request-shape, with the tools) "
        "(measured on 2.1.331; 2.1.270 does not; not bisected)",
        {"request_shape_record": True},
    ),
    Change(
        "2.1.330",
        "a paste that collapses to '[Pasted text #N]' (more than 800 characters or 3+ line breaks) "
        "reaches the model wrapped in <pasted_content> tags when the tengu_virtual_pancake "
        "flag is on: by default when Anthropic's flag service is off (non-essential traffic "
        "disabled), and from 2.1.280 whenever the server turns it on. claude-print loads "
        "stdin and file prompts with the external-editor key instead, which is never wrapped",
        {"paste_wraps": True},
    ),
    Change(
        "2.1.330",
        "stream-json input: the initialize answer has the session's state keys and the "
        "interrupt answer {'still_queued': []} (measured on 2.1.197 and 2.1.330 only, "
        "docs/agent-sdk-protocol.md)",
        {"sdk_session_keys": True},
    ),
    Change(
        "2.1.331",
        "stream-json: an MCP tool call's tool_use_meta entry adds tool_name (measured: "
        "2.1.270 has none, 2.1.331 has it; not bisected)",
        {"tool_use_meta_tool_name": True},
    ),
    Change(
        "2.1.331",
        "the initialize answer (and claude -p's system/init) gains sandbox_enabled; the TUI "
        "drops the betas of --betas, as 2.1.330 did the same day (claude-print passes them "
        "in ANTHROPIC_BETAS on every release, where the TUI sends them)",
        {"sdk_sandbox_key": True},
    ),
    Change(
        "2.1.332",
        "stream-json: a subagent's own messages say agent_id, a background subagent's "
        "task_notification summary_is_report (measured with claude -p: 2.1.270 has neither; "
        "not bisected)",
        {"subagent_agent_id": True},
    ),
)


def parse_version(text: Optional[str]) -> Optional[Tuple[int, ...]]:
    match = re.match(r"^\s*v?(\d+)\.(\d+)\.(\d+)", text or "")
    return tuple(int(part) for part in match.groups()) if match else None


def older_than_supported(version: Optional[str]) -> bool:
    parsed, oldest = parse_version(version), parse_version(OLDEST_SUPPORTED)
    return parsed is not None and oldest is not None and parsed < oldest


def facts_for(version: Optional[str]) -> Facts:
    """The facts of `version`; the newest known ones for a newer or unknown release."""
    parsed = parse_version(version)
    facts = BASELINE
    for change in CHANGES:
        since = parse_version(change.since)
        if parsed is None or (since is not None and since <= parsed):
            facts = facts._replace(**change.facts)
    newest = parse_version(NEWEST_TESTED)
    oldest = parse_version(OLDEST_SUPPORTED)
    tested = parsed is not None and oldest is not None and newest is not None
    tested = tested and oldest <= parsed <= newest  # type: ignore[operator]
    return facts._replace(version=version or "", tested=tested)


def drift_note(facts: Facts) -> str:
    """How the running release relates to the tested range ("" when inside it)."""
    if facts.tested:
        return ""
    if not facts.version:
        return f"; release unknown: using the facts of {NEWEST_TESTED}"
    if older_than_supported(facts.version):
        return f"; older than the oldest supported release ({OLDEST_SUPPORTED}): update Claude Code"
    return (
        f"; newer than tested ({OLDEST_SUPPORTED} to {NEWEST_TESTED}): "
        f"using the facts of {NEWEST_TESTED}"
    )
