"""Relay dirs of runs that were killed: `$TMPDIR/claude-print-<pid>-*` whose run is gone.

A run removes its relay dir (relay.py) when it ends, whatever the reason, except when it
is killed with SIGKILL, as NEEDLE does on a timeout. `sweep()` removes what such runs
left behind, and never a live run's dir:

- only dirs named by relay.Relay (`claude-print-<digits>-...`), that are real
  directories (not symlinks) and belong to this user;
- the pid in the name is not enough: pids are reused. A dir is kept while a process
  with that pid holds a file in it open (every run holds its FIFO from set-up to
  teardown) or started no later than the dir's first change (plus `SLACK_SECS`, for
  clock granularity): then that process may be the run that made it. A process that
  started after the dir was made cannot be its owner, so it neither protects the dir
  nor is endangered by it;
- without /proc (not Linux), a live pid keeps the dir.

Liveness does not rest on seeing the pid: a run in another PID namespace sharing TMPDIR
(a container, `unshare -p`) has a pid this one cannot see. So each run holds an flock on
`LOCK_NAME` in its dir from right after making it until it ends (the kernel drops it
when the run dies, SIGKILL included, in any namespace): a dir whose lock can be taken is
a dead run's; one whose lock is held is live. The pid rules above are left for a dir
without a lock file: an older claude-print's, or a run in the instant between making its
dir and locking it (whose pid, in this namespace, is visible and started before).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import stat
import tempfile
import time
from typing import List, Optional, Tuple

from claude_print.hooks import replies

# relay.TEMP_PREFIX; repeated here so that start-up does not import the relay for this.
RELAY_PREFIX = "claude-print-"
_RELAY_DIR = re.compile(re.escape(RELAY_PREFIX) + r"(\d+)-[^/]+$")
# Files relay.Relay writes once when it sets the dir up and never touches again: their
# ctime is the set-up time even after hooks have added files (which moves the dir's).
_SET_UP_FILES = ("hook.sh", "settings.json")
# A process start time is known to a clock tick (10 ms) and file times to the kernel's
# coarse clock (a few ms); a whole second leaves room for both and for a slewing clock.
SLACK_SECS = 1.0
LOCK_NAME = "run.lock"
FIFO_NAME = "relay.fifo"  # the relay's FIFO (hook_settings takes the name from here)


def hold_lock(directory: str) -> int:
    """The run's lock on its relay dir: an open fd holding an exclusive flock (close it,
    or die, to release it)."""
    # Locked before it takes its name: a sweep never finds the lock file unlocked.
    staging = os.path.join(directory, LOCK_NAME + ".new")
    fd = os.open(staging, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file: nobody else holds it
    os.rename(staging, os.path.join(directory, LOCK_NAME))
    return fd


# The watchdog: waits on a pipe only the run holds (its end is close-on-exec, and a
# keeper's fork closes every fd it did not name), so EOF comes when the run is gone,
# SIGKILL included. Then it does what `release_hooks` does, in sh: opens the FIFO (a
# read-write open never blocks and wakes every hook blocked opening it), unlinks it,
# answers each asking hook's reply FIFO with an empty line, and removes the dir (twice:
# a TUI the kernel is still tearing down may drop one last file in as the first pass runs).
_WATCHDOG = f"""cd / || exit 1
read -r _
d=$0
if [ -p "$d/{FIFO_NAME}" ]; then exec 3<>"$d/{FIFO_NAME}"; fi
rm -f -- "$d/{FIFO_NAME}"
for r in "$d"/*{replies.REPLY_SUFFIX}; do
  if [ -p "$r" ]; then exec 4<>"$r"; printf '\\n' >&4; exec 4>&-; fi
done
exec 3>&-
rm -rf -- "$d" 2>/dev/null || {{ sleep 1; rm -rf -- "$d"; }}
"""
SHELL = "/bin/sh"


class Watchdog:
    """A `/bin/sh` that removes the relay dir once the run that made it is gone, however
    it went: a run killed with SIGKILL (NEEDLE's timeout, the OOM killer, a keeper
    `kill -9`ed) leaves nothing for a later run's `sweep` to find."""

    def __init__(self, directory: str) -> None:
        read_end, self._write_end = os.pipe()  # both close-on-exec
        try:
            self.pid = os.posix_spawn(
                SHELL,
                ["sh", "-c", _WATCHDOG, directory],
                {"PATH": "/usr/bin:/bin"},
                file_actions=[(os.POSIX_SPAWN_DUP2, read_end, 0)],
                setpgroup=0,  # a kill of the run's process group (NEEDLE's) spares it
            )
        except OSError:
            os.close(self._write_end)
            self._write_end, self.pid = -1, 0
        finally:
            os.close(read_end)

    def close(self) -> None:
        """The run has removed the dir itself: let the watchdog go, and reap it."""
        if self._write_end >= 0:
            os.close(self._write_end)
            self._write_end = -1
        if self.pid:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
            self.pid = 0


def _lock_state(path: str) -> Optional[bool]:
    """True: the lock is held (a live run); False: it can be taken (the run is gone);
    None: no lock file."""
    try:
        fd = os.open(os.path.join(path, LOCK_NAME), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # releases the lock if this took it
    return False


def relay_dirs(root: str) -> List[Tuple[str, int]]:
    """(path, pid) of this user's relay dirs in `root` (real directories only)."""
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    uid = os.geteuid()
    found = []
    for name in names:
        match = _RELAY_DIR.match(name)
        if match is None:
            continue
        path = os.path.join(root, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_uid == uid:
            found.append((path, int(match.group(1))))
    return found


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except (OverflowError, OSError):
        return False
    return True


def _proc_available() -> bool:
    return os.path.exists("/proc/self/stat")


def _start_time(pid: int) -> Optional[float]:
    """When process `pid` started (epoch seconds); None when there is no such process
    (or only a zombie: it has exited)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and ')': the fields after it follow
    # the last ')'. Field 3 is the state, field 22 the start time in clock ticks since
    # boot.
    fields = raw[raw.rfind(b")") + 2 :].split()
    if len(fields) < 20 or fields[0] in (b"Z", b"X"):
        return None
    ticks = int(fields[19])
    since_boot = ticks / os.sysconf("SC_CLK_TCK")
    # The boot clock read now, against the wall clock read now: the same offset turns
    # the start time into wall-clock time, to a tick (/proc/stat's btime is whole
    # seconds).
    boot_offset = time.time() - time.clock_gettime(time.CLOCK_BOOTTIME)
    return boot_offset + since_boot


def _holds_open(pid: int, path: str) -> bool:
    """Whether process `pid` has a file inside `path` open (the run's own FIFO)."""
    prefix = os.path.realpath(path) + "/"
    fd_dir = f"/proc/{pid}/fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return False
    for fd in fds:
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target.startswith(prefix):
            return True
    return False


def _set_up_time(path: str) -> Optional[float]:
    """The earliest change time of the dir and of its set-up files: no earlier than the
    moment the dir was made, and close to it."""
    times = []
    for name in ("", *_SET_UP_FILES):
        try:
            times.append(os.lstat(os.path.join(path, name) if name else path).st_ctime)
        except OSError:
            continue
    return min(times) if times else None


def is_orphan(path: str, pid: int) -> bool:
    """Whether the run that made relay dir `path` (named with `pid`) is gone."""
    held = _lock_state(path)
    if held is not None:
        return not held
    if not _proc_available():
        return not pid_alive(pid)
    started = _start_time(pid)
    if started is None:
        return True  # no process with that pid, or it has exited
    if _holds_open(pid, path):
        return False
    made = _set_up_time(path)
    if made is None:
        return False  # removed meanwhile, or unreadable: leave it
    # The run that made the dir started before it made it. A process that started
    # later is another one that got the same pid.
    return started > made + SLACK_SECS


def release_hooks(path: str) -> None:
    """End the hooks still waiting on the run of dir `path` (a dead run's, or one that is
    closing): those blocked opening its FIFO and asking ones blocked on their reply FIFOs."""
    fifo = os.path.join(path, FIFO_NAME)
    try:
        # Opening the read end wakes every writer blocked in open(); once we close it
        # again, a write they have yet to make ends them with SIGPIPE. Unlinked while
        # we read it, it can block no later hook either.
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        fd = -1
    try:
        with contextlib.suppress(OSError):
            os.unlink(fifo)
        replies.release_waiting(path)
    finally:
        if fd >= 0:
            os.close(fd)


def sweep(root: str) -> List[str]:
    """Remove this user's relay dirs in `root` whose run is gone; the paths removed."""
    removed = []
    for path, pid in relay_dirs(root):
        try:
            orphan = is_orphan(path, pid)
        except (OSError, ValueError):
            continue
        if not orphan:
            continue
        release_hooks(path)
        shutil.rmtree(path, ignore_errors=True)  # another run may be sweeping it too
        if not os.path.lexists(path):
            removed.append(path)
    return removed


def sweep_at_start() -> None:
    """The start-up sweep of $TMPDIR (where relay.Relay puts its dir); never raises."""
    try:
        root = os.environ.get("TMPDIR") or tempfile.gettempdir()
        if os.path.isdir(root):
            sweep(root)
    except Exception:  # clean-up must never stop a run
        pass
