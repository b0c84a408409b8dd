"""Boot, before the spawn: the relay the run needs, the TUI's command line and its
environment, all decided from the options (and, for stream-json input, what the caller
asked for at `initialize`). `prepare` makes them in order; the rest are its steps."""

from __future__ import annotations

import os
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
)

from claude_print import contract, flags
from claude_print.errors import ClaudePrintError
from claude_print.hooks import permissions
from claude_print.hooks.relay import USER_EDITOR_VAR, Relay
from claude_print.run.run_plan import wants_bypass
from claude_print.tui.delivery import normalisation_notes, sent_forms
from claude_print.tui.images import Clipboard
from claude_print.tui.pty_session import child_environment, scrubbed_names
from claude_print.turns.turn_watch import Rules

if TYPE_CHECKING:
    from claude_print.options import Options
    from claude_print.sdk.stream_input import ControlChannel


# --json-schema: `claude -p` rejects an unusable schema argument from this release (older
# ones run without the tool); measured on 2.1.330, not bisected.
STRICT_SCHEMA_FROM = (2, 1, 330)
EXACT_HINT = " (use --prompt-via argv for a byte-exact prompt, up to 128 KiB)"


class Launch(NamedTuple):
    relay: Relay
    argv: List[str]
    env: Dict[str, str]
    rules: Rules  # what every turn is watched with
    clipboard: Optional[Clipboard] = None  # stream-json input: images go in by Ctrl+V


def prepare(
    options: Options,
    facts: contract.Facts,
    delivery: str,
    channel: Optional[ControlChannel],
    session_id: Optional[str],
    reported_hooks: Optional[Any],
    trace: Callable[[str], None],
) -> Launch:
    """Everything the spawn needs. Fails before making the relay where it can; once the
    relay exists, a failure closes it."""
    too_new = flags.too_new(options.forwarded, facts.version)
    if too_new:
        raise ClaudePrintError(too_new)
    schema = json_schema(options, facts.version, trace)
    if channel is None:
        check_prompt(options.prompt, delivery, facts, trace)
    relay = make_relay(options, delivery, channel, schema is not None, reported_hooks)
    try:
        structured_max = None
        structured = None
        if schema is not None:
            from claude_print.mcp import mcp_structured

            structured_max = mcp_structured.max_attempts()
            structured = (schema, structured_max)
        own = own_flags(options, relay, channel, structured)
        argv = build_argv(options, options.claude_binary, relay, session_id, delivery, facts, own)
        scrubbed = scrubbed_names(os.environ)
        if scrubbed:
            trace(f"not passed to Claude Code: {' '.join(scrubbed)}")
        # multi-turn: the editor key also clears the box
        uses_editor = delivery == "editor" or channel is not None
        env = tui_environment(os.environ, options, relay, uses_editor)
        clipboard = None
        if channel is not None and os.pathsep not in relay.dir:  # a PATH entry
            clipboard = private_clipboard(relay)
            env["PATH"] = clipboard.path(env.get("PATH", ""))
        stream_json = options.output_format == "stream-json"
        rules = Rules(
            max_turns=options.max_turns or 0,
            max_budget_usd=options.max_budget_usd,
            structured_max=structured_max,
            others_stop_hooks=others_may_stop(options, channel),
            awaits_stop_summary=stream_json and bool(options.include_hook_events),
            # events go out as they come (json --verbose collects them the same way)
            streams=stream_json or (options.output_format == "json" and options.verbose),
        )
        return Launch(relay, argv, env, rules, clipboard)
    except BaseException:
        relay.close()
        raise


def json_schema(
    options: Options, version: str, trace: Callable[[str], None]
) -> Optional[Dict[str, Any]]:
    """--json-schema as this release's `claude -p` takes it (None: no tool)."""
    if options.json_schema is None:
        return None
    from claude_print.mcp import mcp_structured
    from claude_print.mcp.schema_check import SchemaError

    strict = (contract.parse_version(version) or (99,)) >= STRICT_SCHEMA_FROM
    try:
        schema = mcp_structured.parse_schema_argument(options.json_schema, strict)
    except SchemaError as exc:
        raise ClaudePrintError(str(exc)) from None
    if schema is not None and not strict and not mcp_structured.usable_schema(schema, True):
        trace("--json-schema: Claude Code of this release would ignore this schema")
        return None
    return schema


def check_prompt(
    prompt: str, delivery: str, facts: contract.Facts, trace: Callable[[str], None]
) -> None:
    """The one prompt as the TUI will take it: refused when nothing is left of it, its
    documented normalisations traced."""
    forms = sent_forms(prompt, delivery, facts)
    if not any(form.strip() for form in forms):
        raise ClaudePrintError(
            f"the prompt is empty once Claude Code {facts.version or '(newest)'} has dropped "
            "its control characters (claude -p would send them; the TUI cannot)"
        )
    for note in normalisation_notes(prompt, delivery, facts):
        trace(note + ("" if delivery == "argv" else EXACT_HINT))


def others_may_stop(options: Options, channel: Optional[ControlChannel]) -> bool:
    """A Stop hook other than ours may run (the caller's, or one from a settings file),
    so our Stop does not end the turn by itself."""
    from claude_print.hooks.user_hooks import stop_hooks_possible

    if channel is not None and channel.relay_hooks():
        return True
    sources = permissions.setting_sources(options.inherit_hooks, options.forwarded)
    return stop_hooks_possible(sources, os.getcwd(), os.environ, options.user_settings)


def make_relay(
    options: Options,
    delivery: str,
    channel: Optional[ControlChannel],
    structured: bool,
    reported_hooks: Optional[Any],
) -> Relay:
    """The relay: claude-print's hooks (which of them ask, the caller's too), the
    user's --settings merged in, the gated --mcp-config servers."""
    extra = dict(contract.QUIET_TUI_SETTINGS)
    # Asked-for bypass mode: skip its warning through our settings file, because
    # answering the screen makes Claude Code write the choice into ~/.claude.
    if wants_bypass(options):
        extra[contract.SKIP_BYPASS_SETTING] = True
    asking: Tuple[str, ...] = ()
    if options.max_budget_usd:
        # Before a tool runs, and after a batch of them before the next API call: a tool
        # the TUI starts while its message still streams is recorded only afterwards.
        asking += (contract.HOOK_PRE_TOOL_USE, contract.HOOK_POST_TOOL_BATCH)
    if delivery != "argv" or channel is not None:
        # Each typed-in prompt is held against the one intended before it is sent.
        asking += (contract.HOOK_USER_PROMPT_SUBMIT,)
    if channel is not None:
        asking += channel.asking_hooks()
    user_mcp = None
    # The Python SDK names its in-process servers in --mcp-config (type "sdk"), the
    # TypeScript SDK at `initialize` (sdkMcpServers): both are bridged (sdk_mcp).
    named = {n: {"type": "sdk", "name": n} for n in (channel.sdk_servers if channel else [])}
    if options.mcp_configs or named:
        from claude_print.mcp import mcp_gate

        user_mcp = mcp_gate.read_configs(options.mcp_configs) if options.mcp_configs else {}
        if user_mcp is not None:
            user_mcp.update(named)
    return Relay(
        extra_settings=extra,
        max_turns=options.max_turns,
        asking=asking,
        user_settings=options.user_settings,
        structured=structured,
        extra_hooks=channel.relay_hooks() if channel is not None else [],
        watch_hooks=options.output_format == "stream-json",
        watched_events=reported_hooks,
        user_mcp=user_mcp,
        sdk_bridge=channel is not None,
    )


def own_flags(
    options: Options,
    relay: Relay,
    channel: Optional[ControlChannel],
    structured: Optional[Tuple[Dict[str, Any], int]],
) -> List[str]:
    """claude-print's additions to the TUI's command line: the gated --mcp-config, what
    the caller set at `initialize`, --json-schema's server (schema, attempts allowed)."""
    own: List[str] = []
    if relay.user_mcp_path:
        own += ["--mcp-config", relay.user_mcp_path]
    elif options.mcp_configs:  # unreadable: the TUI says what is wrong with it
        own += ["--mcp-config", *options.mcp_configs]
    if channel is not None:
        own += channel.tui_flags  # subagents, the TypeScript SDK's system prompt
    if structured is not None:
        from claude_print.mcp import mcp_structured

        config = relay.stage_structured(*structured)
        # Pre-allowed: claude-print's PermissionRequest hook would deny it.
        own += ["--mcp-config", config, "--allowedTools", mcp_structured.QUALIFIED_NAME]
    return own


def build_argv(
    options: Options,
    binary: str,
    relay: Relay,
    session_id: Optional[str],
    delivery: str,
    facts: contract.Facts = contract.BASELINE,
    extra: Sequence[str] = (),
) -> List[str]:
    """The TUI's command line; `extra`: claude-print's own additions (`own_flags`),
    after the user's flags."""
    argv = [binary, "--settings", relay.settings_path]
    if not options.inherit_hooks:
        argv.append("--setting-sources=")
    if session_id is not None:
        argv += ["--session-id", session_id]
    argv += options.forwarded
    argv += extra
    hidden = [
        tool
        for tool in contract.TUI_ONLY_TOOLS
        if not (options.permission_mode == "plan" and tool in contract.PLAN_MODE_TOOLS)
    ]
    argv += ["--disallowedTools", *hidden]  # the model gets claude -p's tools
    argv += permissions.mode_flags(
        facts,
        asked=options.skip_permissions or options.permission_mode is not None,
        sources=permissions.setting_sources(options.inherit_hooks, options.forwarded),
        cwd=os.getcwd(),
        environ=os.environ,
        flag_settings=options.user_settings,
    )
    if delivery == "argv":
        argv += ["--", options.prompt]
    return argv


def private_clipboard(relay: Relay) -> Clipboard:
    """The clipboard tools stream-json images go in by (images.py), in the relay's dir."""
    try:
        return Clipboard(os.path.join(relay.dir, CLIPBOARD_DIR))
    except OSError as exc:
        raise ClaudePrintError(f"cannot set up the image clipboard in {relay.dir}: {exc}") from exc


CLIPBOARD_DIR = "clipboard"


def tui_environment(
    environ: Mapping[str, str], options: Options, relay: Relay, uses_editor: bool
) -> Dict[str, str]:
    """The TUI's environment: scrubbed (`pty_session.child_environment`), and with the
    editor script as $VISUAL/$EDITOR when prompts go in by the editor key (the user's
    editor goes along for the tools the model runs)."""
    env = child_environment(environ, options.betas)
    if uses_editor:
        user_editor = env.get("VISUAL") or env.get("EDITOR")
        if user_editor:
            env[USER_EDITOR_VAR] = user_editor
        env["VISUAL"] = env["EDITOR"] = relay.editor_command()
    return env
