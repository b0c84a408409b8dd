"""Everything claude-print assumes about Claude Code, in one place.

Claude Code ships about one release per working day. The constants below hold
for every supported release; what changed between releases is data in
contract_releases.py (``CHANGES``: each difference with the release that introduced
it, re-exported here), and ``facts_for(version)`` folds it into the ``Facts`` of one
release.
Each fact is pinned by a test; docs/contract.md says where each one came from.
When Claude Code drifts, the goal is a loud, specific error (an unknown
screen, a missing hook field), never a hang.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Tuple

from claude_print import contract_releases as _releases

# The contract's release half (contract_releases.py), read here as `contract.facts_for`
# and the rest, as every caller always has.
OLDEST_SUPPORTED = _releases.OLDEST_SUPPORTED
NEWEST_TESTED = _releases.NEWEST_TESTED
Facts = _releases.Facts
Change = _releases.Change
BASELINE = _releases.BASELINE
BACKGROUND_GRACE_SECS = _releases.BACKGROUND_GRACE_SECS
BACKGROUND_CEILING_VAR = _releases.BACKGROUND_CEILING_VAR
BACKGROUND_CEILING_MS = _releases.BACKGROUND_CEILING_MS
CHANGES = _releases.CHANGES
parse_version = _releases.parse_version
older_than_supported = _releases.older_than_supported
facts_for = _releases.facts_for
drift_note = _releases.drift_note

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

# --- API errors -----------------------------------------------------------

# The TUI words a few API errors for a person at its keyboard, `claude -p` for a script;
# the transcript holds only the TUI's words. Measured with the fake API's `[[error:N]]`
# for 400 to 529 on 2.1.197, 2.1.270 and 2.1.332 (retries off): only 401/403, 404 and 413
# are worded apart, the rest alike. (the TUI's text, claude -p's) as a full-match regex and
# its replacement.
PRINT_ERROR_WORDING: Tuple[Tuple[str, str], ...] = (
    (r"Please run /login \u00b7 (API Error: .*)", r"Failed to authenticate. \1"),
    (
        r"(There's an issue with the selected model .*) Run /model to pick a different model\.",
        r"\1 Run --model to pick a different model.",  # 404
    ),
    (
        r"(Request too large \(max \w+\)\.) Double press esc to go back and try with a "
        r"smaller file\.",
        r"\1 Try with a smaller file.",  # 2.1.197
    ),
    (
        r"(Request too large \(max \w+\)\. .*) Run /compact, or double press esc to go "
        r"back and remove attachments\.",
        r"\1 Remove older images or compact the conversation.",  # 2.1.270 on
    ),
)
# `claude -p` ends a turn whose request was too large (HTTP 413) with this
# terminal_reason, on every measured release; the TUI records none.
TOO_LARGE_STATUS = 413
TOO_LARGE_TERMINAL_REASON = "image_error"

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
    # The fullscreen renderer's offer (2.1.197 to 2.1.332 have it): shown at start when the
    # classic renderer runs, e.g. after a fullscreen launch in this HOME "didn't finish
    # starting" (a TUI killed within 10 s of its first frame leaves its pid in
    # ~/.claude.json's fullscreenBootPending; the next launch counts it as a failed start
    # and falls back; seen on 2.1.270 with a pool's keepers under load). `claude -p` draws
    # nothing: the renderer is not its concern.
    "renderer_upsell": ("Try the new fullscreen renderer?", "Not now"),
}
# Choice to pick on screens that claude-print answers, matched against the
# text after the caret / list number.
TRUST_ACCEPT = "Yes, I trust this folder"
ADD_DIR_ACCEPT = "Yes, add it"
BYPASS_ACCEPT = "Yes, I accept"
# "Not now" and Esc both dismiss the offer (the TUI then never shows it again in this HOME);
# "Yes, try it" would restart the TUI into the other renderer and write `tui` into the
# user's settings.
RENDERER_UPSELL_DECLINE = "Not now"
# The screens claude-print answers, and the choice it picks (bypass: only when asked for).
ANSWERED_SCREENS: Dict[str, str] = {
    "trust": TRUST_ACCEPT,
    "add_dir_trust": ADD_DIR_ACCEPT,
    "bypass": BYPASS_ACCEPT,
    "renderer_upsell": RENDERER_UPSELL_DECLINE,
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
