"""Recorded `claude -p` runs (tests/support/recorded_claude_p.py): a replay is the run
as recorded, in another sandbox; any change of input is another key; a recording
leaves the sandbox as it found it."""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
from pathlib import Path
from typing import Callable, Dict

import pytest
import recorded_claude_p as recorded
from recorded_claude_p import Places, Recording

RELEASE = "9.9.9"


@pytest.fixture(autouse=True)
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Recordings of these tests go to their own dir, never into tests/data."""
    monkeypatch.setattr(recorded, "STORE", tmp_path / "store")
    return tmp_path / "store"


def config(project: Path) -> str:
    return json.dumps({"projects": {str(project): {}}})


def sandbox(root: Path, port: int = 1234) -> Places:
    parts = [root / "home", root / "project", root / "tmp"]
    for part in parts:
        part.mkdir(parents=True)
    (parts[0] / ".claude.json").write_text(config(parts[1]))
    (parts[1] / "CLAUDE.md").write_text("be brief\n")
    return Places(parts[0], parts[1], parts[2], f"http://127.0.0.1:{port}")


def test_paths_become_placeholders_and_come_back_in_another_sandbox(tmp_path: Path) -> None:
    one, two = sandbox(tmp_path / "a"), sandbox(tmp_path / "b", 999)
    dashed = "-" + str(one.project).strip("/").replace("/", "-").replace("_", "-")
    text = f"cwd {one.project}/x, home {one.home}, api {one.api_url}, dir {dashed}, $HOME"
    hidden = one.hide(text)
    assert str(tmp_path) not in hidden and "1234" not in hidden
    dashed_two = "-" + str(two.project).strip("/").replace("/", "-").replace("_", "-")
    expected = f"cwd {two.project}/x, home {two.home}, api {two.api_url}, dir {dashed_two}, $HOME"
    assert two.show(hidden, recorded.Made("2000-01-01")) == expected


def test_the_day_of_the_recording_becomes_today(tmp_path: Path) -> None:
    places, made = sandbox(tmp_path), recorded.Made("2001-02-03")
    today = datetime.date.today().isoformat()
    assert places.show("Today's date is 2001-02-03.", made) == f"Today's date is {today}."
    assert places.show("on 2001-02-03", made) == "on 2001-02-03"  # only that line


def test_the_kernel_of_the_recording_becomes_this_machine_s(tmp_path: Path) -> None:
    """A recording made on another kernel release replays with this one's: the system
    prompt names it (a CI machine's kernel changed, 2026-11-28: 6.18.44-fc-v782 to -v657)."""
    places, made = sandbox(tmp_path), recorded.Made("2001-02-03", "0.0.1-elsewhere")
    here = f"{os.uname().sysname} {os.uname().release}"
    line = f" - OS Version: {os.uname().sysname} 0.0.1-elsewhere\n"
    assert places.show(line, made) == f" - OS Version: {here}\n"
    assert places.show("uname: 0.0.1-elsewhere", made) == "uname: 0.0.1-elsewhere"
    assert places.show(line, recorded.Made("2001-02-03")) == line  # none kept: as it was


def test_a_recording_made_on_another_kernel_replays_with_this_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    places, system = sandbox(tmp_path), os.uname().sysname
    said = f"OS Version: {system} 0.0.1-elsewhere"
    request = {"body": {"system": said}}
    with monkeypatch.context() as there:
        there.setattr(recorded, "os_release", lambda: "0.0.1-elsewhere")
        recorded.save(RELEASE, "k", places, Recording(0, said.encode(), b"", [request], {}, None))
    replayed = recorded.load(RELEASE, "k", places)
    assert replayed is not None
    here = f"OS Version: {system} {os.uname().release}"
    assert replayed.stdout == here.encode()
    assert replayed.requests == [{"body": {"system": here}}]


def test_the_same_run_in_another_sandbox_has_the_same_key(tmp_path: Path) -> None:
    one, two = sandbox(tmp_path / "a"), sandbox(tmp_path / "b", 999)
    args = ["--output-format", "json", f"read {one.project}/CLAUDE.md"]
    args_two = ["--output-format", "json", f"read {two.project}/CLAUDE.md"]
    assert recorded.key(RELEASE, one, args, b"hi", {}) == recorded.key(
        RELEASE, two, args_two, b"hi", {}
    )


def files_changed(change: Callable[[Places], object]) -> Callable[[Places], Dict[str, object]]:
    """A change to the sandbox's files, no change to the arguments."""

    def apply(places: Places) -> Dict[str, object]:
        change(places)
        return {}

    return apply


CHANGES: Dict[str, Callable[[Places], Dict[str, object]]] = {
    "release": lambda p: {"release": "9.9.8"},
    "an argument": lambda p: {"args": ["--output-format", "text"]},
    "stdin": lambda p: {"stdin": b"hi!"},
    "no stdin": lambda p: {"stdin": None},
    "binary stdin": lambda p: {"stdin": b"\xff"},
    "extra environment": lambda p: {"env": {"CLAUDE_CODE_X": "1"}},
    "a file's content": files_changed(lambda p: (p.project / "CLAUDE.md").write_text("long")),
    "a new file": files_changed(lambda p: (p.home / "n.txt").write_text("")),
    "a file's mode": files_changed(lambda p: os.chmod(p.project / "CLAUDE.md", 0o600)),
    "a symlink": files_changed(lambda p: os.symlink("CLAUDE.md", p.project / "AGENTS.md")),
    "a TMPDIR file": files_changed(lambda p: (p.tmp / "t").write_text("x")),
    "a file beside the sandbox": files_changed(lambda p: (p.home.parent / "m.json").write_text("")),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_any_change_of_input_is_another_key(tmp_path: Path, change: str) -> None:
    places = sandbox(tmp_path)
    base: Dict[str, object] = {
        "release": RELEASE,
        "args": ["--output-format", "json"],
        "stdin": b"hi",
        "env": {},
    }
    before = recorded.key(places=places, **base)  # type: ignore[arg-type]
    changed = {**base, **CHANGES[change](places)}
    assert recorded.key(places=places, **changed) != before  # type: ignore[arg-type]


def test_a_recording_replays_whole_in_another_sandbox(tmp_path: Path) -> None:
    one, two = sandbox(tmp_path / "a"), sandbox(tmp_path / "b", 999)
    tools = [{"name": f"Tool{i}", "description": "x" * 300} for i in range(10)]  # a blob
    run = Recording(
        returncode=1,
        stdout=f'{{"cwd": "{one.project}"}}\n'.encode(),
        stderr=b"\xff\xfe not utf-8",
        requests=[
            {"prompt": "hi", "side": False, "body": {"tools": tools, "system": f"in {one.home}"}},
            {"prompt": "title", "side": True, "body": {"tools": tools}},
        ],
        made={},
        snapshots=({"home/a": "1"}, {"home/a": "2", "project/b": "3"}),
    )
    recorded.save(RELEASE, "k1", one, run)
    recorded.save(RELEASE, "k2", one, run)
    blobs = list((tmp_path / "store" / RELEASE / "blobs").iterdir())
    assert any("Tool9" in blob.read_text() for blob in blobs)
    assert len([b for b in blobs if "Tool9" in b.read_text()]) == 1  # stored once
    back = recorded.load(RELEASE, "k2", two)
    assert back is not None
    assert back.returncode == 1
    assert back.stdout == f'{{"cwd": "{two.project}"}}\n'.encode()
    assert back.stderr == b"\xff\xfe not utf-8"
    assert back.requests[0]["body"] == {"tools": tools, "system": f"in {two.home}"}
    assert back.requests[1]["side"] is True
    assert back.snapshots == ({"home/a": "1"}, {"home/a": "2", "project/b": "3"})
    assert recorded.load(RELEASE, "nothing", two) is None


def test_a_replay_leaves_the_files_the_recorded_run_left(tmp_path: Path) -> None:
    """Made, changed, removed, a symlink, a mode; a transcript by name only, empty."""
    one, two = sandbox(tmp_path / "a"), sandbox(tmp_path / "b")
    for places in (one, two):
        (places.home / "old.txt").write_text("to go")
        (places.project / "CLAUDE.md").chmod(0o644)
    before = recorded.files(one)
    sessions = one.home / ".claude" / "projects" / recorded.encoded(str(one.project))
    sessions.mkdir(parents=True)
    (sessions / "s.jsonl").write_text(json.dumps({"cwd": str(one.project)}))
    (one.home / ".claude.json").write_text(config(one.project) + " ")
    (one.home / "old.txt").unlink()
    (one.tmp / "hook-mark").write_text(f"ran in {one.project}")
    os.symlink("CLAUDE.md", one.project / "AGENTS.md")
    (one.project / "CLAUDE.md").chmod(0o600)
    made = recorded.changed(before, recorded.files(one), one)
    run = Recording(0, b"", b"", [], made, snapshots=None)
    recorded.save(RELEASE, "k", one, run)
    back = recorded.load(RELEASE, "k", two)
    assert back is not None
    recorded.leave(back.made)
    transcript = two.home / ".claude" / "projects" / recorded.encoded(str(two.project)) / "s.jsonl"
    assert recorded.files(two) == {
        str(two.home / ".claude.json"): (0o644, (config(two.project) + " ").encode()),
        str(transcript): (0o600, b""),  # runtime state: by name only
        str(two.tmp / "hook-mark"): (0o644, f"ran in {two.project}".encode()),
        str(two.project / "AGENTS.md"): (-1, b"CLAUDE.md"),
        str(two.project / "CLAUDE.md"): (0o600, b"be brief\n"),
    }


def test_the_mode_is_one_of_three(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_PRINT_TEST_CLAUDE_P", "sometimes")
    with pytest.raises(ValueError, match="replayed, live or record"):
        recorded.mode()


def test_a_file_an_argument_names_elsewhere_is_part_of_the_key(tmp_path: Path) -> None:
    places = sandbox(tmp_path / "box")
    config = tmp_path / "elsewhere" / "mcp.json"
    config.parent.mkdir()
    config.write_text("{}")
    args = ["--mcp-config", str(config)]
    before = recorded.key(RELEASE, places, args, None, {"X": f"a={config}"})
    config.write_text('{"mcpServers": {}}')
    assert recorded.key(RELEASE, places, args, None, {}) != before
    assert recorded.key(RELEASE, places, args, None, {"X": f"a={config}"}) != before


def test_a_made_up_id_of_the_run_is_the_new_one_on_replay(tmp_path: Path) -> None:
    old, new = "0" * 8 + "-1111-2222-3333-" + "4" * 12, "a" * 8 + "-bbbb-cccc-dddd-" + "e" * 12
    one = dataclasses.replace(sandbox(tmp_path / "a"), ids=recorded.ids_in(["--session-id", old]))
    two = dataclasses.replace(sandbox(tmp_path / "b"), ids=recorded.ids_in([f"x={new}"]))
    assert one.ids == (old,)
    assert recorded.key(RELEASE, one, ["--session-id", old], None, {}) == recorded.key(
        RELEASE, two, ["--session-id", new], None, {}
    )
    assert (
        two.show(one.hide(f'{{"session_id": "{old}"}}'), recorded.Made(""))
        == f'{{"session_id": "{new}"}}'
    )


def test_what_an_earlier_run_left_is_keyed_by_its_names_only(tmp_path: Path) -> None:
    """A transcript's content, ~/.claude.json's counters: another key would make every
    second run of a test miss its recording. Their number and the settings still count."""
    places = sandbox(tmp_path)
    sessions = places.home / ".claude" / "projects" / recorded.encoded(str(places.project))
    sessions.mkdir(parents=True)
    config = places.home / ".claude.json"

    def run_leaves(uuid: str, count: int) -> str:
        for old in sessions.glob("*.jsonl"):
            old.unlink()
        (sessions / f"{uuid}.jsonl").write_text(f'{{"sessionId": "{uuid}", "ms": {count}}}')
        config.write_text(json.dumps({"numStartups": count, "lastSessionId": uuid}))
        return recorded.key(RELEASE, places, [], None, {})

    first = run_leaves("1" * 8 + "-1111-1111-1111-" + "1" * 12, 1)
    assert run_leaves("2" * 8 + "-2222-2222-2222-" + "2" * 12, 7) == first
    (sessions / "memory").mkdir()
    (sessions / "memory" / "MEMORY.md").write_text("remember this")  # read by claude -p
    with_memory = recorded.key(RELEASE, places, [], None, {})
    assert with_memory != first
    (sessions / "memory" / "MEMORY.md").write_text("remember that")
    assert recorded.key(RELEASE, places, [], None, {}) != with_memory
    (sessions / "memory" / "MEMORY.md").unlink()
    (sessions / "two.jsonl").write_text("{}")
    assert recorded.key(RELEASE, places, [], None, {}) != first  # one transcript more
    (sessions / "two.jsonl").unlink()
    config.write_text(json.dumps({"numStartups": 7, "theme": "light"}))
    assert recorded.key(RELEASE, places, [], None, {}) != first  # a setting, not a counter


def test_a_large_file_left_is_kept_by_name_and_a_huge_run_not_at_all(
    tmp_path: Path, store: Path
) -> None:
    places = sandbox(tmp_path / "a")
    before = recorded.files(places)
    (places.home / "heap.heapsnapshot").write_bytes(b"x" * (recorded.FILE_MAX + 1))
    (places.home / "small").write_bytes(b"x" * recorded.FILE_MAX)
    made = recorded.changed(before, recorded.files(places), places)
    assert made[str(places.home / "heap.heapsnapshot")] == (recorded.BY_NAME, b"")
    assert made[str(places.home / "small")] == (0o644, b"x" * recorded.FILE_MAX)
    huge = Recording(0, b"y" * recorded.RECORDING_MAX, b"", [], {}, None)
    recorded.save(RELEASE, "huge", places, huge)
    assert recorded.load(RELEASE, "huge", places) is None
    assert not (store / RELEASE / "huge.json").exists()


def test_the_fake_apis_answer_to_a_prompt_naming_a_path_is_this_sandboxs(tmp_path: Path) -> None:
    """`ACK <chars> <sha>` hashes the prompt: with a sandbox path in it, another sandbox
    gets another answer, and the replay must print that one."""
    from fake_api import plan_reply

    one, two = sandbox(tmp_path / "a"), sandbox(tmp_path / "b")

    def ack(prompt: str) -> str:
        return str(plan_reply({"messages": [{"role": "user", "content": prompt}]})[1])

    prompt_one, prompt_two = f"!touch {one.tmp}/x", f"!touch {two.tmp}/x"
    assert ack(prompt_one) != ack(prompt_two) and ack(prompt_one).startswith("ACK ")
    requests = [{"prompt": prompt_one, "side": False}, {"prompt": "title?", "side": True}]
    run = Recording(0, f'{{"result":"{ack(prompt_one)}"}}'.encode(), b"", requests, {}, None)
    recorded.save(RELEASE, "k", one, run)
    back = recorded.load(RELEASE, "k", two)
    assert back is not None
    assert back.stdout == f'{{"result":"{ack(prompt_two)}"}}'.encode()


def test_a_file_kept_by_name_never_overwrites_one_that_is_there(tmp_path: Path) -> None:
    """A live `claude -p` wrote a session, claude-print resumed it, then a replayed
    `claude -p --resume` of the same test left its transcript by name: the session stays."""
    places = sandbox(tmp_path)
    transcript = places.home / ".claude" / "projects" / "p" / "s.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text('{"ours": "resumed"}\n')
    fresh = places.home / ".claude" / "projects" / "p" / "t.jsonl"
    recorded.leave({str(transcript): (recorded.BY_NAME, b""), str(fresh): (recorded.BY_NAME, b"")})
    assert transcript.read_text() == '{"ours": "resumed"}\n'
    assert fresh.read_bytes() == b""
