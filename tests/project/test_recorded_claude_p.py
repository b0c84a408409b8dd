"""Recorded `claude -p` runs (tests/support/recorded_claude_p.py): a replay is the run
as recorded, in another sandbox; any change of input is another key; a recording
leaves the sandbox as it found it."""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path
from typing import Callable, Dict

import pytest
import recorded_claude_p as recorded
from recorded_claude_p import Places, Recording

RELEASE = "9.9.9"


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
    assert two.show(hidden, "2000-01-01") == expected


def test_the_day_of_the_recording_becomes_today(tmp_path: Path) -> None:
    places = sandbox(tmp_path)
    today = datetime.date.today().isoformat()
    assert places.show("Today's date is 2001-02-03.", "2001-02-03") == f"Today's date is {today}."
    assert places.show("on 2001-02-03", "2001-02-03") == "on 2001-02-03"  # only that line


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


def test_a_recording_replays_whole_in_another_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recorded, "STORE", tmp_path / "store")
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
        changes=["+home/.claude/x"],
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
    assert back.changes == ["+home/.claude/x"]
    assert recorded.load(RELEASE, "nothing", two) is None


def test_undo_leaves_the_sandbox_as_it_was(tmp_path: Path) -> None:
    places = sandbox(tmp_path)
    (places.home / "old").mkdir()
    (places.home / "old" / "gone.txt").write_text("keep me")
    os.symlink("CLAUDE.md", places.project / "link")
    undo = recorded.Undo(places)
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    (places.home / ".claude" / "projects" / "x").mkdir(parents=True)
    (places.home / ".claude" / "projects" / "x" / "s.jsonl").write_text("{}")
    (places.home / ".claude.json").write_text("{}")
    (places.home / "old" / "gone.txt").unlink()
    (places.project / "link").unlink()
    os.chmod(places.project / "CLAUDE.md", 0o600)
    undo.restore()
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
    assert (places.home / ".claude.json").read_text() == config(places.project)
    assert (places.home / "old" / "gone.txt").read_text() == "keep me"
    assert os.readlink(places.project / "link") == "CLAUDE.md"
    assert (places.project / "CLAUDE.md").stat().st_mode & 0o777 == 0o644


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
