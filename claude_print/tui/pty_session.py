"""The Claude Code child on a pseudo-terminal: spawn, non-blocking I/O, teardown."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import termios
import time
from typing import Dict, List, Mapping, Optional, Sequence

from claude_print import contract
from claude_print.errors import ClaudePrintError
from claude_print.tui import oauth_refresh


def scrubbed_names(parent: Mapping[str, str]) -> List[str]:
    """The variables of an enclosing Claude Code session (or Agent SDK) in `parent`."""
    return sorted(
        name
        for name in parent
        if name in contract.SCRUBBED_ENV_NAMES or name.startswith(contract.SCRUBBED_ENV_PREFIXES)
    )


def child_environment(parent: Mapping[str, str], betas: Sequence[str] = ()) -> Dict[str, str]:
    """The parent's environment minus the variables of an enclosing Claude Code session.
    `betas` (--betas) go in ANTHROPIC_BETAS, after the user's own: the TUI drops the
    flag's betas from its requests but sends that variable's (measured, 2026-11-24)."""
    gone = set(scrubbed_names(parent)) | {"COLUMNS", "LINES"}
    env = {name: value for name, value in parent.items() if name not in gone}
    names = [name for word in betas for name in word.replace(",", " ").split()]
    if names:
        env[contract.BETAS_VAR] = ",".join(filter(None, [env.get(contract.BETAS_VAR), *names]))
    for name, value in contract.QUIET_TUI_ENV.items():
        env.setdefault(name, value)
    if env.get("TERM", "dumb") in ("", "dumb"):
        env["TERM"] = "xterm-256color"
    return env


def _set_controlling_tty() -> None:
    # Runs in the child after setsid(): make the PTY (already fd 0) its terminal.
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class PtyChild:
    """A process whose stdin/stdout/stderr is the slave side of a fresh PTY."""

    def __init__(
        self,
        argv: List[str],
        env: Mapping[str, str],
        cwd: Optional[str] = None,
        rows: int = contract.WINDOW_ROWS,
        cols: int = contract.WINDOW_COLS,
    ) -> None:
        try:
            self.fd, slave = pty.openpty()
        except OSError as exc:
            raise ClaudePrintError(
                f"cannot open a pseudo-terminal ({exc}); in a container, mount /dev/pts "
                "or run with a TTY-capable runtime"
            ) from exc
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        try:
            self.process = subprocess.Popen(
                argv,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                env=dict(env),
                cwd=cwd,
                start_new_session=True,
                preexec_fn=_set_controlling_tty,
                close_fds=True,
            )
        except OSError as exc:
            os.close(self.fd)
            raise ClaudePrintError(f"cannot start {argv[0]}: {exc.strerror or exc}") from exc
        finally:
            os.close(slave)
        os.set_blocking(self.fd, False)
        self.pid = self.process.pid
        self.env = dict(env)
        self.eof = False
        self._term_sent = False

    def read(self) -> bytes:
        """Whatever output is ready; b"" when nothing is, sets `eof` when the child hung up."""
        try:
            return os.read(self.fd, 65536)
        except BlockingIOError:
            return b""
        except OSError as exc:
            if exc.errno != errno.EIO:  # EIO: every slave fd is closed
                raise
        self.eof = True
        return b""

    def write_some(self, data: bytes) -> int:
        """Write what the PTY takes now (it short-writes); returns the byte count."""
        try:
            return os.write(self.fd, data)
        except BlockingIOError:
            return 0
        except OSError as exc:
            if exc.errno in (errno.EIO, errno.EBADF):
                self.eof = True
                return len(data)
            raise

    def returncode(self) -> Optional[int]:
        return self.process.poll()

    def signal_group(self, signum: int) -> None:
        # The child leads its own session, so its hooks and tools share its group.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signum)

    def pass_on(self, signum: int) -> None:
        """A signal claude-print got, to the TUI's group, once a login renewal is over."""
        self.settle_login()
        self.signal_group(signum)

    def settle_login(self) -> None:
        """Wait while Claude Code renews the stored login: ended in the middle, it loses
        the new refresh token and logs out every run on that login (oauth_refresh)."""
        oauth_refresh.wait_for_refresh(self.env, lambda s: self._wait_draining(s) is not None)

    def last_words(self) -> bytes:
        """A child that is going: what it still wrote, up to its hang-up."""
        out = bytearray()
        while True:
            data = self.read()
            if not data:
                return bytes(out)
            out += data

    def gone(self) -> bool:
        return self.eof or self.returncode() is not None

    def request_exit(self) -> None:
        """SIGTERM the TUI itself (once): it flushes its transcript and ends its hooks. Not
        while it renews the login: that would log out every run on it (oauth_refresh)."""
        if not self._term_sent and self.process.poll() is None:
            self.settle_login()
            self._term_sent = True
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)

    def terminate(self, grace: float = 1.0) -> int:
        """SIGTERM, then SIGKILL to the whole group after `grace`; always reaps."""
        self.request_exit()
        code = self._wait_draining(grace)
        if code is None:
            self.signal_group(signal.SIGKILL)
            code = self.process.wait()
        # The leader is gone: nothing of its group may outlive it.
        self.signal_group(signal.SIGKILL)
        self.close()
        return code

    def wait_exit(self, timeout: float) -> Optional[int]:
        """After request_exit(): its status once it is gone, None if still running."""
        return self._wait_draining(timeout)

    def _wait_draining(self, timeout: float) -> Optional[int]:
        """Wait for the exit while reading the PTY: a TUI blocked on a full terminal
        cannot exit. Hang-up (EIO) on the PTY wakes us the moment it is gone."""
        deadline = time.monotonic() + timeout
        while True:
            code = self.process.poll()
            left = deadline - time.monotonic()
            if code is not None or left <= 0:
                return code
            if self.eof or self.fd < 0:
                try:
                    return self.process.wait(timeout=left)
                except subprocess.TimeoutExpired:
                    return None
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.05))
            if ready:
                self.read()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
