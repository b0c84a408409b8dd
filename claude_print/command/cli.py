"""Command line: the run's Options from `claude -p`-compatible flags (parsed by parser),
the prompt built exactly as it does, and main()."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from typing import Any, BinaryIO, Dict, List, Mapping, Optional, Sequence, Tuple

from claude_print import __version__, flags
from claude_print.command.parser import build_parser
from claude_print.errors import EXIT_ASSISTANT_ERROR, EXIT_OK, ClaudePrintError
from claude_print.options import DEFAULT_TIMEOUT, Options
from claude_print.tui.delivery import choose_delivery
from claude_print.tui.release import resolve_binary

MAX_PROMPT_BYTES = 10 * 1024 * 1024


def _swallowed_prompt(args: argparse.Namespace) -> Optional[Tuple[str, str]]:
    """A flag that takes several values (`--allowedTools A B`) and whose last value reads
    as a sentence: `claude -p` says the prompt was taken as its value (2.1.331)."""
    many = {name for flag in flags.FLAGS if flag.takes == flags.SOME for name in flag.names}
    for name, *values in reversed(getattr(args, "forwarded", [])):
        if name in many and values and " " in values[-1].strip():
            return name, values[-1]
    # The ones claude-print acts on itself (--mcp-config, --file, --betas) keep their
    # values on the namespace, not among the forwarded words.
    for flag in flags.of_kind(flags.EMULATED):
        values = getattr(args, flag.attribute, None) if flag.takes == flags.SOME else None
        if isinstance(values, list) and values and " " in str(values[-1]).strip():
            return flag.name, str(values[-1])
    return None


def _decode(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ClaudePrintError(f"{what} is not valid UTF-8 (byte {exc.start})") from exc


def build_prompt(
    positional: Optional[str],
    input_file: Optional[str],
    stdin_data: bytes,
    stdin_is_tty: bool,
    deadline: Optional[float] = None,
) -> tuple[str, str]:
    """(prompt, source) exactly as `claude -p` builds it: argument, then newline, then stdin."""
    if positional is not None and input_file is not None:
        raise ClaudePrintError(
            "give the prompt either as an argument or with --input-file, not both"
        )
    head: Optional[str] = positional
    source = "argv"
    if input_file is not None:
        head, source = _read_input_file(input_file, deadline), "file"
    if len(stdin_data) > MAX_PROMPT_BYTES:
        raise ClaudePrintError(f"stdin is over the {MAX_PROMPT_BYTES // (1024 * 1024)} MiB limit")
    tail = _decode(stdin_data, "stdin") if stdin_data else ""
    if head is None:
        if not tail:
            if stdin_is_tty:
                raise ClaudePrintError(
                    "no prompt: give it as an argument, with --input-file, or on stdin"
                )
            raise ClaudePrintError("no prompt: stdin was empty and no prompt argument was given")
        prompt, source = tail, "stdin"
    elif tail:
        prompt, source = head + "\n" + tail, source + "+stdin"
    else:
        prompt = head
    validate_prompt(prompt)
    return prompt, source


def _read_input_file(path: str, deadline: Optional[float] = None) -> str:
    from claude_print.command.prompt_input import read_file

    if os.path.isdir(path):
        raise ClaudePrintError(f"--input-file {path}: is a directory")
    data = read_file(path, MAX_PROMPT_BYTES, deadline or time.monotonic() + DEFAULT_TIMEOUT)
    if len(data) > MAX_PROMPT_BYTES:
        raise ClaudePrintError(f"--input-file {path}: over the 10 MiB limit")
    return _decode(data, f"--input-file {path}")


def validate_prompt(prompt: str) -> None:
    try:
        prompt.encode("utf-8")
    except UnicodeEncodeError as exc:  # an argument's invalid bytes (surrogateescape)
        raise ClaudePrintError(
            f"the prompt is not valid UTF-8 (a bad byte at character {exc.start})"
        ) from None
    if "\x00" in prompt:
        raise ClaudePrintError("the prompt contains a NUL byte")
    if not prompt.strip():
        raise ClaudePrintError("the prompt is empty or only whitespace")
    if len(prompt.encode("utf-8", "surrogatepass")) > MAX_PROMPT_BYTES:
        raise ClaudePrintError("the prompt is over the 10 MiB limit")


def forwarded_flags(args: argparse.Namespace) -> List[str]:
    """The forwarded flags as the TUI gets them, in command-line order."""
    out: List[str] = []
    for name, *values in getattr(args, "forwarded", []):
        if name == "--agents" and values and os.path.isfile(values[0]):
            # `claude -p --agents FILE` reads the file (2.1.290 on); the TUI takes JSON only.
            values = [_read_agents(values[0])]
        out += [name, *values]
    return out


def _read_agents(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ClaudePrintError(f"--agents {path}: {getattr(exc, 'strerror', None) or exc}") from exc


def parse_options(
    argv: Sequence[str],
    stdin: Optional[BinaryIO],
    environ: Mapping[str, str],
    started: Optional[float] = None,
) -> tuple[argparse.Namespace, Optional[Options]]:
    """Parsed args, and the run's Options (None for --version / --check). `started`:
    when the run began (monotonic), which --timeout counts from."""
    from claude_print.command.config import load_defaults

    started = time.monotonic() if started is None else started
    args = build_parser().parse_args(list(argv))
    if args.version or args.check:
        # The doctor reports a broken config itself; --version must not depend on it.
        try:
            configured = load_defaults(environ).claude_binary
        except ClaudePrintError:
            configured = None
        args.claude_binary = args.claude_binary or configured or "claude"
        return args, None
    defaults = load_defaults(environ)
    binary = args.claude_binary or defaults.claude_binary or "claude"
    args.claude_binary = binary
    if args.clean:
        raise ClaudePrintError("--clean only goes with --check")
    streamed = args.input_format == "stream-json"
    if args.warm_up:
        if args.prompt is not None or args.input_file is not None:
            raise ClaudePrintError("--warm-up takes no prompt: it starts a TUI for later runs")
        prompt, source = "", "argv"
    elif streamed:
        _check_stream_input(args)
        prompt, source = "", "stdin"
    else:
        from claude_print.command.prompt_input import read_stdin

        # --timeout bounds the whole run, the prompt's reading included.
        deadline = started + (args.timeout or defaults.timeout_secs or DEFAULT_TIMEOUT)
        stdin_is_tty = _is_tty(stdin)
        stdin_data = (
            b""
            if args.prompt is None and args.input_file is None and stdin_is_tty
            else read_stdin(stdin, MAX_PROMPT_BYTES, deadline)
        )
        swallowed = _swallowed_prompt(args)
        if args.prompt is None and args.input_file is None and not stdin_data and swallowed:
            flag, value = swallowed
            raise ClaudePrintError(
                f'"{value}" was read as a value of {flag}, not as a prompt · put a prompt '
                f"before {flag} or after --"
            )
        prompt, source = build_prompt(
            args.prompt, args.input_file, stdin_data, stdin_is_tty, deadline
        )
    try:
        os.getcwd()
    except OSError as exc:
        raise ClaudePrintError(
            f"the current directory is gone ({exc.strerror or exc}): cd somewhere that exists"
        ) from exc
    if args.model is None and defaults.model:
        args.model = defaults.model
        args.forwarded = [*getattr(args, "forwarded", []), ("--model", defaults.model)]
    inherit_hooks = not args.no_inherit_hooks and defaults.inherit_hooks is not False
    session_id, resumed = _session_choice(args, environ)
    options = Options(
        prompt=prompt,
        prompt_source=source,
        output_format=args.output_format or "text",
        timeout=args.timeout or defaults.timeout_secs or DEFAULT_TIMEOUT,
        claude_binary=binary,
        max_turns=args.max_turns or defaults.max_turns,
        inherit_hooks=inherit_hooks,
        verbose=args.verbose,
        trace=bool(args.trace) or environ.get("CLAUDE_PRINT_TRACE") == "1",
        prompt_via=args.prompt_via,
        forwarded=tuple(forwarded_flags(args)),
        skip_permissions=bool(args.dangerously_skip_permissions),
        permission_mode=args.permission_mode,
        model=args.model,
        resume=resumed,
        session_id=session_id,
        max_budget_usd=args.max_budget_usd,
        no_session_persistence=args.no_session_persistence,
        user_settings=load_user_settings(args.settings[-1]) if args.settings else None,
        json_schema=args.json_schema,
        input_format=args.input_format or "text",
        permission_prompt_tool=args.permission_prompt_tool,
        include_hook_events=bool(args.include_hook_events),
        replay_user_messages=bool(args.replay_user_messages),
        betas=tuple(args.betas),
        mcp_configs=tuple(args.mcp_config),
        files=tuple(args.file),
        warm=_warm_idle(args, defaults),
        warm_pool=_warm_pool(args, defaults),
    )
    if options.no_session_persistence and options.resume:
        raise ClaudePrintError(
            "--no-session-persistence with --resume/--continue: the resumed session's "
            "transcript would be changed or lost; resume without it"
        )
    if not inherit_hooks and args.setting_sources is not None:
        raise ClaudePrintError(
            "--no-inherit-hooks and --setting-sources both choose the settings to load "
            "(--no-inherit-hooks is --setting-sources=): give one"
        )
    if args.replay_user_messages and not streamed:
        raise ClaudePrintError(
            "--replay-user-messages requires both --input-format=stream-json and "
            "--output-format=stream-json."
        )
    if args.permission_prompt_tool is not None and not streamed:
        raise ClaudePrintError(
            "--permission-prompt-tool needs --input-format stream-json (the caller answers "
            "can_use_tool control requests on stdin)"
        )
    if not streamed and not args.warm_up:
        choose_delivery(options)  # a prompt that cannot be delivered is bad input: fail now
    return args, options


def _warm_pool(args: argparse.Namespace, defaults: Any) -> int:
    """How many keepers a warm run leaves for its key (1 when the warm start is off)."""
    warm = args.warm or args.warm_up or defaults.warm
    if args.warm_pool is not None and not warm:
        raise ClaudePrintError("--warm-pool goes with --warm or --warm-up (or warm = true)")
    if not warm:
        return 1
    from claude_print.warm_start.warm import check_pool

    return check_pool(args.warm_pool or defaults.warm_pool or 1)


def _warm_idle(args: argparse.Namespace, defaults: Any) -> float:
    """The warm start's idle lifetime, 0 when it is off (it is opt-in)."""
    if not (args.warm or args.warm_up or defaults.warm):
        return 0.0
    from claude_print.warm_start.warm import DEFAULT_IDLE

    return float(defaults.warm_idle_secs or DEFAULT_IDLE)


def _check_stream_input(args: argparse.Namespace) -> None:
    """--input-format stream-json: as `claude -p` requires, plus what claude-print can do."""
    if (args.output_format or "text") != "stream-json":
        raise ClaudePrintError("--input-format=stream-json requires output-format=stream-json")
    if args.prompt is not None or args.input_file is not None:
        raise ClaudePrintError(
            "--input-format stream-json reads the prompts from stdin: give no prompt "
            "argument or --input-file"
        )
    tool = args.permission_prompt_tool
    if tool is not None and tool != "stdio":
        raise ClaudePrintError(
            f"--permission-prompt-tool {tool}: only stdio is supported (the TUI cannot call "
            "an MCP tool to ask for permission; claude-print asks the caller on stdout)"
        )
    if args.prompt_via == "argv":
        raise ClaudePrintError(
            "--prompt-via argv cannot type the messages of --input-format stream-json into "
            "a running session (use editor or paste)"
        )


def _session_choice(
    args: argparse.Namespace, environ: Mapping[str, str]
) -> Tuple[Optional[str], bool]:
    """(the session id claude-print may name, whether an old session is resumed).

    --continue becomes --resume with the newest session of this directory: the TUI's own
    --continue skips sessions that `claude -p` wrote (measured). Without one, a new session
    starts, as with `claude -p --continue`."""
    session_id = _uuid_or_fail("--session-id", args.session_id) if args.session_id else None
    # The runner passes the session id itself (build_argv), whoever chose it.
    args.forwarded = [w for w in getattr(args, "forwarded", []) if w[0] != "--session-id"]
    resume: Optional[str] = None
    if args.resume is not None:
        if not args.resume:
            raise ClaudePrintError(
                "--resume needs a session id here (without one, Claude Code opens its "
                "session picker)"
            )
        resume = _uuid_or_fail("--resume", args.resume)
    elif args.continue_:
        from claude_print.records.transcript import newest_session

        home = environ.get("HOME") or os.path.expanduser("~")
        resume = newest_session(home, os.getcwd(), environ.get("CLAUDE_CONFIG_DIR"))
    if resume is None:
        return session_id, False
    args.forwarded = [*getattr(args, "forwarded", []), ("--resume", resume)]
    # A resumed session keeps its id, unless --fork-session gives it a new one.
    return (session_id if args.fork_session else None), True


def _uuid(text: str) -> str:
    import uuid  # only for --session-id: its import costs ~3 ms at start

    try:
        return str(uuid.UUID(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a UUID: {text!r}") from None


def _uuid_or_fail(flag: str, text: str) -> str:
    try:
        return _uuid(text)
    except argparse.ArgumentTypeError:
        raise ClaudePrintError(
            f"{flag} {text!r}: not a session id (a UUID); claude-print resumes sessions by id"
        ) from None


def load_user_settings(value: str) -> Dict[str, Any]:
    """--settings as Claude Code reads it: a JSON object, else the path of a file holding one."""
    import json

    try:
        parsed = json.loads(value)
    except ValueError:
        parsed = None
    if parsed is None:
        try:
            with open(value, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            if isinstance(exc, FileNotFoundError):
                raise ClaudePrintError(f"Settings file not found: {value}") from exc
            raise ClaudePrintError(f"--settings {value}: {exc.strerror or exc}") from exc
        try:
            parsed = json.loads(text)
        except ValueError as exc:
            raise ClaudePrintError(f"--settings {value}: not valid JSON ({exc})") from exc
    if not isinstance(parsed, dict):
        raise ClaudePrintError("--settings: the settings must be a JSON object")
    return parsed


def _is_tty(stream: Optional[BinaryIO]) -> bool:
    try:
        return stream is not None and os.isatty(stream.fileno())
    except (OSError, ValueError):
        return False


def main(argv: Optional[Sequence[str]] = None) -> None:
    from claude_print.errors import EXIT_INTERRUPTED

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        code = _main(args)
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except Exception as exc:  # a bug: still exit 2 with one line, not 1 with a traceback
        code = _internal_error(exc, args)
    if argv is None:
        # A real run has cleaned up and reaped its child by now: skip the
        # interpreter's teardown (10-20 ms) once our output is flushed.
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)
    sys.exit(code)


def _internal_error(exc: Exception, argv: Sequence[str]) -> int:
    from claude_print.printing.emit import report_failure

    if "--trace" in argv:
        import traceback

        traceback.print_exc()
    hint = "" if "--trace" in argv else " (--trace shows the traceback)"
    error = ClaudePrintError(f"internal error: {type(exc).__name__}: {exc}{hint}")
    report_failure(error, _requested_format(argv))
    return error.exit_code


def _main(argv: Sequence[str]) -> int:
    from claude_print.printing.emit import report_failure

    started = time.monotonic()  # --timeout bounds the whole run, the prompt's reading too

    stdin = sys.stdin.buffer if sys.stdin is not None else None
    try:
        args, options = parse_options(argv, stdin, os.environ, started)
        if options is None:
            if args.check:
                from claude_print.command import doctor

                return doctor.run(args.claude_binary, clean=args.clean)
            return print_version(args.claude_binary)
        options = options._replace(claude_binary=resolve_binary(options.claude_binary))
        if args.warm_up:
            return warm_up(options)
        code = _warm_run(options, started) if options.warm else None
    except ClaudePrintError as exc:
        report_failure(exc, _requested_format(argv))
        return exc.exit_code
    if code is None:
        # Imported here: a warm run hands its prompt over without the session's modules.
        from claude_print.run import entry

        code = entry.run(options, started)
    if options.warm and code in (EXIT_OK, EXIT_ASSISTANT_ERROR):
        from claude_print.warm_start import warm

        warm.leave_keeper(options, os.environ)  # for the next run
    return code


def _warm_run(options: Options, started: float) -> Optional[int]:
    """--warm: the prompt run by a TUI that waits for it (its exit code), or None."""
    from claude_print.printing.emit import Trace
    from claude_print.warm_start import warm

    return warm.adopt(options, started, os.environ, Trace(options.trace, started))


def warm_up(options: Options) -> int:
    """--warm-up: a keeper for these flags, and nothing else."""
    from claude_print.warm_start import warm

    reason = warm.cold_reason(options, os.environ, os.getcwd())
    if reason is not None:
        raise ClaudePrintError(f"--warm-up: these flags cannot run warm ({reason})")
    warm.leave_keeper(options, os.environ, strict=True)
    return 0


def _requested_format(argv: Sequence[str]) -> str:
    for i, arg in enumerate(argv):
        if arg.startswith("--output-format="):
            return arg.split("=", 1)[1]
        if arg == "--output-format" and i + 1 < len(argv):
            return argv[i + 1]
    return "text"


def print_version(binary: str) -> int:
    from claude_print.tui.release import claude_version

    try:
        wrapped = claude_version(resolve_binary(binary))
    except ClaudePrintError:
        wrapped = "not found"
    # Exit 0 either way: --version reports, --check judges.
    print(f"claude-print {__version__} (wrapping claude {wrapped})")
    return 0
