"""The warm start's socket: where it lives, who may use it, and its messages.

A keeper (keeper.py) listens on `<runtime dir>/warm-<key>.sock`; the runtime dir is
`$XDG_RUNTIME_DIR/claude-print-<uid>`, else `<tmp>/claude-print-<uid>`, made 0700 and used
only if it is a real directory of this user's that nobody else may enter. Both ends
check the other's uid (SO_PEERCRED) as well. A message is a 4-byte length and a JSON
object; the first may carry file descriptors (SCM_RIGHTS): the run's stdout and stderr.
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import json
import os
import socket
import stat
import struct
import tempfile
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from claude_print.errors import ClaudePrintError

MAX_SOCKET_PATH = 107  # sun_path holds 108 bytes, the last a NUL
MAX_MESSAGE = 16 * 1024 * 1024  # a 10 MiB prompt, JSON-escaped, fits
READY = b"ready\n"  # a keeper's lock file, once its TUI waits at its input box
_LENGTH = struct.Struct("!I")
_CREDENTIALS = struct.Struct("3i")  # struct ucred: pid, uid, gid


class Paths(NamedTuple):
    socket: str  # where the keeper listens
    lock: str  # held by the keeper for its whole life: one keeper per key


def runtime_dir(environ: Mapping[str, str]) -> str:
    """This user's private dir for warm sockets (made if missing); ClaudePrintError if
    what is there is not private."""
    xdg = environ.get("XDG_RUNTIME_DIR", "")
    # The uid in the name: users who share the variable (sudo -E) do not collide.
    name = f"claude-print-{os.getuid()}"
    base = xdg if xdg and os.path.isabs(xdg) and os.path.isdir(xdg) else tempfile.gettempdir()
    path = os.path.join(base, name)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise ClaudePrintError(f"warm start: cannot make {path}: {exc.strerror or exc}") from exc
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise ClaudePrintError(
            f"warm start: {path} is not a private directory of this user's (0700); "
            "remove it or set XDG_RUNTIME_DIR"
        )
    return path


def paths_for(key: str, environ: Mapping[str, str]) -> Paths:
    return paths_in(runtime_dir(environ), f"warm-{key}")


FAILURE_MAX = 4000  # characters of a failed keeper's reason kept (its screen fits)


def failure_path(paths: Paths) -> str:
    """Where a keeper whose TUI never reached its input box says why (`.failed` beside
    the slot's lock): a detached keeper has no output of its own, and the runs after it
    go cold without it."""
    return paths.lock[: -len(".lock")] + ".failed"


def record_failure(paths: Paths, why: str) -> None:
    """Keep `why` for the runs that find the slot empty (written whole, then renamed)."""
    target = failure_path(paths)
    part = f"{target}.{os.getpid()}"
    with contextlib.suppress(OSError):
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            # Whole, with the screen the boot failed on (a pool test under load showed
            # only "Screen:", and the dialog it met could not be known).
            f.write(why[:FAILURE_MAX] if why else "unknown")
        os.replace(part, target)


def clear_failure(paths: Paths) -> None:
    with contextlib.suppress(OSError):
        os.unlink(failure_path(paths))


def paths_in(directory: str, name: str) -> Paths:
    """`name`.sock and `name`.lock in `directory` (the runtime dir)."""
    base = os.path.join(directory, name)
    if len(os.fsencode(base + ".sock")) > MAX_SOCKET_PATH:
        raise ClaudePrintError(
            f"warm start: {base}.sock is too long for a Unix socket (at most "
            f"{MAX_SOCKET_PATH} bytes); set XDG_RUNTIME_DIR or TMPDIR to a shorter path"
        )
    return Paths(base + ".sock", base + ".lock")


class Claim:
    """A keeper's hold on its key: an flock on the key's lock file for as long as it
    listens. Released, the socket goes first, then the lock file (unlinked while still
    locked, so a keeper that opened the old file sees it is gone and tries again)."""

    def __init__(self, paths: Paths, fd: int) -> None:
        self.paths = paths
        self.fd: Optional[int] = fd

    @classmethod
    def take(cls, paths: Paths) -> Optional[Claim]:
        for _ in range(3):
            fd = os.open(paths.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return None
            try:
                same = os.stat(paths.lock).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                return cls(paths, fd)
            os.close(fd)  # its holder removed it as we opened it
        return None

    def mark(self, state: bytes) -> None:
        """The keeper's state, for a look from outside (`--check`, tests)."""
        if self.fd is not None:
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, state, 0)

    def hand_off(self) -> None:
        """Close our descriptor of the lock and leave the files: a process we forked holds
        the same open lock and is the keeper now."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def release(self) -> None:
        if self.fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.paths.socket)
        with contextlib.suppress(OSError):
            os.unlink(self.paths.lock)
        os.close(self.fd)
        self.fd = None


def listen(path: str) -> socket.socket:
    """The keeper's socket at `path`, made 0600 as it is bound (a chmod after the bind
    would follow a symlink put there meanwhile)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # a dead keeper's: this one holds the key's claim
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mask = os.umask(0o177)
    try:
        listener.bind(path)
        listener.listen(8)
        listener.setblocking(False)  # accepted from the pump, once it says there is one
    except OSError:
        listener.close()
        raise
    finally:
        os.umask(mask)
    return listener


def peer(sock: socket.socket) -> Tuple[int, int]:
    """(pid, uid) of the process at the other end of a Unix socket."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _CREDENTIALS.size)
    pid, uid, _gid = _CREDENTIALS.unpack(raw)
    return pid, uid


def send(sock: socket.socket, message: Dict[str, Any], fds: Sequence[int] = ()) -> None:
    body = json.dumps(message, separators=(",", ":")).encode("utf-8", "surrogatepass")
    data = _LENGTH.pack(len(body)) + body
    ancillary = []
    if fds:
        ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds).tobytes())]
    sent = sock.sendmsg([data], ancillary)
    if sent < len(data):
        sock.sendall(data[sent:])


def receive(sock: socket.socket) -> Tuple[Optional[Dict[str, Any]], List[int]]:
    """The next message and the descriptors it carried; (None, []) at end of stream."""
    fds: List[int] = []
    head = b""
    while len(head) < _LENGTH.size:
        space = socket.CMSG_SPACE(8 * array.array("i").itemsize)
        chunk, ancillary, _flags, _addr = sock.recvmsg(_LENGTH.size - len(head), space)
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                got = array.array("i")
                got.frombytes(payload[: len(payload) - len(payload) % got.itemsize])
                fds.extend(got)
        if not chunk:
            _close_all(fds)
            return None, []
        head += chunk
    (size,) = _LENGTH.unpack(head)
    if size > MAX_MESSAGE:
        _close_all(fds)
        raise ClaudePrintError(f"warm start: a message of {size} bytes is over the limit")
    body = bytearray()
    while len(body) < size:
        chunk = sock.recv(min(size - len(body), 1 << 20))
        if not chunk:
            _close_all(fds)
            return None, []
        body += chunk
    message = json.loads(body.decode("utf-8", "surrogatepass"))
    if not isinstance(message, dict):
        _close_all(fds)
        raise ClaudePrintError("warm start: a message that is not a JSON object")
    return message, fds


def _close_all(fds: Sequence[int]) -> None:
    for fd in fds:
        os.close(fd)
