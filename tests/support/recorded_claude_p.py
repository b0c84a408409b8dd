"""`claude -p` runs recorded per release, replayed when the same run comes again.

An e2e case compares claude-print with `claude -p` of the same release on the same
input. `claude -p` is the oracle, not the code under test, and a pinned release given
the same input (arguments, stdin, extra environment, the sandbox's files, the fake API's
code) answers the same; so its run is recorded once
(`CLAUDE_PRINT_TEST_CLAUDE_P=record`) and replayed after: its exit code, stdout and
stderr, the requests the fake API received (added to that server's list, as the live run
adds them), the files it made, changed or removed in the sandbox (written back) and a
twin run's snapshots of its copy (its side effects). A run whose input differs in
anything (a random name in a file, an OAuth server's port, another release) has another
key and runs live. Each
replayed case saves the ~1 CPU-s of a `claude -p` run (docs/compatibility.md, "CI's
time").

A recorded run in the sandbox itself runs first, alone (live, the two sides run at
once), so that what it leaves is its own and claude-print's side finds the same sandbox
in a recorded run and in a replayed one. Claude Code's runtime state among those files
(a transcript, todos, debug logs) is kept by name only, empty; a test that reads its
content runs `claude -p` live (`run_claude_p(..., live=True)`).

Modes (`CLAUDE_PRINT_TEST_CLAUDE_P`):
- `replayed` (default): a recording if there is one, else the live run;
- `live`: always the live run (`scripts/test --full` sets it: each case against the
  real `claude -p` again);
- `record`: live, and recorded (scripts/record-claude-p).

A recording stores paths as placeholders (the sandbox's HOME, work dir and TMPDIR, also
in the dash-encoded form of Claude Code's project folders, and the fake API's URL) and
the day and the kernel it was made on (`Today's date is ...` and `OS Version: Linux ...`
become today's and this machine's on replay). Large JSON values
(the tool list, a system prompt) are stored once per release in `blobs/`.
"""

from __future__ import annotations

import base64
import datetime
import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
STORE = HERE.parent / "data" / "claude-p-runs"
FORMAT = 1  # bump when what a recording holds changes: every key changes with it
BLOB_MIN = 2048  # a JSON value this long (serialised) is stored once, by its hash
FILE_MAX = 256 * 1024  # a file a run left, larger: kept by name only
RECORDING_MAX = 2 * 1024 * 1024  # a run this large (a 5 MB prompt) is not kept: it runs live
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
    # Ids the test made up for this run (a --session-id, a resumed session's id): the
    # recorded run's answer names them, a replay names the new ones (`ids_in`).
    ids: Tuple[str, ...] = ()

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
        found += [(made_up, mark(f"{prefix}ID{i}")) for i, made_up in enumerate(self.ids)]
        return sorted(found, key=lambda pair: -len(pair[0]))

    # Worked out once per Places: hide() and show() run for every string of a recording
    # (thousands: the tool list), and pairs() resolves each path (0.2 to 0.4 CPU-s a test).
    @functools.cached_property
    def _hiding(self) -> List[Tuple[str, str]]:
        return self.pairs()

    @functools.cached_property
    def _showing(self) -> List[Tuple[str, str]]:
        # Placeholders back, longest first (ENC_HOME before HOME).
        return sorted(self.pairs(), key=lambda pair: -len(pair[1]))

    def hide(self, text: str) -> str:
        for real, mark in self._hiding:
            text = text.replace(real, mark)
        return text

    def show(self, text: str, made: Made) -> str:
        for real, mark in self._showing:
            text = text.replace(mark, real)
        return made.now(text)


@dataclass(frozen=True)
class Made:
    """When and on what kernel a recording was made: what of the machine a run's system
    prompt names (`Today's date is ...`, `OS Version: Linux <release>`), which a replay
    on another day or machine must name as a live run there would."""

    day: str
    os_release: str = ""  # empty: a recording of before it was kept, or another OS

    def now(self, text: str) -> str:
        text = text.replace(f"Today's date is {self.day}", f"Today's date is {today()}")
        if self.os_release:
            system = os.uname().sysname
            was, now = (
                f"OS Version: {system} {self.os_release}",
                f"OS Version: {system} {os_release()}",
            )
            text = text.replace(was, now)
        return text


def today() -> str:
    return datetime.date.today().isoformat()


def os_release() -> str:
    """The kernel release, as Claude Code puts it in the system prompt (Node's os.release())."""
    return os.uname().release


# What Claude Code keeps for itself between runs, under HOME and TMPDIR: a session's
# transcript, its todos, caches, locks. What an earlier run in the same test (claude-print's
# side, usually) left there differs in its ids, times and counters every time, and no
# later `claude -p` run of the tests reads it but to list it; so the key takes its names
# (ids and digits masked), not its content. A test that resumes a session passes its id.
RUNTIME_STATE = re.compile(
    r"⟦HOME⟧/\.claude/(projects/[^/]+/[^/]+\.jsonl|projects/[^/]+/[0-9a-f-]{36}(/.*)?"
    r"|sessions|session-env|shell-snapshots|todos|file-history|paste-cache|statsig|stats"
    r"|debug|telemetry|cache|ide|tasks|jobs|backups|history\.jsonl|\.last-cleanup|plugins/store"
    r"|[^/]*\.lock)([/.].*)?"
    r"|⟦HOME⟧/\.claude\.json\.(backup|lock|tmp).*"
    r"|⟦HOME⟧/\.cache/.*"  # MCP logs, named by the time
    r"|⟦TMP⟧/claude-.*"
)
# ~/.claude.json: the user's settings (kept) and Claude Code's counters, ids and times
# (masked: numbers, uuids, hex ids such as userID and machineID, ISO times).
COUNTERS = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16,}"
    r"|\d{4}-\d\d-\d\dT[\d:.]+Z?|-?\d+(\.\d+)?(e-?\d+)?"
)


def state_kind(shown_path: str) -> str:
    """Which kind of runtime state a path is (its folder under ~/.claude, a TMPDIR
    scratch dir), without the random names inside it."""
    if shown_path.startswith(mark("HOME") + "/.claude.json."):
        return mark("HOME") + "/.claude.json.*"
    parts = shown_path.split("/")
    return masked("/".join(parts[:3])) + ("/*" if len(parts) > 3 else "")


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def ids_in(values: Sequence[Optional[str]]) -> Tuple[str, ...]:
    """The uuids in a run's arguments, stdin and environment, first seen first."""
    found: List[str] = []
    for value in values:
        for made_up in UUID.findall(value or ""):
            if made_up not in found:
                found.append(made_up)
    return tuple(found)


def masked(text: str) -> str:
    return COUNTERS.sub("#", text)


def _tree(places: Places) -> List[Tuple[str, str]]:
    """(path with placeholders, what it is) for every entry in the test's dir: the
    sandbox's HOME, work dir and TMPDIR and what the test put beside them."""
    found = []
    for dirpath, dirnames, filenames in os.walk(places.home.parent):
        dirnames.sort()
        links = [d for d in dirnames if os.path.islink(Path(dirpath, d))]
        for name in sorted(filenames + links):
            path = Path(dirpath, name)
            shown_path = places.hide(str(path))
            if RUNTIME_STATE.fullmatch(shown_path):
                # TMPDIR's scratch (file-watch probes, a Bash tool's output) comes and
                # goes with timing, and no later run reads it: not part of the key.
                if not shown_path.startswith(mark("TMP")):
                    found.append((state_kind(shown_path), "state"))
                continue
            if path.is_symlink():
                what = "link:" + places.hide(os.readlink(path))
            else:
                try:
                    data = path.read_bytes()
                except OSError as exc:
                    what = f"unreadable:{exc.errno}"
                else:
                    text = _text(data)
                    if text is not None:
                        text = places.hide(text)
                        if shown_path == "⟦HOME⟧/.claude.json":
                            text = masked(text)
                    shown = text.encode() if text is not None else data
                    what = f"{path.stat().st_mode & 0o777:o}:" + _sha(shown)
            found.append((shown_path, what))
    return sorted(found)


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
    return sorted(found)


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
    made = _sha(json.dumps(inputs, sort_keys=True).encode())[:24]
    dump = os.environ.get("CLAUDE_PRINT_TEST_CLAUDE_P_KEYS")  # a dir: why two keys differ
    if dump:
        Path(dump, made + ".json").write_text(json.dumps(inputs, indent=1, sort_keys=True))
    return made


@dataclass
class Recording:
    """A `claude -p` run as the test sees it (placeholders already filled in)."""

    returncode: int
    stdout: bytes
    stderr: bytes
    requests: List[Dict[str, Any]]  # what the fake API recorded, side requests included
    made: Changed  # the files it made, changed or removed in its sandbox
    # A twin run's slash_space.snapshot of its copy, before and after (the side effects
    # are worked out from them when replayed, by the rules of that day)
    snapshots: Optional[Tuple[Dict[str, str], Dict[str, str]]]


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


def _bytes_in(stored: Dict[str, str], places: Places, made: Made) -> bytes:
    if "base64" in stored:
        return base64.b64decode(stored["base64"])
    return places.show(stored["text"], made).encode()


def _strings(value: Any, change: Any) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {change(k): _strings(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_strings(v, change) for v in value]
    return value


def _answer(prompt: str) -> Optional[str]:
    """The fake API's answer to a plain prompt (`ACK <chars> <sha>`): it hashes the
    prompt, so a prompt that names a sandbox path gets another answer in another
    sandbox. None for a prompt with a directive (the answer is the directive's)."""
    if "[[" in prompt or "<task-notification>" in prompt:
        return None
    from fake_api import plan_reply

    kind, text = plan_reply({"messages": [{"role": "user", "content": prompt}]})
    return str(text) if kind == "text" else None


def _answers(requests: List[Dict[str, Any]]) -> List[Optional[str]]:
    return [None if r.get("side") else _answer(str(r.get("prompt", ""))) for r in requests]


def save(release: str, run_key: str, places: Places, recording: Recording) -> None:
    """Store `recording`, made in the sandbox `places`."""
    hide = places.hide
    stored = {
        "answers": _answers(recording.requests),
        "format": FORMAT,
        "release": release,
        "day": today(),
        "os_release": os_release(),
        "returncode": recording.returncode,
        "stdout": _bytes_out(recording.stdout, places),
        "stderr": _bytes_out(recording.stderr, places),
        "requests": _strings(recording.requests, hide),
        "made": {
            hide(path): None
            if entry is None
            else {"mode": entry[0], **_bytes_out(entry[1], places)}
            for path, entry in sorted(recording.made.items())
        },
        "snapshots": None
        if recording.snapshots is None
        else [{hide(k): v for k, v in snap.items()} for snap in recording.snapshots],
    }
    if len(json.dumps(stored, ensure_ascii=False)) > RECORDING_MAX:
        return
    target = _path(release, run_key)
    target.parent.mkdir(parents=True, exist_ok=True)
    packed = {k: _pack(v, target.parent / "blobs") for k, v in stored.items()}
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(packed, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    os.replace(tmp, target)


def load(release: str, run_key: str, places: Places) -> Optional[Recording]:
    """The recording of this run, its placeholders filled in for `places`; None if none."""
    target = _path(release, run_key)
    if not target.exists():
        return None
    stored = _unpack(json.loads(target.read_text(encoding="utf-8")), target.parent / "blobs")
    if stored.get("format") != FORMAT:
        return None
    made = Made(str(stored["day"]), str(stored.get("os_release", "")))

    def show(text: str) -> str:
        return places.show(text, made)

    requests = _strings(stored["requests"], show)
    out, err = _bytes_in(stored["stdout"], places, made), _bytes_in(stored["stderr"], places, made)
    # The fake API's answer to a prompt that names a path of the sandbox: this sandbox's.
    for old, new in zip(stored.get("answers") or [], _answers(requests)):
        if old is not None and new is not None and old != new:
            out = out.replace(old.encode(), new.encode())
            err = err.replace(old.encode(), new.encode())
    return Recording(
        returncode=int(stored["returncode"]),
        stdout=out,
        stderr=err,
        requests=requests,
        made={
            show(path): None
            if entry is None
            else (int(entry["mode"]), _bytes_in(entry, places, made))
            for path, entry in stored["made"].items()
        },
        snapshots=None
        if stored.get("snapshots") is None
        else (
            {show(k): v for k, v in stored["snapshots"][0].items()},
            {show(k): v for k, v in stored["snapshots"][1].items()},
        ),
    )


Files = Dict[str, Tuple[int, bytes]]  # path -> (mode, content); mode -1: a symlink
BY_NAME = -2  # the mode of a file a recording keeps by name only (changed())
Changed = Dict[str, Optional[Tuple[int, bytes]]]  # what a run made or changed; None: removed


def files(places: Places) -> Files:
    """Every file and symlink under the sandbox's HOME, work dir and TMPDIR."""
    found: Files = {}
    for part in (places.home, places.project, places.tmp):
        for dirpath, dirnames, filenames in os.walk(part):
            for name in filenames + [d for d in dirnames if os.path.islink(Path(dirpath, d))]:
                path = Path(dirpath, name)
                try:
                    if path.is_symlink():
                        found[str(path)] = (-1, os.readlink(path).encode())
                    else:
                        found[str(path)] = (path.stat().st_mode & 0o777, path.read_bytes())
                except OSError:
                    continue  # gone while we looked: a lock file
    return found


def changed(before: Files, after: Files, places: Places) -> Changed:
    """What a run made, changed or removed. Claude Code's runtime state (RUNTIME_STATE:
    a transcript, todos, debug logs) and a file over FILE_MAX are kept by name, empty:
    a test that reads them runs `claude -p` live."""
    out: Changed = {}
    for path, entry in after.items():
        if before.get(path) == entry:
            continue
        state = RUNTIME_STATE.fullmatch(places.hide(path)) and entry[0] != -1
        big = len(entry[1]) > FILE_MAX  # a heap snapshot: tests look for it, not into it
        out[path] = (BY_NAME, b"") if state or big else entry
    out.update({path: None for path in before if path not in after})
    return out


def leave(made: Changed) -> None:
    """The sandbox as the recorded run left it."""
    for path, entry in sorted(made.items()):
        target = Path(path)
        if entry is not None and entry[0] == BY_NAME:
            # Kept by name only: made if missing, never over what is there (a transcript
            # a live run of the same test wrote and claude-print's side went on with).
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(b"")
                os.chmod(target, 0o600)
            continue
        if target.is_symlink() or target.is_file():
            target.unlink()
        if entry is None:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if entry[0] == -1:
            os.symlink(entry[1].decode(), target)
        else:
            target.write_bytes(entry[1])
            os.chmod(target, entry[0])


def prune(store: Path = STORE) -> int:
    """Remove the blobs no recording refers to (after a recording); how many went."""
    gone = 0
    for release in store.iterdir() if store.is_dir() else []:
        blobs = release / "blobs"
        if not blobs.is_dir():
            continue
        used: Set[str] = set()
        todo = [json.loads(p.read_text(encoding="utf-8")) for p in release.glob("*.json")]
        while todo:
            value = todo.pop()
            if isinstance(value, dict):
                if set(value) == {"$blob"} and value["$blob"] not in used:
                    used.add(value["$blob"])
                    todo.append(json.loads((blobs / f"{value['$blob']}.json").read_text()))
                else:
                    todo.extend(value.values())
            elif isinstance(value, list):
                todo.extend(value)
        for blob in blobs.glob("*.json"):
            if blob.stem not in used:
                blob.unlink()
                gone += 1
    return gone


if __name__ == "__main__":
    print(f"recorded_claude_p: {prune()} unused blobs removed")
