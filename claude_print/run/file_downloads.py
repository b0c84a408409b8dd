"""`--file ID:PATH ...`: fetch files of the Files API into the session's uploads folder.

`claude -p` downloads each file to ``<cwd>/<session id>/uploads/PATH`` before its first
request. The TUI downloads them too, but into a folder named after a session id it
drops once ``--session-id`` applies (measured: 2.1.197, 2.1.331), and its own override,
``CLAUDE_CODE_REMOTE_SESSION_ID``, turns on remote-session behaviour. So claude-print
does the download itself and does not pass the flag on. What `claude -p` does (measured
against tests/support/fake_api.py, and read in its code):

- without ``CLAUDE_CODE_SESSION_ACCESS_TOKEN``: `NO_TOKEN`, exit 1, nothing started;
- each value may hold several specs separated by spaces; a spec without ':' is
  skipped, one with an empty id or path is skipped with an error in the debug log;
- ``GET {ANTHROPIC_BASE_URL}/v1/files/{id}/content`` with the token as a bearer, up to
  3 attempts (0.5 s, then 1 s apart) unless the answer is 401, 403 or 404;
- a path that climbs out ('..') is skipped, a leading ``/uploads/`` is dropped, folders
  are created; a file that cannot be fetched is skipped and the run goes on.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Callable, List, Mapping, NamedTuple, Optional, Sequence

from claude_print.errors import EXIT_ASSISTANT_ERROR, ClaudePrintError

TOKEN_VAR = "CLAUDE_CODE_SESSION_ACCESS_TOKEN"
NO_TOKEN = (
    "Session token required for file downloads. CLAUDE_CODE_SESSION_ACCESS_TOKEN must be set."
)
DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
FILES_BETA = "files-api-2025-04-14"
ATTEMPTS = 3
FIRST_BACKOFF_SECS = 0.5
REQUEST_TIMEOUT_SECS = 60
FINAL_STATUSES = (401, 403, 404)  # not retried


class FileSpec(NamedTuple):
    file_id: str
    path: str


# The Files API's largest file (500 MB); more is a server gone wrong, not a download.
MAX_FILE_BYTES = 500 * 1000 * 1000


def require_token() -> None:
    """--file needs the session access token; without it, fail before the spawn."""
    if not os.environ.get(TOKEN_VAR):
        raise ClaudePrintError(NO_TOKEN, EXIT_ASSISTANT_ERROR)


def download(values: Sequence[str], session_id: str, log: Callable[[str], None]) -> None:
    """Every --file value, into the session's uploads (the working directory's)."""
    download_all(parse_specs(values, log), session_id, os.getcwd(), os.environ, log)


def session_before_start(forwarded: Sequence[str], session_id: Optional[str]) -> Optional[str]:
    """The session the files go to, if known before the TUI starts: ours, or the resumed
    one (a fork's new id comes with the first hook)."""
    if session_id is None and "--resume" in forwarded and "--fork-session" not in forwarded:
        return forwarded[forwarded.index("--resume") + 1]
    return session_id


def parse_specs(values: Sequence[str], log: Callable[[str], None]) -> List[FileSpec]:
    specs = []
    for word in (w for value in values for w in value.split(" ") if w):
        file_id, colon, path = word.partition(":")
        if not colon:
            continue
        if not file_id or not path:
            log(f"invalid file spec: {word}. Both file_id and path are required")
            continue
        specs.append(FileSpec(file_id, path))
    return specs


def target(cwd: str, session_id: str, path: str) -> Optional[str]:
    """Where `path` goes, or None if it climbs out of the uploads folder."""
    normal = os.path.normpath(path)
    if normal.startswith(".."):
        return None
    uploads = os.path.join(cwd, session_id, "uploads")
    for prefix in (uploads + os.sep, os.sep + "uploads" + os.sep):
        if normal.startswith(prefix):
            normal = normal[len(prefix) :]
            break
    return os.path.join(uploads, normal.lstrip(os.sep))


def fetch(url: str, token: str, sleep: Callable[[float], None] = time.sleep) -> bytes:
    request = urllib.request.Request(
        url,
        headers={
            "Authorization": f"Bearer {token}",
            "anthropic-version": API_VERSION,
            "anthropic-beta": FILES_BETA,
        },
    )
    problem = ""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_SECS) as response:
                data: bytes = response.read(MAX_FILE_BYTES + 1)
            if len(data) > MAX_FILE_BYTES:
                raise ValueError(f"over the Files API's {MAX_FILE_BYTES >> 20} MiB limit")
            return data
        except urllib.error.HTTPError as exc:
            if exc.code in FINAL_STATUSES:
                raise OSError(f"status {exc.code}") from exc
            problem = f"status {exc.code}"
        except (urllib.error.URLError, OSError) as exc:
            problem = str(getattr(exc, "reason", None) or exc)
        if attempt < ATTEMPTS:
            sleep(FIRST_BACKOFF_SECS * 2 ** (attempt - 1))
    raise OSError(f"{problem} after {ATTEMPTS} attempts")


def download_all(
    specs: Sequence[FileSpec],
    session_id: str,
    cwd: str,
    environ: Mapping[str, str],
    log: Callable[[str], None],
) -> int:
    """Fetch every spec; returns how many files were saved (failures are logged)."""
    token = environ.get(TOKEN_VAR, "")
    base = (environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    saved = 0
    for spec in specs:
        path = target(cwd, session_id, spec.path)
        if path is None:
            log(f"--file {spec.file_id}: {spec.path} climbs out of the uploads folder; skipped")
            continue
        url = f"{base}/v1/files/{urllib.parse.quote(spec.file_id, safe='')}/content"
        try:
            data = fetch(url, token)
            save(data, path, os.path.join(cwd, session_id, "uploads"))
        except (OSError, ValueError) as exc:
            log(f"--file {spec.file_id}: not downloaded ({exc})")
            continue
        log(f"--file {spec.file_id}: saved {len(data)} bytes to {path}")
        saved += 1
    return saved


def save(data: bytes, path: str, uploads: str) -> None:
    """Write `path` inside `uploads` without following a symlink out of it: the folder
    that holds it must resolve inside `uploads`, and the file is written under a new
    name and renamed over whatever is there (a symlink is replaced, not followed)."""
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    root = os.path.realpath(uploads)
    real = os.path.realpath(folder)
    if real != root and not real.startswith(root + os.sep):
        raise ValueError(f"{folder} resolves to {real}, outside {uploads}")
    fd, staging = tempfile.mkstemp(dir=real, prefix=".download-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(staging, 0o644 & ~_umask())
        os.replace(staging, os.path.join(real, os.path.basename(path)))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staging)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
