"""The settings claude-print hands the TUI (run/launch.make_relay)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from claude_print.options import Options
from claude_print.run.launch import make_relay
from claude_print.tui.images import Image


@pytest.mark.parametrize("delivery", ["argv", "editor", "paste"])
def test_the_users_status_line_gives_way_to_an_empty_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, delivery: str
) -> None:
    """On every release: up to 2.1.202 the status line takes the ready footer's place,
    which is read as "← for agents" there (test_screens), so no release keeps the user's."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    options = Options(prompt="hi", prompt_source="argv")
    relay = make_relay(options, delivery, None, False, None)
    try:
        settings = json.loads(Path(relay.settings_path).read_text())
    finally:
        relay.close()
    assert settings["statusLine"] == {"type": "command", "command": ""}


# --- stream-json images: the TUI's clipboard tools are claude-print's own ---------------

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
# The TUI's image reads on Ctrl+V (2.1.332's; tests/tui/test_images.py has every release's).
IMAGE_READS = [
    ["xclip", "-selection", "clipboard", "-o", "-t", "image/png"],
    ["wl-paste", "--type", "image/png"],
]


@pytest.mark.parametrize("tmpdir", ["plain", "with:colon"])
def test_an_image_is_never_read_from_the_users_own_clipboard_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tmpdir: str
) -> None:
    """The user's own `xclip` and `wl-paste` are on PATH. Where claude-print has a
    clipboard for the TUI, the tools its PATH finds hand out the staged image and the
    user's never run; a ':' in the temp dir's path would split the clipboard's PATH entry
    in two (the user's tools found instead), so there it must have none (a message with
    images is then refused: test_delivery)."""
    from claude_print import contract
    from claude_print.printing.emit import Emitter
    from claude_print.run.launch import prepare
    from claude_print.sdk.stream_input import ControlChannel

    user_bin, log = tmp_path / "user-bin", tmp_path / "user-tools.log"
    user_bin.mkdir()
    for tool in ("xclip", "wl-paste"):
        (user_bin / tool).write_text(f'#!/bin/sh\necho "{tool} $*" >> {log}\necho mine\n')
        (user_bin / tool).chmod(0o755)
    (tmp_path / tmpdir).mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / tmpdir))
    monkeypatch.setenv("PATH", f"{user_bin}:/usr/bin:/bin")
    options = Options(
        prompt="", prompt_source="stdin", input_format="stream-json", output_format="stream-json"
    )
    facts = contract.facts_for("2.1.332")
    channel = ControlChannel(Emitter("stream-json"), lambda _: None, facts)
    launch = prepare(options, facts, "editor", channel, None, None, lambda _: None)
    try:
        assert launch.relay.dir.startswith(str(tmp_path / tmpdir))
        if tmpdir == "plain":
            assert launch.clipboard is not None  # images go in here
        if launch.clipboard is None:
            return
        launch.clipboard.stage(Image("image/png", PNG))
        for argv in IMAGE_READS:
            done = subprocess.run(
                argv, env=launch.env, cwd=tmp_path, capture_output=True, timeout=10, check=False
            )
            assert (done.returncode, done.stdout) == (0, PNG), argv
        assert not log.exists(), log.read_text()
    finally:
        launch.relay.close()
