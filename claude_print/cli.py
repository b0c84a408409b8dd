"""Command line: parse `claude -p`-compatible flags and build the prompt exactly as it does."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
from typing import BinaryIO, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from claude_print import __version__, contract
from claude_print.errors import ClaudePrintError

MAX_PROMPT_BYTES = 10 * 1024 * 1024
DEFAULT_TIMEOUT = 3600.0
OUTPUT_FORMATS = ("text", "json", "stream-json")
PROMPT_VIA = ("auto", "argv", "editor", "paste")


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
    prompt_via: str = "auto"
    include_partial_messages: bool = False
    forwarded: Tuple[str, ...] = ()  # flags passed to the TUI as they are
    skip_permissions: bool = False
    permission_mode: Optional[str] = None
    model: Optional[str] = None
    resume: bool = False  # --resume / --continue: the session id is not ours to choose
    session_id: Optional[str] = None  # --session-id: the caller's choice
    max_budget_usd: Optional[float] = None  # emulated: stop once the session costs this much
    no_session_persistence: bool = False  # emulated: the transcript is removed once read


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="claude-print",
        description=(
            "Drop-in replacement for `claude -p`: runs Claude Code's interactive TUI in a "
            "pseudo-terminal and prints the answer like print mode does."
        ),
        epilog="Exit codes: 0 ok, 1 assistant/API error, 2 usage or internal error, "
        "124 timeout, 130 interrupted.",
    )
    p.add_argument("prompt", nargs="?", help="the prompt (stdin, if piped, is appended)")
    p.add_argument("-p", "--print", action="store_true", help="accepted and ignored (compat)")
    p.add_argument("--output-format", choices=OUTPUT_FORMATS, default=None)
    p.add_argument("--input-file", metavar="FILE", help="read the prompt from FILE")
    p.add_argument("--model")
    p.add_argument("--max-turns", type=_positive_int, metavar="N")
    p.add_argument("--max-budget-usd", type=_budget, metavar="AMOUNT")
    p.add_argument("--no-session-persistence", action="store_true")
    p.add_argument(
        "--allowedTools", "--allowed-tools", dest="allowed_tools", nargs="+", action="extend"
    )
    p.add_argument(
        "--disallowedTools",
        "--disallowed-tools",
        dest="disallowed_tools",
        nargs="+",
        action="extend",
    )
    p.add_argument("--dangerously-skip-permissions", action="store_true")
    p.add_argument("--permission-mode")
    p.add_argument("--append-system-prompt")
    p.add_argument("--system-prompt")
    p.add_argument("--add-dir", nargs="+", action="extend", metavar="DIR")
    p.add_argument("--mcp-config", metavar="FILE")
    p.add_argument("--resume", "-r", metavar="SESSION_ID")
    p.add_argument("--continue", "-c", dest="continue_", action="store_true")
    p.add_argument("--session-id", metavar="UUID", type=_uuid, help="use this session id")
    p.add_argument("--fallback-model")
    p.add_argument("--effort")
    p.add_argument(
        "--timeout",
        type=_positive_float,
        metavar="SECS",
        default=None,
        help=f"give up after SECS seconds (default {DEFAULT_TIMEOUT:g}; exit 124)",
    )
    p.add_argument(
        "--claude-binary", metavar="PATH", help="Claude Code to drive (default: claude on PATH)"
    )
    p.add_argument(
        "--no-inherit-hooks",
        action="store_true",
        help="ignore user/project settings and hooks (--setting-sources=)",
    )
    p.add_argument(
        "--prompt-via",
        choices=PROMPT_VIA,
        default="auto",
        help="argv: byte-exact but visible in the process list, max 128 KiB; "
        "editor: any size, through the input box's external-editor key (Ctrl+G) from a "
        "private file; the TUI trims trailing whitespace and turns CR into LF; "
        "paste: a bracketed paste (tabs become 4 spaces; large pastes reach the model "
        "wrapped in <pasted_content> tags on newer releases); auto: argv for a prompt "
        "that was on claude-print's own command line, else editor",
    )
    p.add_argument("--include-partial-messages", action="store_true")
    p.add_argument("--verbose", action="store_true", help="timestamped traces on stderr")
    p.add_argument("--version", "-v", action="store_true", help="print versions and exit")
    p.add_argument("--check", action="store_true", help="run the self-check doctor and exit")
    p.add_argument("--clean", action="store_true", help="with --check: remove orphaned temp dirs")
    return p


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return value


def _budget(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("must be a number greater than 0 (US dollars)")
    return value


def _uuid(text: str) -> str:
    import uuid  # only for --session-id: its import costs ~3 ms at start

    try:
        return str(uuid.UUID(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a UUID: {text!r}") from None


def new_session_id() -> str:
    """A random (version 4) UUID in canonical form, without importing uuid."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def read_stdin(stream: Optional[BinaryIO]) -> bytes:
    """Piped stdin, bounded; b"" when it is a TTY, closed or empty."""
    if stream is None:
        return b""
    try:
        if os.isatty(stream.fileno()):
            return b""
    except (OSError, ValueError):
        return b""
    data = stream.read(MAX_PROMPT_BYTES + 1)
    return data or b""


def _decode(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ClaudePrintError(f"{what} is not valid UTF-8 (byte {exc.start})") from exc


def build_prompt(
    positional: Optional[str], input_file: Optional[str], stdin_data: bytes, stdin_is_tty: bool
) -> tuple[str, str]:
    """(prompt, source) exactly as `claude -p` builds it: argument, then newline, then stdin."""
    if positional is not None and input_file is not None:
        raise ClaudePrintError(
            "give the prompt either as an argument or with --input-file, not both"
        )
    head: Optional[str] = positional
    source = "argv"
    if input_file is not None:
        head, source = _read_input_file(input_file), "file"
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


def _read_input_file(path: str) -> str:
    if os.path.isdir(path):
        raise ClaudePrintError(f"--input-file {path}: is a directory")
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_PROMPT_BYTES + 1)
    except OSError as exc:
        raise ClaudePrintError(f"--input-file {path}: {exc.strerror or exc}") from exc
    if len(data) > MAX_PROMPT_BYTES:
        raise ClaudePrintError(f"--input-file {path}: over the 10 MiB limit")
    return _decode(data, f"--input-file {path}")


def validate_prompt(prompt: str) -> None:
    if "\x00" in prompt:
        raise ClaudePrintError("the prompt contains a NUL byte")
    if not prompt.strip():
        raise ClaudePrintError("the prompt is empty or only whitespace")
    if len(prompt.encode("utf-8", "surrogatepass")) > MAX_PROMPT_BYTES:
        raise ClaudePrintError("the prompt is over the 10 MiB limit")


def choose_delivery(options: Options) -> str:
    """ "argv" (byte-exact, visible in ps, <= 128 KiB), "editor" (any size, private) or
    "paste"; see --prompt-via and docs/contract.md (prompt delivery)."""
    size = len(options.prompt.encode("utf-8"))
    fits = size <= contract.MAX_ARGV_PROMPT_BYTES
    if options.prompt_via == "argv":
        if not fits:
            raise ClaudePrintError(
                f"--prompt-via argv: the prompt is {size} bytes; one argument may hold at most "
                f"{contract.MAX_ARGV_PROMPT_BYTES} (use --prompt-via paste)"
            )
        return "argv"
    if options.prompt_via in ("editor", "paste"):
        delivery = options.prompt_via
    else:
        delivery = "argv" if options.prompt_source == "argv" and fits else "editor"
    if delivery == "paste" and contract.PASTE_END.decode() in options.prompt:
        raise ClaudePrintError(
            "the prompt contains the bracketed-paste end marker ESC[201~, so it cannot be "
            "pasted whole (use --prompt-via argv, up to 128 KiB)"
        )
    if delivery == "paste" and options.prompt.startswith(contract.SHELL_MODE_PREFIX):
        # Pasted, it would switch the input box to shell mode and Enter would run it here.
        raise ClaudePrintError(
            "the prompt starts with '!', which Claude Code's input box takes as a shell "
            "command to run on this machine; it cannot be pasted (use --prompt-via argv, "
            "which shows it in the process list, or start the prompt with another character)"
        )
    return delivery


def forwarded_flags(args: argparse.Namespace) -> List[str]:
    """Flags the TUI understands, in a stable order. -p, --output-format, --timeout never."""
    out: List[str] = []
    for flag in contract.FORWARDED_VALUE_FLAGS:
        value = getattr(args, flag[2:].replace("-", "_"), None)
        if value is not None:
            out += [flag, value]
    lists = {
        "--allowedTools": args.allowed_tools,
        "--disallowedTools": args.disallowed_tools,
        "--add-dir": args.add_dir,
    }
    for flag in contract.FORWARDED_LIST_FLAGS:
        if lists[flag]:
            out += [flag, *lists[flag]]
    if args.continue_:
        out.append("--continue")
    if args.dangerously_skip_permissions:
        out.append("--dangerously-skip-permissions")
    return out


def parse_options(
    argv: Sequence[str], stdin: Optional[BinaryIO], environ: Mapping[str, str]
) -> tuple[argparse.Namespace, Optional[Options]]:
    """Parsed args, and the run's Options (None for --version / --check)."""
    from claude_print.config import load_defaults

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
    stdin_is_tty = _is_tty(stdin)
    stdin_data = (
        b""
        if args.prompt is None and args.input_file is None and stdin_is_tty
        else read_stdin(stdin)
    )
    prompt, source = build_prompt(args.prompt, args.input_file, stdin_data, stdin_is_tty)
    try:
        os.getcwd()
    except OSError as exc:
        raise ClaudePrintError(
            f"the current directory is gone ({exc.strerror or exc}): cd somewhere that exists"
        ) from exc
    if args.model is None and defaults.model:
        args.model = defaults.model
    options = Options(
        prompt=prompt,
        prompt_source=source,
        output_format=args.output_format or "text",
        timeout=args.timeout or defaults.timeout_secs or DEFAULT_TIMEOUT,
        claude_binary=binary,
        max_turns=args.max_turns or defaults.max_turns,
        inherit_hooks=not args.no_inherit_hooks and defaults.inherit_hooks is not False,
        verbose=args.verbose,
        prompt_via=args.prompt_via,
        include_partial_messages=args.include_partial_messages,
        forwarded=tuple(forwarded_flags(args)),
        skip_permissions=args.dangerously_skip_permissions,
        permission_mode=args.permission_mode,
        model=args.model,
        resume=bool(args.resume or args.continue_),
        session_id=args.session_id,
        max_budget_usd=args.max_budget_usd,
        no_session_persistence=args.no_session_persistence,
    )
    if options.no_session_persistence and options.resume:
        raise ClaudePrintError(
            "--no-session-persistence with --resume/--continue: the resumed session's "
            "transcript would be changed or lost; resume without it"
        )
    choose_delivery(options)  # a prompt that cannot be delivered is bad input: fail now
    if options.include_partial_messages:
        raise ClaudePrintError(
            "--include-partial-messages cannot be honoured: the TUI's transcript holds whole "
            "content blocks only, not streaming deltas"
        )
    return args, options


def _is_tty(stream: Optional[BinaryIO]) -> bool:
    try:
        return stream is not None and os.isatty(stream.fileno())
    except (OSError, ValueError):
        return False


def resolve_binary(name: str) -> str:
    path = shutil.which(name) if os.sep not in name else name
    if path is None:
        raise ClaudePrintError(
            f"Claude Code not found: `{name}` is not on PATH (install it with "
            "`npm install -g @anthropic-ai/claude-code` or pass --claude-binary PATH)"
        )
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        if not os.path.exists(path):
            why = "it does not exist"
        elif os.path.isdir(path):
            why = "it is a directory"
        elif not os.path.isfile(path):
            why = "it is not a regular file"
        else:
            why = "it has no execute permission"
        raise ClaudePrintError(f"--claude-binary {path}: not an executable file ({why})")
    return path


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
    from claude_print import runner

    if "--verbose" in argv:
        import traceback

        traceback.print_exc()
    hint = "" if "--verbose" in argv else " (--verbose shows the traceback)"
    error = ClaudePrintError(f"internal error: {type(exc).__name__}: {exc}{hint}")
    runner.report_failure(error, _requested_format(argv))
    return error.exit_code


def _main(argv: Sequence[str]) -> int:
    from claude_print import runner

    stdin = sys.stdin.buffer if sys.stdin is not None else None
    try:
        args, options = parse_options(argv, stdin, os.environ)
        if options is None:
            if args.check:
                from claude_print import doctor

                return doctor.run(args.claude_binary, clean=args.clean)
            return print_version(args.claude_binary)
        options = options._replace(claude_binary=resolve_binary(options.claude_binary))
    except ClaudePrintError as exc:
        fmt = _requested_format(argv)
        runner.report_failure(exc, fmt)
        return exc.exit_code
    return runner.run(options)


def _requested_format(argv: Sequence[str]) -> str:
    for i, arg in enumerate(argv):
        if arg.startswith("--output-format="):
            return arg.split("=", 1)[1]
        if arg == "--output-format" and i + 1 < len(argv):
            return argv[i + 1]
    return "text"


def print_version(binary: str) -> int:
    from claude_print.doctor import claude_version

    try:
        wrapped = claude_version(resolve_binary(binary))
    except ClaudePrintError:
        wrapped = "not found"
    # Exit 0 either way: --version reports, --check judges.
    print(f"claude-print {__version__} (wrapping claude {wrapped})")
    return 0
