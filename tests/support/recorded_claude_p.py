"""`claude -p` runs recorded per release, replayed when the same run comes again.

An e2e case compares claude-print with `claude -p` of the same release on the same
input. `claude -p` is the oracle, not the code under test, and a pinned release given the
same input (arguments, stdin, extra environment, the sandbox's files, the fake API's
code) answers the same; so its run is recorded once (`CLAUDE_PRINT_TEST_CLAUDE_P=record`)
and replayed after: its exit code, stdout and stderr, the requests the fake API received
(added to that server's list, as the live run adds them) and a twin run's side-effect
list. A run whose input differs in anything (a random name in a file, an OAuth server's
port, another release) has another key and runs live. Each replayed case saves the
~1 CPU-s of a `claude -p` run (docs/compatibility.md, "CI's time").

A recorded run leaves no files in the sandbox (they are put back as they were: a
replayed run cannot leave any), so claude-print's side of a case runs in the same
sandbox either way; a test that needs `claude -p`'s files runs it live.

Modes (`CLAUDE_PRINT_TEST_CLAUDE_P`):
- `replayed` (default): a recording if there is one, else the live run;
- `live`: always the live run (`scripts/test --full` sets it: each case against the
  real `claude -p` again);
- `record`: live, and recorded (scripts/record-claude-p).

A recording stores paths as placeholders (the sandbox's HOME, work dir and TMPDIR, also
in the dash-encoded form of Claude Code's project folders, and the fake API's URL) and
the day it was made (`Today's date is ...` becomes today's on replay). Large JSON values
(the tool list, a system prompt) are stored once per release in `blobs/`.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
STORE = HERE.parent / "data" / "claude-p-runs"
FORMAT = 1  # bump when what a recording holds changes: every key changes with it
BLOB_MIN = 2048  # a JSON value this long (serialised) is stored once, by its hash
PARTS = ("home", "project", "tmp")
# What of the caller's environment reaches `claude -p` through Sandbox.env and may change
# what it does; the rest (PATH, the venv) may differ between machines without a change.
AMBIENT = ("TERM", "LANG", "LC_ALL", "LC_CTYPE", "CI", "NO_COLOR", "FORCE_COLOR", "USER", "TZ")


def mode() -> str:
    chosen = os.environ.get("CLAUDE_PRINT_TEST_CLAUDE_P", "replayed")
    if chosen not in ("replayed", "live", "record"):
        raise ValueError(f"CLAUDE_PRINT_TEST_CLAUDE_P={chosen!r}: replayed, live or record")
    return chosen


def mark(name: str) -> str:
    """A placeholder no prompt or answer of the tests writes (a literal `$HOME` may)."""
    return f"\u27e6{name}\u27e7"


def encoded(path: str) -> str:
    """A path as Claude Code names its project folder (~/.claude/projects/<this>)."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


@dataclass(frozen=True)
class Places:
    """Where a run lives: its sandbox parts and its fake API. A twin run's copy of the
    sandbox is another Places, its original the `origin` (placeholders `O_...`): files
    copied into the twin still name the original's paths."""

    home: Path
    project: Path
    tmp: Path
    api_url: str
    origin: Optional[Places] = None

    def pairs(self, prefix: str = "") -> List[Tuple[str, str]]:
        """(real text, placeholder), longest first, so no placeholder cuts another."""
        found: List[Tuple[str, str]] = [(self.api_url, mark(prefix + "API"))]
        named = [("HOME", self.home), ("PROJECT", self.project), ("TMP", self.tmp)]
        # The test's own dir (its config files beside the sandbox) and the repository's
        # (a CI clone is elsewhere; the tests' helper programs are named by path).
        named += [("ROOT", self.home.parent), ("REPO", REPO)]
        for name, path in named:
            for variant in {str(path), os.path.realpath(path)}:
                found.append((variant, mark(prefix + name)))
                found.append((encoded(variant), mark(prefix + "ENC_" + name)))
        if self.origin is not None:
            found += self.origin.pairs("O_")
        return sorted(found, key=lambda pair: -len(pair[0]))

    def hide(self, text: str) -> str:
        for real, mark in self.pairs():
            text = text.replace(real, mark)
        return text

    def show(self, text: str, day: str) -> str:
        # Placeholders back, longest first (ENC_HOME before HOME).
        for real, mark in sorted(self.pairs(), key=lambda pair: -len(pair[1])):
            text = text.replace(mark, real)
        return text.replace(f"Today's date is {day}", f"Today's date is {today()}")


def today() -> str:
    return datetime.date.today().isoformat()


def _tree(places: Places) -> List[Tuple[str, str]]:
    """(path with placeholders, what it is) for every entry in the test's dir: the
    sandbox's HOME, work dir and TMPDIR and what the test put beside them."""
    found = []
    for part in (places.home.parent,):
        for dirpath, dirnames, filenames in os.walk(part):
            dirnames.sort()
            links = [d for d in dirnames if os.path.islink(Path(dirpath, d))]
            for name in sorted(filenames + links):
                path = Path(dirpath, name)
                if path.is_symlink():
                    what = "link:" + places.hide(os.readlink(path))
                else:
                    try:
                        data = path.read_bytes()
                    except OSError as exc:
                        what = f"unreadable:{exc.errno}"
                    else:
                        text = _text(data)
                        shown = places.hide(text).encode() if text is not None else data
                        what = f"{path.stat().st_mode & 0o777:o}:" + _sha(shown)
                found.append((places.hide(str(path)), what))
    return found


def _named_files(places: Places, values: Sequence[str]) -> List[Tuple[str, str]]:
    """The files an argument or variable names outside the test's dir (the repository's
    helper programs, data files), by their content."""
    found = []
    for value in values:
        for word in re.split(r"[=,:\s]", value):
            if word.startswith("/") and os.path.isfile(word):
                text = _text(Path(word).read_bytes())
                data = places.hide(text).encode() if text is not None else Path(word).read_bytes()
                found.append((places.hide(word), _sha(data)))
    return sorted(set(found))


def _text(data: bytes) -> Optional[str]:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def key(
    release: str,
    places: Places,
    args: Sequence[str],
    stdin: Optional[bytes],
    env: Dict[str, str],
) -> str:
    """What decides the run: the release, the arguments, stdin and extra environment
    (paths as placeholders), the sandbox's files, the fake API's code, the caller's
    environment that reaches the run."""
    stdin_text = None if stdin is None else _text(stdin)
    inputs = {
        "format": FORMAT,
        "release": release,
        "args": [places.hide(a) for a in args],
        "stdin": None
        if stdin is None
        else (places.hide(stdin_text) if stdin_text is not None else "bytes:" + _sha(stdin)),
        "env": sorted((k, places.hide(v)) for k, v in env.items()),
        "ambient": [(k, os.environ.get(k)) for k in AMBIENT],
        "tree": _tree(places),
        "named": _named_files(places, [*args, *env.values()]),
        "fake_api": _sha((HERE / "fake_api.py").read_bytes()),
    }
    return _sha(json.dumps(inputs, sort_keys=True).encode())[:24]


@dataclass
class Recording:
    """A `claude -p` run as the test sees it (placeholders already filled in)."""

    returncode: int
    stdout: bytes
    stderr: bytes
    requests: List[Dict[str, Any]]  # what the fake API recorded, side requests included
    changes: Optional[List[str]]  # slash_space.side_effects of a twin run


def _path(release: str, run_key: str) -> Path:
    return STORE / release / f"{run_key}.json"


def _pack(value: Any, blobs: Path) -> Any:
    """Large values out to blobs/<sha>.json (written once), a reference in their place."""
    if isinstance(value, dict):
        value = {k: _pack(v, blobs) for k, v in value.items()}
    elif isinstance(value, list):
        value = [_pack(v, blobs) for v in value]
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    if len(text) < BLOB_MIN:
        return value
    name = _sha(text.encode())[:24]
    target = blobs / f"{name}.json"
    if not target.exists():
        blobs.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text + "\n", encoding="utf-8")
        os.replace(tmp, target)
    return {"$blob": name}


def _unpack(value: Any, blobs: Path) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$blob"}:
            text = (blobs / f"{value['$blob']}.json").read_text(encoding="utf-8")
            return _unpack(json.loads(text), blobs)
        return {k: _unpack(v, blobs) for k, v in value.items()}
    if isinstance(value, list):
        return [_unpack(v, blobs) for v in value]
    return value


def _bytes_out(data: bytes, places: Places) -> Dict[str, str]:
    text = _text(data)
    if text is None:
        return {"base64": base64.b64encode(data).decode()}
    return {"text": places.hide(text)}


def _bytes_in(stored: Dict[str, str], places: Places, day: str) -> bytes:
    if "base64" in stored:
        return base64.b64decode(stored["base64"])
    return places.show(stored["text"], day).encode()


def _strings(value: Any, change: Any) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {change(k): _strings(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_strings(v, change) for v in value]
    return value


def save(release: str, run_key: str, places: Places, recording: Recording) -> None:
    """Store `recording`, made in the sandbox `places`."""
    hide = places.hide
    stored = {
        "format": FORMAT,
        "release": release,
        "day": today(),
        "returncode": recording.returncode,
        "stdout": _bytes_out(recording.stdout, places),
        "stderr": _bytes_out(recording.stderr, places),
        "requests": _strings(recording.requests, hide),
        "changes": None if recording.changes is None else [hide(c) for c in recording.changes],
    }
    target = _path(release, run_key)
    target.parent.mkdir(parents=True, exist_ok=True)
    packed = _pack(stored, target.parent / "blobs")
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(packed, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    os.replace(tmp, target)


def load(release: str, run_key: str, places: Places) -> Optional[Recording]:
    """The recording of this run, its placeholders filled in for `places`; None if none."""
    target = _path(release, run_key)
    if not target.exists():
        return None
    stored = _unpack(json.loads(target.read_text(encoding="utf-8")), target.parent / "blobs")
    day = str(stored["day"])

    def show(text: str) -> str:
        return places.show(text, day)

    return Recording(
        returncode=int(stored["returncode"]),
        stdout=_bytes_in(stored["stdout"], places, day),
        stderr=_bytes_in(stored["stderr"], places, day),
        requests=_strings(stored["requests"], show),
        changes=None if stored["changes"] is None else [show(c) for c in stored["changes"]],
    )


class Undo:
    """The sandbox's files as they are now; `restore` puts them back so (a recorded run
    leaves nothing: a replayed one cannot, so neither does the recording)."""

    def __init__(self, places: Places) -> None:
        self.parts = (places.home, places.project, places.tmp)
        self.files, self.dirs = self._scan()

    def _scan(self) -> Tuple[Dict[str, Tuple[int, bytes]], List[str]]:
        files: Dict[str, Tuple[int, bytes]] = {}
        dirs: List[str] = []
        for part in self.parts:
            for dirpath, dirnames, filenames in os.walk(part):
                dirs.append(dirpath)
                for name in filenames + [d for d in dirnames if os.path.islink(Path(dirpath, d))]:
                    path = Path(dirpath, name)
                    try:
                        if path.is_symlink():
                            files[str(path)] = (-1, os.readlink(path).encode())
                        else:
                            files[str(path)] = (path.stat().st_mode & 0o777, path.read_bytes())
                    except OSError:
                        continue
        return files, dirs

    def restore(self) -> None:
        now_files, now_dirs = self._scan()
        for path in now_files:
            if path not in self.files:
                os.unlink(path)
        for path in sorted(set(now_dirs) - set(self.dirs), key=len, reverse=True):
            shutil.rmtree(path, ignore_errors=True)
        for path, (mode_bits, data) in self.files.items():
            if now_files.get(path) == (mode_bits, data):
                continue
            target = Path(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink() or target.exists():
                target.unlink()
            if mode_bits == -1:
                os.symlink(data.decode(), target)
            else:
                target.write_bytes(data)
                os.chmod(target, mode_bits)
