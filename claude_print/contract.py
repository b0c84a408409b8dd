"""Everything claude-print assumes about Claude Code, in one place.

Claude Code ships about one release per working day. The constants below hold
for every supported release; what changed between releases is data at the end
of this module (``CHANGES``: each difference with the release that introduced
it), and ``facts_for(version)`` folds it into the ``Facts`` of one release.
Each fact is pinned by a test; docs/contract.md says where each one came from.
When Claude Code drifts, the goal is a loud, specific error (an unknown
screen, a missing hook field), never a hang.
"""

from __future__ import annotations

import re
from typing import Any, Dict, NamedTuple, Optional, Tuple

OLDEST_SUPPORTED = "2.1.197"
NEWEST_TESTED = "2.1.332"
# The release the default test run drives (scripts/install-claude-code).
TESTED_VERSION = OLDEST_SUPPORTED
VERSION_RE = re.compile(rb"(\d+\.\d+\.\d+) \(Claude Code\)")

# --- process -------------------------------------------------------------

# Variables a parent Claude Code session sets for its Bash tools and hooks (measured on
# 2.1.197 and 2.1.330, from a Bash tool call and from hooks of the TUI and `claude -p`),
# plus the Agent SDK's own. Passing them on would make the TUI a child session (no
# transcript: CLAUDE_CODE_CHILD_SESSION), record another entrypoint than "cli" (the
# billing evidence: CLAUDE_CODE_ENTRYPOINT), tie it to the parent (session ids, the
# messaging socket) or auto-connect an IDE. Everything else, every CLAUDE_CODE_* setting
# a user makes included, reaches the TUI as it reaches `claude -p`.
SCRUBBED_ENV_NAMES: Tuple[str, ...] = (
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS",
    "CLAUDE_CODE_CHILD_NOTES_DIR",
    "CLAUDE_CODE_SESSION_ATTENDED",
    "CLAUDE_CODE_MESSAGING_SOCKET",
    "CLAUDE_CODE_MESSAGING_TOKEN",
    "CLAUDE_CODE_EXECPATH",
    "CLAUDE_CODE_SSE_PORT",
    "CLAUDE_CODE_BRIDGE_SESSION_ID",
    "CLAUDE_CODE_HOST_WORKTREE",
    "CLAUDE_CODE_HOST_WORKTREE_FENCE",
    "CLAUDE_CODE_EVAL_INTERVIEW_SESSION",
    "CLAUDE_CODE_CHROME_MCP_ORG_DENIED",
    "CLAUDE_CODE_SDK_READS_SESSION_STATE",
    "CLAUDE_PID",
    "CLAUDE_EFFORT",
    "CLAUDE_ENV_FILE",
    "CLAUDE_PROJECT_DIR",
    "AI_AGENT",
)
SCRUBBED_ENV_PREFIXES: Tuple[str, ...] = ("CLAUDE_AGENT_SDK_",)

# What only a person watching the screen needs, switched off (measured, issue 12: with
# the TUI waiting on a 16 s answer, 16.6 -> 1.6 % of a core on 2.1.197, 9.4 -> 2.5 % on
# 2.1.330). None changes a request body or header, nor the transcript but its `ai-title`
# record: the title variable also skips the session-title request, one API call per run
# that `claude -p` does not make. A user's own value of the variable wins.
# Tools the TUI offers the model and `claude -p` does not (a question to the user, plan
# mode): the request's tool list differed by these (AskUserQuestion on every release,
# the plan-mode pair too on 2.1.197). Disallowed, the lists are equal on 2.1.197 and
# 2.1.331 (measured); the plan-mode pair stays when plan mode is asked for.
TUI_ONLY_TOOLS: Tuple[str, ...] = ("AskUserQuestion", "EnterPlanMode", "ExitPlanMode")
PLAN_MODE_TOOLS: Tuple[str, ...] = ("EnterPlanMode", "ExitPlanMode")
QUIET_TUI_SETTINGS: Dict[str, Any] = {
    "prefersReducedMotion": True,
    "spinnerTipsEnabled": False,
    # The TUI runs a user's status line command (the session's JSON on its stdin) as it
    # draws; `claude -p` never does (2.1.197, 2.1.332). `null` does not unset it (a
    # settings file's value stays); an empty command takes its place, on every release
    # (see READY_FOOTERS).
    "statusLine": {"type": "command", "command": ""},
    # The TUI registers itself as the claude-cli:// URL handler at every start
    # (~/.local/share/applications/claude-code-url-handler.desktop, `Exec=<binary>
    # --handle-uri %u`); `claude -p` never does. Its own setting turns that off (measured
    # on 2.1.197 and 2.1.332: no .desktop file; "disable" is the value it documents).
    "disableDeepLinkRegistration": "disable",
}
# The TUI's first start in a HOME (and again after 1 h, 2 h, ... while it fails) clones
# Anthropic's official plugin marketplace from GitHub into ~/.claude/plugins/marketplaces,
# by HTTPS and then by SSH with the user's keys (`ssh -T git@github.com`); `claude -p`
# never does (traced with strace on 2.1.197 and 2.1.332). Its own variable turns that off.
QUIET_TUI_ENV: Dict[str, str] = {
    "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
    "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
}
# Start-up fetches (feature flags, marketplace, updates) the TUI waits for where a proxy
# black-holes Anthropic's other hosts (~5-6 s, measured); this documented variable skips
# them, and `--check` warns when such a host hangs and it is not set.
NONESSENTIAL_TRAFFIC_VAR = "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"
# --betas reaches the TUI's requests through this variable (comma-separated): on
# 2026-11-24 the TUI 2.1.330 and 2.1.331 dropped the flag's betas (2.1.330 had sent them
# in a CI run earlier that day; 2.1.197 still does); the variable worked on all three.
BETAS_VAR = "ANTHROPIC_BETAS"
STARTUP_FETCH_HOST = "api.anthropic.com"

# Linux MAX_ARG_STRLEN: one argv string longer than this fails with E2BIG.
MAX_ARGV_PROMPT_BYTES = 131072 - 1

WINDOW_ROWS = 50
WINDOW_COLS = 200

# --- keys ----------------------------------------------------------------

KEY_UP = b"\x1b[A"
KEY_DOWN = b"\x1b[B"
KEY_ENTER = b"\r"
# Ctrl+G: the input box opens $VISUAL / $EDITOR on a temp file holding its text and loads
# the file back when the editor exits (every release from 2.1.197). Loaded text is taken
# as typed, never wrapped in <pasted_content> tags like a large paste (2.1.330), and a
# leading "!" stays plain text.
KEY_EXTERNAL_EDITOR = b"\x07"
# Ctrl+V: the input box reads an image from the clipboard (on Linux through `xclip` or
# `wl-paste`, found on PATH) and shows "[Image #N] " at the cursor; the image goes to the
# model as an image block after the text block (measured on 2.1.197, 2.1.270, 2.1.332).
KEY_IMAGE_PASTE = b"\x16"
# Esc stops a running turn (the Agent SDK's `interrupt`): no Stop hook fires; the
# transcript gets a user record starting with INTERRUPTED_PREFIX.
KEY_ESCAPE = b"\x1b"
INTERRUPTED_PREFIX = "[Request interrupted by user"
# Shift+Tab cycles the REPL's permission mode: default -> acceptEdits -> plan -> auto ->
# default (2.1.197, 2.1.270 and 2.1.331 alike; bypassPermissions joins only when the
# session may bypass). The footer names the mode; default says "? for shortcuts" up to
# 2.1.2xx and "manual mode on" later. Nothing is written to the user's settings.
KEY_SHIFT_TAB = b"\x1b[Z"
MODE_FOOTERS: Dict[str, str] = {
    "acceptEdits": "accept edits on",
    "plan": "plan mode on",
    "auto": "auto mode on",
    "bypassPermissions": "bypass permissions on",
    "default": "manual mode on",
}
# While a turn runs the footer says so; after Esc it goes. Interrupted before any answer,
# the TUI drops the turn from its transcript and puts the prompt back in the input box
# (measured on 2.1.197 and 2.1.330): the next prompt must replace that text.
BUSY_FOOTER = "esc to interrupt"
PASTE_START = b"\x1b[200~"
PASTE_END = b"\x1b[201~"
EXIT_COMMAND = b"/exit"
# Keys go out only after the TUI has been quiet this long. 2.1.197 drops none by time
# (measured); the gap keeps a key from racing the frame it answers.
QUIET_BEFORE_KEYS = 0.05
# A dialog's first key waits for this much quiet: on 2.1.330 a Down sent as soon as the
# trust dialog is drawn was lost, or the caret jumped back to "No, exit" (3 runs of 3 at
# once, 1 of 2 after 50 ms, none of many after 300 ms).
QUIET_BEFORE_DIALOG_KEYS = 0.3
# Bracketed paste is written in chunks; a single write(2) on a PTY short-writes.
PASTE_CHUNK = 4096
# The input box turns each tab of typed or pasted text into this.
PASTE_TAB_REPLACEMENT = "    "
# A paste that starts with this puts the input box in shell mode ("! echo hi"); Enter
# would run it on this machine (measured). A leading space, "#" or "&" are plain text, and
# so is "!" in the positional argument.
SHELL_MODE_PREFIX = "!"

# --- screens -------------------------------------------------------------

CARET = "\u276f"  # marks the highlighted choice and the input box

# Screen name -> phrases that must all appear in the rendered text.
SCREEN_MARKERS: Dict[str, Tuple[str, ...]] = {
    "trust": ("Is this a project you created or one you trust?",),
    # --add-dir with a directory not yet trusted (seen on 2.1.330; 2.1.197 and 2.1.270
    # add it without asking, as `claude -p` does on every release).
    "add_dir_trust": ("Adding a new directory:", "Yes, add it"),
    "api_key": ("Detected a custom API key", "Do you want to use this API key?"),
    "bypass": ("Bypass Permissions mode",),
    "onboarding": ("Welcome to Claude Code",),
    "login": ("Select login method",),
    "connectivity": ("Unable to connect to Anthropic services",),
    # Auto mode only (asked for with --permission-mode auto), 2.1.287 to 2.1.310 and
    # 2.1.321 on: the safety classifier cannot run against this API endpoint.
    "auto_mode_billing": ("changing auto mode to no longer charge for classifier requests",),
    "auto_mode_unavailable": ("Auto mode can't check actions in this session",),
    # A tool's permission dialog mid-turn. Normally the PermissionRequest hook decides
    # first and it never shows; 2.1.330 shows it without the hook in plan mode when the
    # auto-mode classifier cannot run (a custom ANTHROPIC_BASE_URL).
    "permission_dialog": ("Do you want to proceed?",),
}
# Choice to pick on screens that claude-print answers, matched against the
# text after the caret / list number.
TRUST_ACCEPT = "Yes, I trust this folder"
ADD_DIR_ACCEPT = "Yes, add it"
BYPASS_ACCEPT = "Yes, I accept"
# The screens claude-print answers, and the choice it picks (bypass: only when asked for).
ANSWERED_SCREENS: Dict[str, str] = {
    "trust": TRUST_ACCEPT,
    "add_dir_trust": ADD_DIR_ACCEPT,
    "bypass": BYPASS_ACCEPT,
}
# The ready REPL: an input line starting with the caret, between two rules, and one
# of these footers ("? for shortcuts" in the default permission mode only; other
# modes show e.g. "bypass permissions on (shift+tab to cycle)"). From 2.1.270 the default
# mode says "manual mode on", alone while the box holds text (an interrupted prompt put
# back, measured on 2.1.331). Up to 2.1.202 any status line (our empty one too) puts
# "← for agents" where the default mode's "? for shortcuts" was (bisected; the other modes
# keep theirs, followed by " · ← for agents"; measured on 2.1.197).
READY_FOOTERS: Tuple[str, ...] = (
    "? for shortcuts",
    "(shift+tab to cycle)",
    "manual mode on",
    "\u2190 for agents",
)
RULE_CHAR = "\u2500"  # box-drawing horizontal

# --- hooks ---------------------------------------------------------------

HOOK_STOP = "Stop"
HOOK_STOP_FAILURE = "StopFailure"
HOOK_PERMISSION_REQUEST = "PermissionRequest"
# The transcript record the TUI writes once every Stop hook has ended (when one of them
# is not claude-print's, 2.1.197 to 2.1.331).
STOP_HOOK_SUMMARY = "stop_hook_summary"
RELAYED_HOOKS: Tuple[str, ...] = (HOOK_STOP, HOOK_STOP_FAILURE, HOOK_PERMISSION_REQUEST)
# --max-turns N: after the Nth batch of tool calls of the main thread (a subagent's hook
# input carries "agent_id"), this hook answers {"continue": false}, so the TUI stops
# before the API call that `claude -p --max-turns N` would not make. No Stop hook fires
# then; the transcript gets the tool results and a "hook_stopped_continuation" record.
HOOK_POST_TOOL_BATCH = "PostToolBatch"
SUBAGENT_PAYLOAD_KEY = '"agent_id"'
MAX_TURNS_STOP = {"continue": False, "stopReason": "claude-print: --max-turns reached"}
# --json-schema: PostToolBatch's answer once claude-print's StructuredOutput server has
# accepted a call or rejected the last allowed one: the turn ends there, as in `claude -p`.
STRUCTURED_STOP = {"continue": False, "stopReason": "claude-print: structured output done"}
HOOK_USER_PROMPT_SUBMIT = "UserPromptSubmit"
# The TUI's first request lacks an MCP tool listed less than this long before (measured:
# 0.26 s was too short; 0.3, 0.6 and 1.0 s all worked on 2.1.197 and 2.1.330).
MCP_SETTLE_SECS = 0.3
# How long the first prompt waits for MCP servers to list their tools (a server that
# fails or ends releases it at once): Claude Code's own connection timeout.
MCP_WAIT_SECS = 30
# --max-budget-usd: the asking PreToolUse hook's answer once the session cost reaches it.
BUDGET_STOP = {"continue": False, "stopReason": "claude-print: --max-budget-usd reached"}
HOOK_TIMEOUT_SECS = 30
# An asking hook waits for claude-print (or the SDK client it asks): a day, so the run's
# own --timeout is what bounds it.
ASK_TIMEOUT_SECS = 86400
HOOK_PRE_TOOL_USE = "PreToolUse"
# Hooks that take a tool-name matcher ("*": every tool).
TOOL_HOOKS: Tuple[str, ...] = (HOOK_PERMISSION_REQUEST, HOOK_PRE_TOOL_USE, "PostToolUse")
DENY_MESSAGE = "Permission to use this tool was not granted (claude-print runs non-interactively)."
# Settings that make the TUI skip the bypass-permissions warning.
SKIP_BYPASS_SETTING = "skipDangerousModePermissionPrompt"

# --- releases --------------------------------------------------------------


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
