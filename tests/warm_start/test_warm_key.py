"""The warm start's key (warm.key) and the uid checks around its socket (handover):
a run may only be answered by a keeper whose TUI started exactly as its own would, and
never by another user's process. Unit level, no TUI."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import stat
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterator, List

import pytest

from claude_print.errors import ClaudePrintError
from claude_print.options import Options
from claude_print.warm_start import handover, warm

NOBODY = 65534
ROOT_ONLY = pytest.mark.skipif(os.getuid() != 0, reason="switches to user nobody: root only")


@pytest.fixture
def binary(tmp_path: Path) -> str:
    path = tmp_path / "claude"
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return str(path)


def key(binary: str, cwd: str, environ: Dict[str, str], **fields: object) -> str:
    options = Options(prompt="hi", prompt_source="argv", claude_binary=binary, **fields)  # type: ignore[arg-type]
    return warm.key(options, environ, cwd)


ENV = {"HOME": "/home/someone", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def test_the_same_run_has_the_same_key(binary: str, tmp_path: Path) -> None:
    assert key(binary, str(tmp_path), dict(ENV)) == key(binary, str(tmp_path), dict(ENV))
    # the prompt, its source, --timeout and --trace are handed over with the prompt
    options = Options(prompt="hi", prompt_source="argv", claude_binary=binary)
    other = options._replace(prompt="other", prompt_source="file", timeout=5.0, trace=True)
    assert warm.key(options, ENV, str(tmp_path)) == warm.key(other, ENV, str(tmp_path))


@pytest.mark.parametrize(
    "changed",
    [
        {"LANG": "de_DE.UTF-8"},
        {"HOME": "/home/other"},
        {"NEW_VARIABLE": ""},
        {"PATH": "/usr/bin:/bin:"},
    ],
)
def test_any_environment_change_is_another_key(
    binary: str, tmp_path: Path, changed: Dict[str, str]
) -> None:
    assert key(binary, str(tmp_path), {**ENV, **changed}) != key(binary, str(tmp_path), ENV)


def test_the_shells_underscore_is_not_in_the_key(binary: str, tmp_path: Path) -> None:
    """bash sets `_` to the program it starts: a warm-up typed in a shell must serve a
    script's runs (measured: it did not, `_` was /usr/bin/python3 there)."""
    shell = key(binary, str(tmp_path), {**ENV, "_": "/usr/local/bin/claude-print"})
    script = key(binary, str(tmp_path), {**ENV, "_": "/usr/bin/python3"})
    assert shell == script == key(binary, str(tmp_path), ENV)


def test_a_variable_removed_is_another_key(binary: str, tmp_path: Path) -> None:
    fewer = {k: v for k, v in ENV.items() if k != "LANG"}
    assert key(binary, str(tmp_path), fewer) != key(binary, str(tmp_path), ENV)


@pytest.mark.parametrize(
    "fields",
    [{"output_format": "json"}, {"model": "opus"}, {"forwarded": ("--verbose",)}],
)
def test_flags_are_in_the_key(binary: str, tmp_path: Path, fields: Dict[str, object]) -> None:
    assert key(binary, str(tmp_path), ENV, **fields) != key(binary, str(tmp_path), ENV)


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def test_the_umask_is_in_the_key(binary: str, tmp_path: Path) -> None:
    with umask(0o000):
        open_one = key(binary, str(tmp_path), ENV)
    with umask(0o077):
        private = key(binary, str(tmp_path), ENV)
    with umask(0o000):
        assert key(binary, str(tmp_path), ENV) == open_one
    assert open_one != private


def test_a_binary_rewritten_in_place_is_another_key(binary: str, tmp_path: Path) -> None:
    """An update that rewrites Claude Code at the same path, even to the same size,
    starts another TUI: a keeper of the old binary must not serve it. Untouched, the
    key stays."""
    os.utime(binary, ns=(1_700_000_000_000_000_000,) * 2)
    before = key(binary, str(tmp_path), ENV)
    assert key(binary, str(tmp_path), ENV) == before
    Path(binary).write_text("#!/bin/ah\n")  # the same size
    os.utime(binary, ns=(1_700_000_060_000_000_000,) * 2)
    assert key(binary, str(tmp_path), ENV) != before
    Path(binary).write_text("#!/bin/sh -e\n")  # another size, the first time again
    os.utime(binary, ns=(1_700_000_000_000_000_000,) * 2)
    assert key(binary, str(tmp_path), ENV) != before


def test_a_symlink_to_another_binary_is_another_key(binary: str, tmp_path: Path) -> None:
    """`claude` is a symlink an update points at the new release: the key follows it."""
    link = tmp_path / "bin" / "claude"
    link.parent.mkdir()
    link.symlink_to(binary)
    before = key(str(link), str(tmp_path), ENV)
    assert key(str(link), str(tmp_path), ENV) == before
    other = tmp_path / "other-claude"
    shutil.copy2(binary, other)  # the same bytes, size and time, another file
    link.unlink()
    link.symlink_to(other)
    assert key(str(link), str(tmp_path), ENV) != before


def test_a_directory_made_again_at_the_same_path_is_another_key(
    binary: str, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    before = key(binary, str(work), ENV)
    held = os.open(work, os.O_RDONLY)  # as the keeper's cwd holds it: its inode stays taken
    try:
        shutil.rmtree(work)
        work.mkdir()
        assert key(binary, str(work), ENV) != before
    finally:
        os.close(held)


def _key_in(argv_prefix: List[str], binary: str, cwd: str) -> str:
    """The key as a child process sees it (under `argv_prefix`: unshare, setpriv ...)."""
    code = (
        "import json, sys; from claude_print.warm_start import warm; "
        "from claude_print.options import Options; "
        "print(warm.key(Options(prompt='hi', prompt_source='argv', claude_binary="
        f"{binary!r}), json.loads(sys.argv[1]), {cwd!r}))"
    )
    return _child([*argv_prefix, sys.executable, "-c", code]).strip()


def _child(argv: List[str], *args: str) -> str:
    """What a Python child run from the checkout prints, given the sandbox env as JSON."""
    import json

    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run(
        [*argv, json.dumps(ENV), *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _runs(argv: List[str]) -> bool:
    if not shutil.which(argv[0]):
        return False
    return subprocess.run([*argv, "true"], capture_output=True, check=False).returncode == 0


@pytest.mark.parametrize(
    "prefix",
    [
        ["unshare", "-n"],  # no network
        ["unshare", "-m"],  # another mount namespace
        ["prlimit", "--nofile=512:512"],
        ["setpriv", "--no-new-privs"],
        ["setpriv", "--groups", "0,4", "--"],
    ],
    ids=["netns", "mountns", "rlimit", "no_new_privs", "groups"],
)
def test_the_process_context_is_in_the_key(binary: str, tmp_path: Path, prefix: List[str]) -> None:
    if not _runs(prefix):
        pytest.skip(f"{' '.join(prefix)} cannot run here")
    plain = _key_in([], binary, str(tmp_path))
    assert _key_in([], binary, str(tmp_path)) == plain
    assert _key_in(prefix, binary, str(tmp_path)) != plain


# A child that computes the key, sets no_new_privs, computes it again, installs a
# seccomp filter that allows every call, and computes it a third time (ctypes, no
# tool): the three keys on three lines, or "no seccomp" where the kernel has none.
_SECCOMP_CHILD = """
import ctypes, json, struct, sys
from claude_print.options import Options
from claude_print.warm_start import warm

options = Options(prompt="hi", prompt_source="argv", claude_binary=sys.argv[1])
env, cwd = json.loads(sys.argv[2]), sys.argv[3]
libc = ctypes.CDLL(None, use_errno=True)
ulong = ctypes.c_ulong
libc.prctl.argtypes = [ctypes.c_int, ulong, ctypes.c_void_p, ulong, ulong]
print(warm.key(options, env, cwd))
assert libc.prctl(38, 1, None, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
print(warm.key(options, env, cwd))
allow = ctypes.create_string_buffer(struct.pack("=HBBI", 0x06, 0, 0, 0x7FFF0000))
prog = ctypes.create_string_buffer(struct.pack("@HP", 1, ctypes.addressof(allow)))
if libc.prctl(22, 2, ctypes.addressof(prog), 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
    print("no seccomp", ctypes.get_errno())
else:
    print(warm.key(options, env, cwd))
"""


def test_a_seccomp_filter_is_another_key(binary: str, tmp_path: Path) -> None:
    """A TUI started under a seccomp filter is not one started without it (the filter
    allows every call here; another would refuse some): both sides in one process, the
    no_new_privs a filter needs set before the key without the filter is taken."""
    out = _child([sys.executable, "-c", _SECCOMP_CHILD, binary], str(tmp_path))
    plain, no_new_privs, filtered = out.split("\n")[:3]
    if filtered.startswith("no seccomp"):
        pytest.skip(f"this kernel installs no seccomp filter ({filtered})")
    assert plain != no_new_privs  # the other side of the rule: no_new_privs is in the key
    assert filtered != no_new_privs


# --- the runtime dir and the uid checks -------------------------------------


def test_the_runtime_dir_is_private_and_named_by_uid(tmp_path: Path) -> None:
    path = Path(handover.runtime_dir({"XDG_RUNTIME_DIR": str(tmp_path)}))
    assert path == tmp_path / f"claude-print-{os.getuid()}"
    st = path.lstat()
    assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700


@pytest.mark.parametrize("mode", [0o755, 0o770, 0o701, 0o707])
def test_a_runtime_dir_others_may_enter_is_refused(tmp_path: Path, mode: int) -> None:
    path = tmp_path / f"claude-print-{os.getuid()}"
    path.mkdir()
    path.chmod(mode)
    with pytest.raises(ClaudePrintError, match="not a private directory"):
        handover.runtime_dir({"XDG_RUNTIME_DIR": str(tmp_path)})


def test_a_symlinked_runtime_dir_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / f"claude-print-{os.getuid()}").symlink_to(elsewhere)
    with pytest.raises(ClaudePrintError, match="not a private directory"):
        handover.runtime_dir({"XDG_RUNTIME_DIR": str(tmp_path)})


@ROOT_ONLY
def test_a_runtime_dir_of_another_user_is_refused(tmp_path: Path) -> None:
    path = tmp_path / f"claude-print-{os.getuid()}"
    path.mkdir(mode=0o700)
    os.chown(path, NOBODY, NOBODY)
    with pytest.raises(ClaudePrintError, match="not a private directory"):
        handover.runtime_dir({"XDG_RUNTIME_DIR": str(tmp_path)})


def _listening_as(uid: int, path: str) -> int:
    """A child that binds `path` (as us), then becomes `uid` and listens: the socket's
    credentials (SO_PEERCRED) are the listener's at listen(). Its pid."""
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(ready_r)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(path)
            os.chmod(path, 0o666)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            sock.listen(1)
            os.write(ready_w, b"x")
            while True:  # until killed: the test connects more than once
                conn, _ = sock.accept()
                conn.recv(1 << 16)
        finally:
            os._exit(0)
    os.close(ready_w)
    assert os.read(ready_r, 1) == b"x"
    os.close(ready_r)
    return pid


@ROOT_ONLY
def test_a_socket_of_another_user_is_not_used(tmp_path: Path, binary: str) -> None:
    """The run's check: a socket at the keeper's path whose listener is another user
    never gets the prompt (the run goes cold)."""
    import tempfile

    short = tempfile.mkdtemp(prefix="cp-key-", dir="/tmp")  # a socket path is short
    try:
        _check_foreign_socket(Path(short), binary)
    finally:
        shutil.rmtree(short)


def _check_foreign_socket(tmp_path: Path, binary: str) -> None:
    environ = {"XDG_RUNTIME_DIR": str(tmp_path)}
    options = Options(prompt="secret prompt", prompt_source="argv", claude_binary=binary)
    paths = handover.paths_for(warm.key(options, environ, str(tmp_path)), environ)
    pid = _listening_as(NOBODY, paths.socket)
    lines: List[str] = []
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with sock:
            sock.connect(paths.socket)
            assert handover.peer(sock)[1] == NOBODY
        from claude_print.run.signals import SignalPipe
        from claude_print.warm_start.warm_link import Link

        signals = SignalPipe()
        signals.install()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            code = warm._hand_over(
                Link(sock, signals), paths, options, 0.0, environ, str(tmp_path), lines.append
            )
        finally:
            sock.close()
            signals.restore()
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    assert code is None
    assert lines == [f"warm start: {paths.socket} belongs to uid {NOBODY}; cold run"]


@ROOT_ONLY
def test_a_keeper_refuses_a_request_of_another_user() -> None:
    """The keeper's check: a connection whose other end is another user's process is
    told "another user" and gets nothing (here over an abstract socket, which needs no
    directory nobody could enter)."""
    from claude_print.warm_start import keeper

    address = f"\0claude-print-test-{os.getpid()}"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(1)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child: nobody's end of the connection
        code = 1
        try:
            listener.close()
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(address)
            reply, _ = handover.receive(sock)
            code = 0 if reply == {"stale": "another user"} else 3
        finally:
            os._exit(code)
    conn, _ = listener.accept()
    listener.close()
    request = {"fingerprint": "f", "prompt": "p", "via": "paste", "started": 0.0, "timeout": 1.0}
    with conn:
        conn.settimeout(30)
        assert handover.peer(conn)[1] == NOBODY
        assert keeper._handed_over(conn, request, "f", None) is False  # type: ignore[arg-type]
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
