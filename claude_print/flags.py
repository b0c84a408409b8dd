"""Every `claude -p` flag and what claude-print does with it: one row each (the contract
for the command line).

- forwarded: passed to the TUI as given; measured to do there what it does in `claude -p`.
- emulated: print mode only (or the TUI ignores it); claude-print does what `claude -p` does.
- refused: neither can be had; exit 2 before anything starts, saying why and what instead.
- own: claude-print's own flags (and `-p`, `--output-format`, `--help`, `--version`).

The rows cover every flag of `claude --help` of the supported releases (a test reads the
help of each installed release) plus the hidden ones that scripts and the Agent SDK pass.
Measurements: docs/contract.md ("Flags"); the README lists the table.
"""

from __future__ import annotations

from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

FORWARDED = "forwarded"
EMULATED = "emulated"
REFUSED = "refused"
OWN = "own"
KINDS = (FORWARDED, EMULATED, REFUSED, OWN)

# How a flag takes values, as commander (Claude Code's parser) reads them.
SWITCH = ""  # no value
ONE = "1"  # exactly one
OPTIONAL = "?"  # one if the next word is not a flag (`-d PROMPT` takes the prompt)
SOME = "+"  # one or more: swallows following words (`--allowedTools a b PROMPT`)


class Flag(NamedTuple):
    names: Tuple[str, ...]  # the long name first, then aliases
    kind: str
    takes: str = SWITCH
    note: str = ""  # forwarded: what was measured; emulated: how; refused: why + instead
    since: str = ""  # the first Claude Code release that has it ("" = every supported one)
    metavar: str = ""
    dest: str = ""  # the argparse attribute ("" = from the long name)

    @property
    def name(self) -> str:
        return self.names[0]

    @property
    def attribute(self) -> str:
        return self.dest or self.name.lstrip("-").replace("-", "_")


def _rows_of(kind: str) -> Callable[..., Flag]:
    def row(names: Sequence[str], takes: str = SWITCH, note: str = "", **kw: str) -> Flag:
        return Flag(tuple(names), kind, takes, note, **kw)

    return row


_fwd, _emu, _ref, _own = (_rows_of(kind) for kind in (FORWARDED, EMULATED, REFUSED, OWN))


_INTERACTIVE = "it only makes sense with a person at the terminal"
_NO_HOOKS = (
    "it switches off every hook, claude-print's own included (measured), so claude-print "
    "could not tell when the turn ends"
)

FLAGS: Tuple[Flag, ...] = (
    # --- claude-print's own, and print mode's fixed points ----------------------------
    _own(["--print", "-p"], note="accepted and ignored: claude-print always prints"),
    _own(["--output-format"], ONE, "text (default), json or stream-json", metavar="FORMAT"),
    _own(["--version", "-v"], note="claude-print's and Claude Code's versions"),
    _own(["--input-file"], ONE, "read the prompt from FILE", metavar="FILE"),
    _own(
        ["--timeout"],
        ONE,
        "give up after SECS seconds, prompt reading included (exit 124; default 3600)",
        metavar="SECS",
    ),
    _own(["--claude-binary"], ONE, "the Claude Code to drive (default: claude)", metavar="PATH"),
    _own(
        ["--no-inherit-hooks"],
        note="ignore user and project settings and hooks (passes --setting-sources=)",
    ),
    _own(
        ["--prompt-via"],
        ONE,
        "how the prompt reaches Claude Code: auto (default: argv for a command-line "
        "prompt, else editor), argv, editor or paste",
        metavar="HOW",
    ),
    _own(["--check"], note="run the self-check and exit"),
    _own(
        ["--trace"], note="claude-print's own timestamped trace on stderr (or CLAUDE_PRINT_TRACE=1)"
    ),
    _own(["--clean"], note="with --check: remove temp dirs of runs that are gone"),
    _own(
        ["--warm"],
        note="warm start: run in a TUI started earlier with the same flags if one waits "
        "(else cold), and leave one for the next run (config: warm, warm_idle_secs)",
    ),
    _own(
        ["--warm-up"],
        note="start a warm TUI for these flags and exit (no prompt); see --warm",
    ),
    _own(
        ["--warm-pool"],
        ONE,
        "with --warm or --warm-up: keep N warm TUIs waiting for these flags, for runs "
        "that start together (1 to 8; default 1; config: warm_pool)",
        metavar="N",
    ),
    # --- forwarded: the TUI does what claude -p does (measured) -----------------------
    _fwd(["--model"], ONE, "the request's model", metavar="MODEL"),
    _fwd(["--effort"], ONE, "the request's output_config.effort", metavar="LEVEL"),
    _fwd(["--system-prompt"], ONE, "replaces the system prompt", metavar="PROMPT"),
    _fwd(["--system-prompt-file"], ONE, "replaces the system prompt; same error", metavar="FILE"),
    _fwd(["--append-system-prompt"], ONE, "appended to the system prompt", metavar="PROMPT"),
    _fwd(["--append-system-prompt-file"], ONE, "appended to the system prompt", metavar="FILE"),
    _fwd(["--tools"], SOME, "the request's tool list", metavar="TOOLS"),
    _fwd(
        ["--allowedTools", "--allowed-tools"],
        SOME,
        "rules that let tools run without asking",
        metavar="TOOLS",
        dest="allowed_tools",
    ),
    _fwd(
        ["--disallowedTools", "--disallowed-tools"],
        SOME,
        "rules that take tools away",
        metavar="TOOLS",
        dest="disallowed_tools",
    ),
    _fwd(["--add-dir"], SOME, "more directories the tools may use", metavar="DIR"),
    _fwd(["--permission-mode"], ONE, "the session's permission mode", metavar="MODE"),
    _fwd(["--dangerously-skip-permissions"], note="bypass mode; its warning screen is skipped"),
    _fwd(
        ["--allow-dangerously-skip-permissions"],
        note="bypass mode selectable; its warning screen is skipped",
    ),
    _fwd(["--session-id"], ONE, "the session's id (a UUID)", metavar="UUID"),
    _fwd(["--fork-session"], note="with --resume: a new session id with the history"),
    _fwd(["--strict-mcp-config"], note="only the servers of --mcp-config"),
    _fwd(["--agent"], ONE, "the session's agent", metavar="AGENT"),
    _fwd(["--agents"], ONE, "custom agents (JSON, or a file holding it)", metavar="JSON"),
    _fwd(["--plugin-dir"], ONE, "load a plugin (repeatable)", metavar="PATH"),
    _fwd(["--plugin-url"], ONE, "fetch a plugin .zip (repeatable)", metavar="URL"),
    _fwd(["--setting-sources"], ONE, "which of user, project, local to load", metavar="SOURCES"),
    _fwd(["--name", "-n"], ONE, "the session's display name", metavar="NAME"),
    _fwd(["--debug", "-d"], OPTIONAL, "debug log under ~/.claude/debug", metavar="FILTER"),
    _fwd(["--debug-file"], ONE, "debug log to this file", metavar="PATH"),
    _fwd(["--disable-slash-commands"], note="no skills or commands"),
    _fwd(["--brief"], note="the SendUserMessage tool"),
    _fwd(["--chrome"], note="Claude in Chrome"),
    _fwd(["--no-chrome"], note="no Claude in Chrome"),
    _fwd(
        ["--restricted"], note="no code-running tools; --settings hooks still fire", since="2.1.248"
    ),
    _fwd(["--autocompact"], ONE, "auto-compact window", metavar="WINDOW", since="2.1.221"),
    _fwd(
        ["--system-prompt-snapshot"],
        ONE,
        "record the system prompt once",
        metavar="ON_OFF",
        since="2.1.260",
    ),
    _fwd(
        ["--remote-control-session-name-prefix"],
        ONE,
        "no effect without --remote-control",
        metavar="PREFIX",
    ),
    _fwd(["--thinking"], ONE, "the request's thinking mode", metavar="MODE"),
    _fwd(["--max-thinking-tokens"], ONE, "thinking budget", metavar="TOKENS"),
    _fwd(["--thinking-display"], ONE, "how thinking is shown", metavar="DISPLAY"),
    # --- emulated: print mode only, done by claude-print ----------------------------
    _emu(
        ["--max-turns"],
        ONE,
        "a PostToolBatch hook stops the TUI before the call claude -p would not make",
        metavar="N",
    ),
    _emu(
        ["--max-budget-usd"],
        ONE,
        "an asking PreToolUse hook stops before the tool of the call that reached it",
        metavar="AMOUNT",
    ),
    _emu(
        ["--json-schema"],
        ONE,
        "claude -p's StructuredOutput tool, served by claude-print's own MCP server; the "
        "result's structured_output as in claude -p",
        metavar="SCHEMA",
    ),
    _emu(
        ["--mcp-config"],
        SOME,
        "MCP servers (files or JSON); stdio servers start through a gate and the prompt "
        "waits for their tools, as claude -p waits (the TUI connects in the background)",
        metavar="CONFIGS",
    ),
    _emu(
        ["--file"],
        SOME,
        "Files API downloads into <cwd>/<session id>/uploads, done by claude-print (the "
        "TUI names the folder after a session id it then drops)",
        metavar="SPECS",
    ),
    _emu(
        ["--no-session-persistence"],
        note="the transcript is removed once read (the billing evidence with it)",
    ),
    _emu(
        ["--settings"],
        ONE,
        "merged into claude-print's own settings (the TUI reads only the last --settings)",
        metavar="FILE_OR_JSON",
    ),
    _emu(
        ["--continue", "-c"],
        note="the newest session of this directory, by id (the TUI skips claude -p's)",
        dest="continue_",
    ),
    _emu(
        ["--resume", "-r"],
        OPTIONAL,
        "a session id; a name or no value (the TUI's picker) is refused",
        metavar="SESSION_ID",
    ),
    _emu(
        ["--verbose"],
        note="as claude -p: json prints every event as one JSON array; stream-json works "
        "with or without it (claude -p requires it); claude-print's own traces are --trace",
    ),
    _emu(
        ["--input-format"],
        ONE,
        "text (default) or stream-json: NDJSON user messages and the Agent SDK's control "
        "protocol; each message is a turn of the same TUI session",
        metavar="FORMAT",
    ),
    _emu(
        ["--permission-prompt-tool"],
        ONE,
        "stdio (with --input-format stream-json): the PermissionRequest hook asks the caller "
        "with a can_use_tool control request; an MCP tool name is refused",
        metavar="TOOL",
    ),
    _emu(
        ["--permission-prompts"],
        ONE,
        "none and host alike: what would ask is denied (no SDK host)",
        metavar="TARGET",
        since="2.1.260",
    ),
    _emu(
        ["--replay-user-messages"],
        note="stream-json input: each user message is echoed back after its turn's "
        "system/init, as claude -p does",
    ),
    _emu(
        ["--betas"],
        SOME,
        "beta headers, passed in ANTHROPIC_BETAS (the TUI drops the flag's)",
        metavar="BETAS",
    ),
    _emu(["--ax-screen-reader"], note="no effect: print mode draws no screen"),
    _emu(
        ["--include-hook-events"],
        note="stream-json: hook_started/hook_response for each run of a user's hook; "
        "--settings hooks run through claude-print's watch script (exact), settings-file "
        "hooks are read from the transcript (only runs that printed or failed)",
    ),
    _emu(
        ["--exclude-dynamic-system-prompt-sections"],
        note="no effect: the TUI keeps those sections in the system prompt (only prompt "
        "caching differs)",
    ),
    # --- refused ----------------------------------------------------------------------
    _ref(
        ["--fallback-model"],
        ONE,
        "the TUI ignores it (measured: it retried the busy model 10 times and never fell "
        "back); run without it, or retry with another --model",
        metavar="MODEL",
    ),
    _ref(
        ["--task-budget"],
        ONE,
        "the TUI ignores it (measured on 2.1.197 and 2.1.330: its requests carry no "
        "task_budget, claude -p's do); leave it out",
        metavar="TOKENS",
    ),
    _ref(
        ["--include-partial-messages"],
        note="the TUI's transcript holds whole content blocks only, not streaming deltas",
    ),
    _ref(
        ["--forward-subagent-text"],
        note="the TUI refuses it (print mode with stream-json only)",
        since="2.1.221",
    ),
    _ref(["--prompt-suggestions"], OPTIONAL, "the TUI refuses it", metavar="VALUE"),
    _ref(["--bare"], note=_NO_HOOKS),
    # Hidden flags the Agent SDK passes for some options (claude-agent-sdk 0.2.187).
    _ref(
        ["--resume-session-at"],
        ONE,
        "the TUI resumes a whole session, not up to a message (the Agent SDK's "
        "resume_session_at): resume the whole session, or fork it",
        metavar="MESSAGE_ID",
    ),
    _ref(
        ["--resume-drops-turn"],
        ONE,
        "goes with --resume-session-at, which the TUI cannot do",
        metavar="PROMPT_ID",
    ),
    _ref(
        ["--session-mirror"],
        note="the Agent SDK's session_store mirrors print mode's transcript stream; the "
        "TUI writes its transcript to disk only (use the SDK without session_store)",
    ),
    _ref(["--safe-mode"], note=_NO_HOOKS),
    _ref(
        ["--worktree", "-w"],
        OPTIONAL,
        "claude-print finds the transcript by the working directory: make the worktree "
        "yourself (git worktree add) and run claude-print in it",
        metavar="NAME",
    ),
    _ref(["--tmux"], note=_INTERACTIVE + " (and it needs --worktree)"),
    _ref(["--ide"], note=_INTERACTIVE + " (diffs and selections go through the IDE)"),
    _ref(["--remote-control"], OPTIONAL, _INTERACTIVE, metavar="NAME"),
    _ref(["--from-pr"], OPTIONAL, _INTERACTIVE + " (it opens a session picker)", metavar="PR"),
    _ref(
        ["--teleport"],
        OPTIONAL,
        "it resumes a claude.ai session in a picker; use --resume SESSION_ID",
        metavar="SESSION",
        since="2.1.238",
    ),
    _ref(
        ["--cloud"],
        OPTIONAL,
        "it starts a cloud session: nothing runs here for claude-print to drive",
        metavar="SESSION",
        since="2.1.238",
    ),
    _ref(
        ["--environment"],
        ONE,
        "it starts a cloud session: nothing runs here for claude-print to drive",
        metavar="ID",
        since="2.1.238",
    ),
    _ref(
        ["--desktop"],
        note="it opens the Claude Desktop app; claude -p refuses it too",
        since="2.1.290",
    ),
    _ref(
        ["--bg", "--background"],
        note="it backgrounds the session and returns at once (no answer to print); "
        "claude -p refuses it too",
    ),
)

BY_NAME: Dict[str, Flag] = {name: flag for flag in FLAGS for name in flag.names}


def of_kind(kind: str) -> List[Flag]:
    return [flag for flag in FLAGS if flag.kind == kind]


def refusal(flag: Flag) -> str:
    return f"{flag.name} is not supported: {flag.note}"


def too_new(forwarded: Sequence[str], version: Optional[str]) -> Optional[str]:
    """Why a forwarded flag cannot go to this Claude Code release (None: all can)."""
    from claude_print.contract import parse_version

    have = parse_version(version)
    if have is None:
        return None
    for word in forwarded:
        flag = BY_NAME.get(word.split("=", 1)[0])
        needed = parse_version(flag.since) if flag is not None else None
        if flag is not None and needed is not None and have < needed:
            return (
                f"{flag.name} needs Claude Code {flag.since} or newer (this is {version}); "
                "update Claude Code or leave the flag out"
            )
    return None
