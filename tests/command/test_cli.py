"""Command line: the prompt exactly as `claude -p` builds it, forwarded flags,
config defaults against flags, and input validation (all in-process)."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path
from typing import BinaryIO, Dict, Iterator, List, Optional

import pytest

from claude_print import contract, flags
from claude_print.command import cli
from claude_print.command.cli import MAX_PROMPT_BYTES, build_prompt, parse_options
from claude_print.command.parser import build_parser
from claude_print.errors import ClaudePrintError
from claude_print.options import DEFAULT_TIMEOUT, Options, new_session_id
from claude_print.tui.release import resolve_binary

IS_ROOT = os.geteuid() == 0


@pytest.fixture
def stdin_file() -> Iterator[contextlib.ExitStack]:
    """Closes the files `as_stdin` opens."""
    with contextlib.ExitStack() as stack:
        yield stack


def as_stdin(tmp_path: Path, stack: contextlib.ExitStack, data: bytes) -> BinaryIO:
    """A regular file as stdin: it has a fileno and is not a TTY, like a pipe."""
    path = tmp_path / f"stdin-{len(list(tmp_path.glob('stdin-*')))}"
    path.write_bytes(data)
    f: BinaryIO = stack.enter_context(path.open("rb"))
    return f


def options(
    argv: List[str],
    stdin: Optional[BinaryIO] = None,
    environ: Optional[Dict[str, str]] = None,
) -> Options:
    _, opts = parse_options(argv, stdin, environ or {})
    assert opts is not None
    return opts


# ------------------------------------------------------ prompt, as claude -p


@pytest.mark.parametrize(
    ("positional", "stdin", "prompt", "source"),
    [
        ("the prompt", b"", "the prompt", "argv"),
        (None, b"only stdin\n", "only stdin\n", "stdin"),  # trailing newline kept
        (None, b"no newline", "no newline", "stdin"),
        ("the prompt", b"piped text\n", "the prompt\npiped text\n", "argv+stdin"),
        ("the prompt", b"piped", "the prompt\npiped", "argv+stdin"),
        ("the prompt", b"  \n", "the prompt\n  \n", "argv+stdin"),
        ("  padded  ", b"", "  padded  ", "argv"),
        ("tab\there", b"tab\tthere", "tab\there\ntab\tthere", "argv+stdin"),
        (None, b"\xf0\x9f\xa6\x80 crab\r\n", "\U0001f980 crab\r\n", "stdin"),
    ],
)
def test_prompt_is_built_like_claude_p(
    positional: Optional[str], stdin: bytes, prompt: str, source: str
) -> None:
    assert build_prompt(positional, None, stdin, False) == (prompt, source)


def test_input_file_alone_and_with_stdin(tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    path.write_bytes(b"from file\n")
    assert build_prompt(None, str(path), b"", False) == ("from file\n", "file")
    assert build_prompt(None, str(path), b"more", False) == ("from file\n\nmore", "file+stdin")


@pytest.mark.parametrize(
    ("positional", "stdin", "tty", "words"),
    [
        (None, b"", False, "no prompt: stdin was empty"),
        (None, b"", True, "no prompt: give it as an argument"),
        (None, b" \n\t", False, "empty or only whitespace"),
        ("", b"", False, "empty or only whitespace"),
        ("  ", b"", False, "empty or only whitespace"),
        (None, b"a\0b", False, "NUL byte"),
        ("a\0b", b"", False, "NUL byte"),
        ("ok", b"\0", False, "NUL byte"),
        (None, b"abc\xff", False, "stdin is not valid UTF-8 (byte 3)"),
        ("ok", b"\xc3", False, "stdin is not valid UTF-8 (byte 0)"),
    ],
)
def test_bad_prompts(positional: Optional[str], stdin: bytes, tty: bool, words: str) -> None:
    with pytest.raises(ClaudePrintError) as info:
        build_prompt(positional, None, stdin, tty)
    assert words in info.value.message
    assert info.value.exit_code == 2


def test_stdin_over_10_mib() -> None:
    with pytest.raises(ClaudePrintError, match="stdin is over the 10 MiB limit"):
        build_prompt(None, None, b"a" * (MAX_PROMPT_BYTES + 1), False)
    prompt, _ = build_prompt(None, None, b"a" * MAX_PROMPT_BYTES, False)
    assert len(prompt) == MAX_PROMPT_BYTES


def test_argument_plus_stdin_over_10_mib() -> None:
    with pytest.raises(ClaudePrintError, match="over the 10 MiB limit"):
        build_prompt("x" * 10, None, b"a" * MAX_PROMPT_BYTES, False)


def test_input_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ClaudePrintError, match="is a directory"):
        build_prompt(None, str(tmp_path), b"", False)
    with pytest.raises(ClaudePrintError, match="No such file or directory"):
        build_prompt(None, str(tmp_path / "missing"), b"", False)
    big = tmp_path / "big"
    big.write_bytes(b"a" * (MAX_PROMPT_BYTES + 1))
    with pytest.raises(ClaudePrintError, match="over the 10 MiB limit"):
        build_prompt(None, str(big), b"", False)
    bad = tmp_path / "bad"
    bad.write_bytes(b"ok\n\x80")
    with pytest.raises(ClaudePrintError, match=r"--input-file .*bad is not valid UTF-8 \(byte 3\)"):
        build_prompt(None, str(bad), b"", False)
    with pytest.raises(ClaudePrintError, match="not both"):
        build_prompt("positional", str(bad), b"", False)


def test_unreadable_input_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "secret"
    path.write_text("x")
    real_open = os.open

    def denied(file: str, *args: int, **kwargs: int) -> int:
        # As root a chmod 000 file is readable anyway: make the open fail as it would.
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("os.open", denied)
    with pytest.raises(ClaudePrintError, match=f"--input-file {path}: Permission denied"):
        build_prompt(None, str(path), b"", False)


def test_tty_stdin_with_no_prompt_is_a_usage_error() -> None:
    master, slave = os.openpty()
    try:
        with os.fdopen(slave, "rb", closefd=False) as f:
            with pytest.raises(ClaudePrintError, match="no prompt: give it as an argument"):
                parse_options([], f, {})
            assert options(["hi"], f).prompt == "hi"  # a TTY stdin is never read
    finally:
        os.close(slave)
        os.close(master)


def test_stdin_through_parse_options(tmp_path: Path, stdin_file: contextlib.ExitStack) -> None:
    opts = options(["summarise"], as_stdin(tmp_path, stdin_file, b"piped\n"))
    assert (opts.prompt, opts.prompt_source) == ("summarise\npiped\n", "argv+stdin")
    opts = options([], as_stdin(tmp_path, stdin_file, b"only\n"))
    assert (opts.prompt, opts.prompt_source) == ("only\n", "stdin")
    opts = options(["alone"], as_stdin(tmp_path, stdin_file, b""))
    assert (opts.prompt, opts.prompt_source) == ("alone", "argv")


def test_prompt_after_double_dash_may_start_with_a_dash() -> None:
    assert options(["--", "-p --help"]).prompt == "-p --help"


def test_prompt_via_argv_over_the_argv_limit(
    tmp_path: Path, stdin_file: contextlib.ExitStack
) -> None:
    big = b"a" * (contract.MAX_ARGV_PROMPT_BYTES + 1)
    with pytest.raises(ClaudePrintError, match="one argument may hold at most"):
        options(["--prompt-via", "argv"], as_stdin(tmp_path, stdin_file, big))
    opts = options(["--prompt-via", "argv"], as_stdin(tmp_path, stdin_file, big[:-1]))
    assert opts.prompt_via == "argv"


# ------------------------------------------------------------ forwarded flags


def test_print_mode_flags_are_never_forwarded() -> None:
    opts = options(
        [
            "-p",
            "--output-format",
            "stream-json",
            "--timeout",
            "30",
            "--max-turns",
            "4",
            "--verbose",
            "--prompt-via",
            "paste",
            "--no-inherit-hooks",
            "--claude-binary",
            "/x/claude",
            "hi",
        ]
    )
    assert list(opts.forwarded) == []
    assert opts.output_format == "stream-json"
    assert opts.timeout == 30.0
    assert opts.max_turns == 4
    assert opts.verbose is True
    assert opts.prompt_via == "paste"
    assert opts.inherit_hooks is False
    assert opts.claude_binary == "/x/claude"
    assert list(options(["--print", "hi"]).forwarded) == []


def test_value_flags_are_forwarded_in_command_line_order() -> None:
    opts = options(
        [
            "--effort",
            "high",
            "--resume",
            "0b8e2a6e-6a36-4d0c-9a57-1c0ed4f0b8a1",
            "--mcp-config",
            "mcp.json",
            '{"mcpServers": {}}',
            "--system-prompt",
            "sys",
            "--append-system-prompt",
            "more --dashes",
            "--permission-mode",
            "plan",
            "--model",
            "sonnet",
            "--",
            "hi",
        ]
    )
    assert opts.mcp_configs == ("mcp.json", '{"mcpServers": {}}')  # gated (mcp_gate)
    assert list(opts.forwarded) == [
        "--effort",
        "high",
        "--system-prompt",
        "sys",
        "--append-system-prompt",
        "more --dashes",
        "--permission-mode",
        "plan",
        "--model",
        "sonnet",
        "--resume",
        "0b8e2a6e-6a36-4d0c-9a57-1c0ed4f0b8a1",
    ]
    assert opts.resume is True
    assert opts.session_id is None, "a resumed session keeps its own id"
    assert opts.model == "sonnet"
    assert opts.permission_mode == "plan"


@pytest.mark.parametrize("value", ["", "-starts-with-a-dash"])
def test_a_value_that_could_pass_for_a_flag_is_forwarded_with_equals(value: str) -> None:
    opts = options([f"--system-prompt={value}", "hi"])
    assert list(opts.forwarded) == [f"--system-prompt={value}"]


def test_allowed_tools_values() -> None:
    opts = options(
        [
            "--allowedTools",
            "Bash(git log:*)",
            "Read",
            "--allowed-tools=Edit",
            "--disallowedTools",
            "WebFetch",
            "--add-dir",
            "/a b",
            "/c",
            "--",
            "hi",
        ]
    )
    assert list(opts.forwarded) == [
        "--allowedTools",
        "Bash(git log:*)",
        "Read",
        "--allowedTools",
        "Edit",
        "--disallowedTools",
        "WebFetch",
        "--add-dir",
        "/a b",
        "/c",
    ]
    assert opts.prompt == "hi"


def test_allowed_tools_swallow_a_following_prompt_like_claude_p() -> None:
    """Variadic, as in commander: `--allowedTools Bash "prompt"` leaves no prompt
    (put `--` before the prompt)."""
    # claude -p 2.1.331 says so in these words; a value without a space stays a value.
    said = '"the prompt" was read as a value of --allowedTools, not as a prompt · put a prompt'
    with pytest.raises(ClaudePrintError, match=re.escape(said)):
        parse_options(["--allowedTools", "Bash", "the prompt"], None, {})
    with pytest.raises(ClaudePrintError, match="no prompt"):
        parse_options(["--allowedTools", "Bash", "Read"], None, {})


@pytest.mark.parametrize(
    "flag", sorted(name for f in flags.FLAGS if f.takes == flags.SOME for name in f.names)
)
def test_every_variadic_flag_says_it_took_the_prompt(flag: str) -> None:
    """Forwarded or acted on by claude-print (--mcp-config, --file, --betas): the error
    names the flag, as `claude -p` 2.1.332 does for --mcp-config ("What is 2+2?" was read
    as a value of --mcp-config, not as a prompt), never just "no prompt"."""
    name = flags.BY_NAME[flag].name  # an alias is named by the flag's long name
    said = f'"What is 2+2?" was read as a value of {name}, not as a prompt · put a prompt'
    with pytest.raises(ClaudePrintError, match=re.escape(said)):
        parse_options([flag, "a.json", "What is 2+2?"], None, {})


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["--bogus", "hi"], "unknown option '--bogus'"),
        (
            ["--max-turns", "abc", "hi"],
            "option '--max-turns' argument 'abc' is invalid. must be a number",
        ),
        (
            ["--output-format", "xml", "hi"],
            "option '--output-format' argument 'xml' is invalid. Allowed choices are text, "
            "json, stream-json.",
        ),
    ],
)
def test_usage_errors_are_one_line_in_claude_p_s_words(
    words: List[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_options(words, None, {})
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"claude-print: error: {said}") and err.count("\n") == 1, err


def test_bool_flags() -> None:
    opts = options(["--dangerously-skip-permissions", "--brief", "hi"])
    assert list(opts.forwarded) == ["--dangerously-skip-permissions", "--brief"]
    assert opts.skip_permissions is True


def test_continue_resumes_the_newest_session_of_the_directory_by_id(tmp_path: Path) -> None:
    """The TUI's own --continue skips sessions `claude -p` wrote: claude-print names the
    newest one itself; with none, a new session starts (as claude -p --continue does)."""
    from claude_print.records.transcript import transcript_path

    env = {"HOME": str(tmp_path)}
    opts = options(["-c", "hi"], environ=env)
    assert (list(opts.forwarded), opts.resume) == ([], False)
    old, new = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
    for n, session in enumerate((new, old)):
        path = Path(transcript_path(str(tmp_path), os.getcwd(), session))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n")
        os.utime(path, (1000 - n, 1000 - n))
    opts = options(["--continue", "hi"], environ=env)
    assert (list(opts.forwarded), opts.resume) == (["--resume", new], True)


STREAMED = ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--resume", "--", "hi"], "needs a session id"),
        (["--resume", "my-session", "hi"], "not a session id"),
        (["--session-id", "nope", "hi"], "not a session id"),
        (["--input-format", "stream-json"], "requires output-format=stream-json"),
        (
            ["--input-format", "stream-json", "--output-format", "stream-json", "hi"],
            "reads the prompts from stdin",
        ),
        (
            ["--input-format=stream-json", "--output-format=stream-json", "--prompt-via=argv"],
            "cannot type the messages",
        ),
        (
            [*STREAMED, "--permission-prompt-tool", "mcp__auth__ask"],
            "only stdio is supported",
        ),
        (["--permission-prompt-tool", "stdio", "hi"], "needs --input-format stream-json"),
        (
            ["--replay-user-messages", "--output-format", "stream-json", "hi"],
            "requires both --input-format=stream-json and --output-format=stream-json",
        ),
        (["--no-inherit-hooks", "--setting-sources", "user", "hi"], "give one"),
        (["--settings", "/nonexistent/settings.json", "hi"], "Settings file not found"),
        (["--settings", "[1, 2]", "hi"], "must be a JSON object"),
    ],
)
def test_flag_values_claude_print_cannot_take(argv: List[str], words: str) -> None:
    with pytest.raises(ClaudePrintError, match=words):
        parse_options(argv, None, {})


def test_user_settings_json_or_file_last_one_counts(tmp_path: Path) -> None:
    settings = tmp_path / "s.json"
    settings.write_text('{"model": "from-file"}')
    opts = options(["--settings", '{"model": "inline"}', "--settings", str(settings), "hi"])
    assert opts.user_settings == {"model": "from-file"}
    assert "--settings" not in opts.forwarded


def test_agents_file_is_read_for_the_tui(tmp_path: Path) -> None:
    agents = tmp_path / "agents.json"
    agents.write_text('{"reviewer": {"description": "d", "prompt": "p"}}')
    opts = options(["--agents", str(agents), "hi"])
    assert list(opts.forwarded) == ["--agents", agents.read_text()]
    assert list(options(["--agents", "{}", "hi"]).forwarded) == ["--agents", "{}"]


def test_defaults_without_flags_or_config() -> None:
    opts = options(["hi"])
    assert opts == Options(prompt="hi", prompt_source="argv")
    assert opts.timeout == DEFAULT_TIMEOUT
    assert opts.claude_binary == "claude"
    assert opts.inherit_hooks is True
    assert opts.max_turns is None
    assert list(opts.forwarded) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["--no-such-flag", "hi"],
        ["--output-format", "yaml", "hi"],
        ["--max-turns", "0", "hi"],
        ["--max-turns", "x", "hi"],
        ["--timeout", "0", "hi"],
        ["--timeout", "-5", "hi"],
        ["--prompt-via", "carrier-pigeon", "hi"],
        ["--max-budget-usd", "0", "hi"],
        ["--max-budget-usd", "-1", "hi"],
        ["--max-budget-usd", "abc", "hi"],
        ["--max-budget-usd", "nan", "hi"],
        ["--max-budget-usd", "inf", "hi"],
        ["a", "b"],
    ],
)
def test_bad_flags_exit_2(argv: List[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        parse_options(argv, None, {})
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "claude-print: error:" in err
    assert argv[0] in err, "the message names the flag"


def test_max_budget_usd_is_emulated_not_forwarded() -> None:
    opts = options(["--max-budget-usd", "0.25", "hi"])
    assert opts.max_budget_usd == 0.25
    assert "--max-budget-usd" not in opts.forwarded


def test_include_partial_messages_is_refused() -> None:
    with pytest.raises(ClaudePrintError, match="whole content blocks only"):
        parse_options(["--include-partial-messages", "hi"], None, {})


def test_clean_needs_check() -> None:
    with pytest.raises(ClaudePrintError, match="--clean only goes with --check"):
        parse_options(["--clean", "hi"], None, {})


def test_version_and_check_need_no_prompt() -> None:
    assert parse_options(["--version"], None, {})[1] is None
    assert parse_options(["--check"], None, {})[1] is None


# ------------------------------------------------------- config vs flags


def write_config(tmp_path: Path, text: str) -> Dict[str, str]:
    folder = tmp_path / "xdg" / "claude-print"
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text(text)
    return {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}


CONFIG = """\
[defaults]
model = "config-model"
max_turns = 7
timeout_secs = 90.5
inherit_hooks = false
claude_binary = "/config/claude"
"""


def test_config_defaults_apply(tmp_path: Path) -> None:
    opts = options(["hi"], environ=write_config(tmp_path, CONFIG))
    assert opts.model == "config-model"
    assert list(opts.forwarded) == ["--model", "config-model"]
    assert opts.max_turns == 7
    assert opts.timeout == 90.5
    assert opts.inherit_hooks is False
    assert opts.claude_binary == "/config/claude"


def test_flags_beat_config(tmp_path: Path) -> None:
    environ = write_config(tmp_path, CONFIG)
    opts = options(
        [
            "--model",
            "flag-model",
            "--max-turns",
            "2",
            "--timeout",
            "5",
            "--claude-binary",
            "/flag/claude",
            "hi",
        ],
        environ=environ,
    )
    assert opts.model == "flag-model"
    assert list(opts.forwarded) == ["--model", "flag-model"]
    assert opts.max_turns == 2
    assert opts.timeout == 5.0
    assert opts.claude_binary == "/flag/claude"
    assert opts.inherit_hooks is False  # the config said so; no flag turns it back on


def test_inherit_hooks_true_in_config_and_no_inherit_flag(tmp_path: Path) -> None:
    environ = write_config(tmp_path, "[defaults]\ninherit_hooks = true\n")
    assert options(["hi"], environ=environ).inherit_hooks is True
    assert options(["--no-inherit-hooks", "hi"], environ=environ).inherit_hooks is False


def test_config_home_fallback(tmp_path: Path) -> None:
    folder = tmp_path / ".config" / "claude-print"
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text('[defaults]\nmodel = "home-model"\n')
    assert options(["hi"], environ={"HOME": str(tmp_path)}).model == "home-model"


def test_bad_config_is_a_usage_error(tmp_path: Path) -> None:
    environ = write_config(tmp_path, "[defaults]\nmax_turns = 'many'\n")
    with pytest.raises(ClaudePrintError) as info:
        parse_options(["hi"], None, environ)
    assert info.value.exit_code == 2
    assert "config.toml" in info.value.message


# ------------------------------------------------------------ the binary


def test_resolve_binary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = tmp_path / "claude"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    assert resolve_binary(str(exe)) == str(exe)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert resolve_binary("claude") == str(exe)
    with pytest.raises(ClaudePrintError, match="`nope` is not on PATH"):
        resolve_binary("nope")
    with pytest.raises(ClaudePrintError, match=r"not an executable file \(it does not exist\)"):
        resolve_binary(str(tmp_path / "missing"))
    with pytest.raises(ClaudePrintError, match=r"not an executable file \(it is a directory\)"):
        resolve_binary(str(tmp_path))
    exe.chmod(0o644)
    if not IS_ROOT or not os.access(str(exe), os.X_OK):
        with pytest.raises(ClaudePrintError, match="it has no execute permission"):
            resolve_binary(str(exe))


# ------------------------------------------------------------------ main


def test_requested_format_for_early_errors() -> None:
    assert cli._requested_format(["--output-format", "json", "x"]) == "json"
    assert cli._requested_format(["--output-format=stream-json"]) == "stream-json"
    assert cli._requested_format(["x"]) == "text"


def test_main_turns_a_bug_into_exit_2_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(argv: List[str]) -> int:
        raise RuntimeError("boom")

    monkeypatch.setattr(cli, "_main", broken)
    with pytest.raises(SystemExit) as info:
        cli.main(["hi"])
    assert info.value.code == 2
    captured = capsys.readouterr()
    assert captured.err == (
        "claude-print: error: internal error: RuntimeError: boom (--trace shows the traceback)\n"
    )
    assert captured.out == ""
    with pytest.raises(SystemExit):
        cli.main(["--trace", "--output-format", "json", "hi"])
    captured = capsys.readouterr()
    assert "Traceback" in captured.err
    assert '"is_error":true' in captured.out


def test_main_keyboard_interrupt_is_130(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(argv: List[str]) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_main", interrupted)
    with pytest.raises(SystemExit) as info:
        cli.main(["hi"])
    assert info.value.code == 130


def test_new_session_id_is_a_canonical_version_4_uuid() -> None:
    import uuid

    ids = {new_session_id() for _ in range(200)}
    assert len(ids) == 200
    for text in ids:
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122


def test_stream_json_input_reads_no_prompt_at_parse_time() -> None:
    """The messages are read by the session as they arrive, not up front (the SDK keeps
    stdin open): parsing must not touch stdin."""

    class Untouchable(io.BytesIO):
        def read(self, *args: object) -> bytes:
            raise AssertionError("stdin was read while parsing")

    _, opts = parse_options([*STREAMED, "--permission-prompt-tool", "stdio"], Untouchable(), {})
    assert opts is not None
    assert (opts.input_format, opts.prompt, opts.permission_prompt_tool) == (
        "stream-json",
        "",
        "stdio",
    )


def test_help_has_examples_choices_defaults_and_the_config_path(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    for words in ("examples:", "auto (default", "argv, editor or paste", "default 3600"):
        assert words in out, words
    assert "claude-print/config.toml" in out and "Exit codes:" in out
