"""Reading the prompt with `claude -p`'s stdin rule, bounded by the run's deadline."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Iterator, Tuple

import pytest

from claude_print.command import prompt_input
from claude_print.command.prompt_input import STDIN_WARNING, read_file, read_stdin
from claude_print.errors import EXIT_TIMEOUT, ClaudePrintError

LIMIT = 1000


@pytest.fixture
def pipe() -> Iterator[Tuple[int, int]]:
    r, w = os.pipe()
    yield r, w
    for fd in (r, w):
        with contextlib.suppress(OSError):
            os.close(fd)


def later(seconds: float) -> float:
    return time.monotonic() + seconds


def test_a_silent_pipe_is_skipped_with_claude_p_s_warning(
    pipe: Tuple[int, int], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(prompt_input, "FIRST_BYTE_WAIT", 0.1)
    with os.fdopen(pipe[0], "rb", closefd=False) as f:
        assert read_stdin(f, LIMIT, later(60)) == b""
    assert capsys.readouterr().err == STDIN_WARNING + "\n"


def test_a_pipe_that_never_ends_times_out(
    pipe: Tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sleep 600 | claude-print --timeout 5`: data came, the writer stays open."""
    monkeypatch.setattr(prompt_input, "FIRST_BYTE_WAIT", 0.1)
    os.write(pipe[1], b"part of a prompt")
    with os.fdopen(pipe[0], "rb", closefd=False) as f, pytest.raises(ClaudePrintError) as caught:
        read_stdin(f, LIMIT, later(0.3))
    assert caught.value.exit_code == EXIT_TIMEOUT
    assert "timed out reading the prompt from stdin" in caught.value.message


def test_a_pipe_is_read_to_its_end_and_one_byte_past_the_limit(pipe: Tuple[int, int]) -> None:
    os.write(pipe[1], b"a" * (LIMIT + 50))
    os.close(pipe[1])
    with os.fdopen(pipe[0], "rb", closefd=False) as f:
        assert len(read_stdin(f, LIMIT, later(60))) == LIMIT + 1


def test_a_tty_and_no_stdin_give_nothing() -> None:
    master, slave = os.openpty()
    try:
        with os.fdopen(slave, "rb", closefd=False) as f:
            assert read_stdin(f, LIMIT, later(60)) == b""
    finally:
        os.close(slave)
        os.close(master)
    assert read_stdin(None, LIMIT, later(60)) == b""


def test_a_fifo_no_one_writes_to_times_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 42: it says what it waits for once the first wait is over, then --timeout
    ends it."""
    import claude_print.command.prompt_input as prompt_input

    monkeypatch.setattr(prompt_input, "FIRST_BYTE_WAIT", 0.1)
    fifo = tmp_path / "prompt.fifo"
    os.mkfifo(fifo)
    with pytest.raises(ClaudePrintError) as caught:
        read_file(str(fifo), LIMIT, later(0.4))
    assert caught.value.exit_code == EXIT_TIMEOUT
    assert "a FIFO no one wrote to" in caught.value.message
    said = capsys.readouterr().err
    assert f"--input-file {fifo} is a FIFO no one has written to yet" in said


def test_a_fifo_with_a_writer_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "prompt.fifo"
    os.mkfifo(fifo)
    pid = os.fork()
    if pid == 0:  # the writer
        with open(fifo, "wb") as w:
            w.write(b"from the fifo")
        os._exit(0)
    try:
        assert read_file(str(fifo), LIMIT, later(30)) == b"from the fifo"
    finally:
        os.waitpid(pid, 0)
