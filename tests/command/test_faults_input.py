"""Fault injection (issue 4): unattended runs never hang and never leak. Bad input: exit 2,
a message naming the problem, and the child never started (the mock writes
MOCK_CLAUDE_ARGV_LOG first thing, so its absence proves it): the prompt on stdin, in a
file or as an argument, the flags, the binary, TMPDIR, the current directory; and a run
without HOME, which is no error.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Union

import pytest
from harness import RUN_TIMEOUT, Sandbox, run_claude_print
from mock_runs import MOCK, ack, check, child_argv, err, json_out, mock_env, run_mock

# claude-print with one path refused (EACCES) the way a chmod refuses it to anyone but root,
# so the permission-denied cases run as root too (as in CI). argv: "open" or "mkdir", the
# path (a file to open; a dir to create entries in), then claude-print's own arguments.
DENYING_LAUNCHER = """\
import builtins, errno, os, runpy, sys
call, denied = sys.argv[1], sys.argv[2]
del sys.argv[1:3]
def refuse(path):
    path = os.fsdecode(path)
    raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
def wrap(module, name, hit):
    real = getattr(module, name)
    def patched(path, *args, **kwargs):
        if isinstance(path, (str, bytes, os.PathLike)) and hit(os.fsdecode(path)):
            refuse(path)
        return real(path, *args, **kwargs)
    setattr(module, name, patched)
if call == "open":
    for module, name in ((builtins, "open"), (os, "open")):
        wrap(module, name, lambda path: os.path.abspath(path) == denied)
else:
    wrap(os, "mkdir", lambda path: os.path.dirname(os.path.abspath(path)) == denied)
runpy.run_module("claude_print", run_name="__main__", alter_sys=True)
"""


def run_denied(
    sandbox: Sandbox, call: str, denied: Path, args: List[str]
) -> subprocess.CompletedProcess[bytes]:
    """run_mock, with every `call` ("open" or "mkdir") of or in `denied` failing with EACCES."""
    argv = [sys.executable, "-c", DENYING_LAUNCHER, call, str(denied), "--claude-binary", MOCK]
    return subprocess.run(
        argv + args,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd=sandbox.project,
        env=sandbox.env(**mock_env(sandbox, "ok", None)),
        timeout=RUN_TIMEOUT,
    )


def bad_input(
    sandbox: Sandbox,
    args: List[str],
    *words: str,
    stdin: Optional[bytes] = None,
    env: Optional[Dict[str, str]] = None,
) -> subprocess.CompletedProcess[bytes]:
    proc = run_mock(sandbox, args, stdin=stdin, env=env)
    check(sandbox, proc, 2, *words)
    assert child_argv(sandbox) is None, "the child must not start on bad input"
    assert proc.stdout == b""
    return proc


def test_nul_byte_on_stdin(sandbox: Sandbox) -> None:
    bad_input(sandbox, [], "NUL byte", stdin=b"before\0after")


def test_invalid_utf8_on_stdin(sandbox: Sandbox) -> None:
    bad_input(sandbox, [], "stdin is not valid UTF-8 (byte 3)", stdin=b"abc\xff\xfedef")


@pytest.mark.parametrize("prompt", ["", " ", "\t \n  "])
def test_empty_argument(sandbox: Sandbox, prompt: str) -> None:
    bad_input(sandbox, [prompt], "empty or only whitespace")


@pytest.mark.parametrize("data", [b"", b"\n", b"  \t\r\n \n"])
def test_empty_stdin(sandbox: Sandbox, data: bytes) -> None:
    bad_input(sandbox, [], "no prompt" if not data else "empty or only whitespace", stdin=data)


def test_over_10_mib_on_stdin(sandbox: Sandbox) -> None:
    bad_input(sandbox, [], "over the 10 MiB limit", stdin=b"a" * (10 * 1024 * 1024 + 1))


def test_input_file_is_a_directory(sandbox: Sandbox) -> None:
    bad_input(sandbox, ["--input-file", str(sandbox.home)], "is a directory")


def test_input_file_missing(sandbox: Sandbox) -> None:
    bad_input(
        sandbox, ["--input-file", str(sandbox.home / "nope.txt")], "No such file or directory"
    )


def test_input_file_unreadable(sandbox: Sandbox) -> None:
    path = sandbox.home / "secret.txt"
    path.write_text("prompt")
    proc = run_denied(sandbox, "open", path, ["--input-file", str(path)])
    check(sandbox, proc, 2, f"--input-file {path}: Permission denied")
    assert child_argv(sandbox) is None, "the child must not start on bad input"
    assert proc.stdout == b""


def test_prompt_and_input_file(sandbox: Sandbox) -> None:
    path = sandbox.home / "prompt.txt"
    path.write_text("from the file")
    bad_input(sandbox, ["--input-file", str(path), "positional"], "not both")


def test_tty_stdin_and_no_prompt(sandbox: Sandbox) -> None:
    master, slave = os.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "claude_print", "--claude-binary", MOCK],
            stdin=slave,
            capture_output=True,
            cwd=sandbox.project,
            env=sandbox.env(**mock_env(sandbox, "ok", None)),
            timeout=RUN_TIMEOUT,
        )
    finally:
        os.close(slave)
        os.close(master)
    check(sandbox, proc, 2, "no prompt: give it as an argument, with --input-file, or on stdin")
    assert child_argv(sandbox) is None


@pytest.mark.parametrize(
    "args",
    [["--no-such-flag", "hi"], ["--output-format", "yaml", "hi"], ["--max-turns", "0", "hi"]],
    ids=["unknown", "bad-format", "bad-max-turns"],
)
def test_bad_flags(sandbox: Sandbox, args: List[str]) -> None:
    proc = bad_input(sandbox, args, "claude-print: error:")
    # One line, as claude -p says it: no usage dump before the error.
    assert err(proc).startswith("claude-print: error: ") and err(proc).count("\n") == 1


def test_json_mode_bad_input_prints_an_error_object(sandbox: Sandbox) -> None:
    proc = run_mock(sandbox, ["--output-format", "json", " "])
    assert proc.returncode == 2, f"exit {proc.returncode}\n{err(proc)}"
    obj = json_out(proc)
    assert obj["is_error"] is True
    assert obj["errors"] == ["the prompt is empty or only whitespace"]
    assert child_argv(sandbox) is None
    assert sandbox.leftovers() == []


def test_binary_missing(sandbox: Sandbox) -> None:
    proc = run_claude_print(sandbox, ["hi"], binary="/nonexistent/claude")
    check(sandbox, proc, 2, "/nonexistent/claude: not an executable file (it does not exist)")


def test_binary_not_on_path(sandbox: Sandbox) -> None:
    proc = run_claude_print(
        sandbox, ["hi"], binary="claude-print-no-such-binary", env={"PATH": "/nonexistent"}
    )
    check(sandbox, proc, 2, "`claude-print-no-such-binary` is not on PATH")


def test_binary_not_executable(sandbox: Sandbox) -> None:
    fake = sandbox.home / "claude"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o644)
    proc = run_claude_print(sandbox, ["hi"], binary=str(fake))
    check(sandbox, proc, 2, "not an executable file (it has no execute permission)")


def test_binary_is_a_directory(sandbox: Sandbox) -> None:
    proc = run_claude_print(sandbox, ["hi"], binary=str(sandbox.home))
    check(sandbox, proc, 2, "not an executable file (it is a directory)")


def test_binary_that_cannot_be_executed(sandbox: Sandbox) -> None:
    """Executable bits but no valid format (a script without #!... that is not a script)."""
    fake = sandbox.home / "claude"
    fake.write_bytes(b"\x7fELF\x02garbage")
    fake.chmod(0o755)
    proc = run_claude_print(sandbox, ["hi"], binary=str(fake))
    check(sandbox, proc, 2, "cannot start")


def test_tmpdir_missing(sandbox: Sandbox) -> None:
    missing = sandbox.home.parent / "no-such-tmp"
    bad_input(sandbox, ["hi"], f"TMPDIR={missing} does not exist", env={"TMPDIR": str(missing)})
    assert not missing.exists()


def test_tmpdir_is_a_file(sandbox: Sandbox) -> None:
    path = sandbox.home.parent / "tmp-file"
    path.write_text("")
    bad_input(sandbox, ["hi"], f"TMPDIR={path} is not a directory", env={"TMPDIR": str(path)})


def test_tmpdir_unwritable(sandbox: Sandbox) -> None:
    proc = run_denied(sandbox, "mkdir", sandbox.tmp, ["hi"])
    check(
        sandbox,
        proc,
        2,
        f"cannot create a private temp dir in {sandbox.tmp}: Permission denied",
    )
    assert child_argv(sandbox) is None, "the child must not start on bad input"
    assert proc.stdout == b""


def test_current_directory_deleted(sandbox: Sandbox) -> None:
    gone = sandbox.home.parent / "gone"
    gone.mkdir()
    script = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
    argv = [sys.executable, "-m", "claude_print", "--claude-binary", MOCK, "hi"]
    proc = subprocess.run(
        ["/bin/sh", "-c", script, "sh", str(gone), *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=sandbox.env(**mock_env(sandbox, "ok", None)),
        timeout=RUN_TIMEOUT,
    )
    check(sandbox, proc, 2, "the current directory is gone")
    assert child_argv(sandbox) is None


def without_home_wrapper(sandbox: Sandbox) -> str:
    """A `claude` that gets back the sandbox HOME, so the child never writes to the
    real passwd home; claude-print itself runs without HOME."""
    wrapper = sandbox.home.parent / "claude-with-home"
    wrapper.write_text(f'#!/bin/sh\nHOME="$CHILD_HOME" exec {MOCK} "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


def run_without_home(sandbox: Sandbox, args: List[str]) -> subprocess.CompletedProcess[bytes]:
    env = sandbox.env(**mock_env(sandbox, "ok", {"CHILD_HOME": str(sandbox.home)}))
    del env["HOME"]
    argv = [sys.executable, "-m", "claude_print", "--claude-binary", without_home_wrapper(sandbox)]
    return subprocess.run(
        argv + args,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd=sandbox.project,
        env=env,
        timeout=RUN_TIMEOUT,
    )


def test_home_unset(sandbox: Sandbox) -> None:
    """No HOME: claude-print uses the passwd home for its guesses (os.path.expanduser) and
    the run finishes: HOME is no input claude-print needs, so a missing one is no error."""
    proc = run_without_home(sandbox, ["hi"])
    check(sandbox, proc, 0)
    assert proc.stdout.decode() == ack("hi") + "\n"


def test_hook_transcript_path_wins_over_the_guess(sandbox: Sandbox) -> None:
    proc = run_without_home(sandbox, ["--output-format", "json", "hi"])
    assert proc.returncode == 0, f"exit {proc.returncode}\n{err(proc)}"
    obj = json_out(proc)
    assert obj["result"] == ack("hi")
    assert obj["usage"]["output_tokens"] > 0
    assert obj["stop_reason"] == "end_turn"
    assert sandbox.leftovers() == []


def test_an_argument_that_is_not_utf8_is_a_clear_usage_error(sandbox: Sandbox) -> None:
    argv: List[Union[str, bytes]] = [sys.executable, "-m", "claude_print", "--claude-binary"]
    argv += [MOCK, b"caf\xe9 au lait"]
    proc = subprocess.run(argv, capture_output=True, cwd=sandbox.project, env=sandbox.env())
    assert proc.returncode == 2, proc.stderr.decode()
    assert "the prompt is not valid UTF-8 (a bad byte at character 3)" in err(proc)
    assert "internal error" not in err(proc)
