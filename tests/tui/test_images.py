"""claude-print's private clipboard (images.py): what its `xclip` and `wl-paste` answer
to each release's calls, that they never reach the user's clipboard while an image is
staged, and how the TUI's image marks are read back."""

from __future__ import annotations

import os
import stat
import struct
import subprocess
from pathlib import Path
from typing import List, Tuple

import pytest
from image_bytes import GIF_1X1, png

from claude_print import contract
from claude_print.tui.delivery import check_submitted
from claude_print.tui.images import (
    Clipboard,
    Image,
    is_source_note,
    placeholders,
    sniff,
    strip_placeholders,
    whole,
)

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
GIF = b"GIF89a" + b"\x01\x00\x01\x00\x80\x00\x00" + bytes(10)

# The calls the TUI makes (measured: strings of the binaries, and a logging stand-in run
# under the real TUI, tests/e2e/test_e2e_images.py). (argv, what is asked)
LIST_CALLS = [
    ["-selection", "clipboard", "-o", "-t", "TARGETS"],  # xclip, 2.1.332
    ["-selection", "clipboard", "-t", "TARGETS", "-o"],  # xclip, 2.1.197 / 2.1.270
]
WL_LIST_CALLS = [["--list-types"], ["-l"]]  # wl-paste: 2.1.332, 2.1.197
READ_CALLS = [
    ("xclip", ["-selection", "clipboard", "-o", "-t", "image/png"]),
    ("xclip", ["-selection", "clipboard", "-t", "image/png", "-o"]),
    ("xclip", ["-selection", "clipboard", "-t", "image/bmp", "-o"]),  # 2.1.197's fallback
    ("wl-paste", ["--type", "image/png"]),
    ("wl-paste", ["--type", "image/gif"]),
]


@pytest.fixture
def setup(tmp_path: Path) -> Tuple[Clipboard, Path, Path]:
    """A clipboard, and a "real" xclip and wl-paste further down PATH that log their calls."""
    clipboard = Clipboard(str(tmp_path / "clip"))
    real = tmp_path / "real"
    real.mkdir()
    log = tmp_path / "real.log"
    for tool in ("xclip", "wl-paste"):
        script = real / tool
        script.write_text(f'#!/bin/sh\necho "{tool} $*" >> {log}\necho real-{tool}\n')
        script.chmod(0o755)
    return clipboard, real, log


def run(
    clipboard: Clipboard, tool: str, args: List[str], path: str
) -> subprocess.CompletedProcess[bytes]:
    env = {"PATH": clipboard.path(path)}
    return subprocess.run([tool, *args], env=env, capture_output=True, timeout=10)


def test_the_tools_are_private_and_first_on_path(setup: Tuple[Clipboard, Path, Path]) -> None:
    clipboard, _, _ = setup
    assert stat.S_IMODE(os.stat(clipboard.dir).st_mode) == 0o700
    assert sorted(os.listdir(clipboard.dir)) == ["wl-paste", "xclip"]
    assert clipboard.path("/usr/bin:/bin") == f"{clipboard.dir}:/usr/bin:/bin"
    assert clipboard.path("") == clipboard.dir


@pytest.mark.parametrize("image", [Image("image/png", PNG), Image("image/gif", GIF)])
def test_a_staged_image_is_what_every_release_s_calls_get(
    setup: Tuple[Clipboard, Path, Path], image: Image
) -> None:
    clipboard, real, log = setup
    clipboard.stage(image)
    for name in os.listdir(clipboard.dir):
        if name.startswith("clipboard-"):
            assert stat.S_IMODE(os.stat(os.path.join(clipboard.dir, name)).st_mode) == 0o600
    for args in LIST_CALLS:
        listed = run(clipboard, "xclip", args, f"{real}:/usr/bin:/bin")
        assert (listed.returncode, listed.stdout) == (0, image.media_type.encode() + b"\n")
    for args in WL_LIST_CALLS:
        listed = run(clipboard, "wl-paste", args, f"{real}:/usr/bin:/bin")
        assert (listed.returncode, listed.stdout) == (0, image.media_type.encode() + b"\n")
    assert not clipboard.served()
    for tool, args in READ_CALLS:
        read = run(clipboard, tool, args, f"{real}:/usr/bin:/bin")
        assert (read.returncode, read.stdout) == (0, image.data), (tool, args)
    assert clipboard.served()
    # Anything else (a text read, a copy) fails rather than reach the user's clipboard.
    for tool, args in [
        ("xclip", ["-selection", "clipboard", "-o"]),
        ("xclip", ["-i"]),
        ("wl-paste", []),
    ]:
        assert run(clipboard, tool, args, f"{real}:/usr/bin:/bin").returncode == 1, (tool, args)
    assert not log.exists()  # the real tools were never run


def test_with_nothing_staged_the_real_tool_runs(setup: Tuple[Clipboard, Path, Path]) -> None:
    clipboard, real, log = setup
    clipboard.stage(Image("image/png", PNG))
    clipboard.clear()
    assert sorted(os.listdir(clipboard.dir)) == ["wl-paste", "xclip"]
    done = run(clipboard, "xclip", ["-selection", "clipboard", "-o"], f"/nonexistent:{real}")
    assert (done.returncode, done.stdout) == (0, b"real-xclip\n")
    assert log.read_text() == "xclip -selection clipboard -o\n"
    missing = run(clipboard, "wl-paste", ["--list-types"], "/nonexistent")
    assert missing.returncode == 127 and b"wl-paste: command not found" in missing.stderr


def test_a_tmpdir_with_shell_characters_stays_one_word(tmp_path: Path) -> None:
    odd = tmp_path / "it's $(touch pwned) a dir"
    odd.mkdir()
    clipboard = Clipboard(str(odd / "clip"))
    clipboard.stage(Image("image/png", PNG))
    read = run(clipboard, "xclip", ["-o", "-t", "image/png"], "/usr/bin:/bin")
    assert (read.returncode, read.stdout) == (0, PNG)
    assert not (Path.cwd() / "pwned").exists() and not (odd / "pwned").exists()


@pytest.mark.parametrize(
    ("data", "media_type"),
    [
        (PNG, "image/png"),
        (b"\xff\xd8\xff\xe0" + bytes(8), "image/jpeg"),
        (b"GIF87a" + bytes(8), "image/gif"),
        (GIF, "image/gif"),
        (b"RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"RIFF\x10\x00\x00\x00WAVEfmt ", None),
        (b"%PDF-1.7", None),
        (b"BM" + bytes(20), None),  # BMP: the API takes none; the TUI would convert it
        (b"", None),
    ],
)
def test_the_media_type_is_the_bytes(data: bytes, media_type: str) -> None:
    assert sniff(data) == media_type


@pytest.mark.parametrize(
    ("sent", "count", "left"),
    [
        ("look[Image #1]", 1, "look"),
        ("look  [Image #1] [Image #2]", 2, "look  "),
        ("look[Image #7] [Image #8] ", 2, "look"),
        ("[Image #3]", 1, ""),
        ("look", 0, "look"),
        ("look[Image #1]", 2, None),  # one went missing
        ("look[Image #1] [Image #2]", 1, None),  # one too many
        ("[Image #1] look", 1, None),  # not where claude-print put it
        ("look [Image #1]", 0, None),
    ],
)
def test_the_marks_of_the_pasted_images_are_taken_off_the_end(
    sent: str, count: int, left: str
) -> None:
    assert strip_placeholders(sent, count) == left


def test_check_submitted_counts_the_images() -> None:
    facts = contract.facts_for("2.1.332")
    assert (
        check_submitted("look\n\nhere[Image #4] [Image #5]", "look\n\nhere", "editor", facts, 2)
        is None
    )
    problem = check_submitted("look[Image #4]", "look", "editor", facts, 2)
    assert problem is not None and "1 image(s) where 2 were given" in problem
    assert check_submitted("lock[Image #1]", "look", "paste", facts, 1) is not None


def test_marks_are_counted_on_screen_even_wrapped() -> None:
    assert placeholders("look [Image #1] [Image\n  #2]") == 2
    assert placeholders("look [Image 1]") == 0


def test_the_tui_s_source_note_is_known() -> None:
    note = {
        "type": "user",
        "isMeta": True,
        "message": {"content": [{"type": "text", "text": "[Image: source: /t/1.png]"}]},
    }
    assert is_source_note(note)
    assert not is_source_note({**note, "isMeta": False})
    text = {"type": "text", "text": "look"}
    assert not is_source_note({**note, "message": {"content": [text]}})


WHOLE = {
    "image/png": png(3, 2),
    "image/gif": GIF_1X1,
    # The frame's parts only (SOI, APP0, SOF0 of 1x1, SOS, EOI): what whole() reads.
    "image/jpeg": bytes.fromhex(
        "ffd8ffe000104a46494600010100000100010000ffc0000b080001000101011100"
        "ffda0008010100003f00d2cf20ffd9"
    ),
    "image/webp": b"RIFF"
    + struct.pack("<I", 4 + 8 + 10)
    + b"WEBPVP8 "
    + struct.pack("<I", 10)
    + bytes(10),
}


@pytest.mark.parametrize("media_type", sorted(WHOLE))
def test_an_image_cut_short_anywhere_is_refused(media_type: str) -> None:
    data = WHOLE[media_type]
    assert sniff(data) == media_type and whole(data, media_type)
    for end in range(len(sniff_prefix(media_type)), len(data)):
        assert not whole(data[:end], media_type), end


def test_a_jpeg_padded_with_zero_bytes_is_whole() -> None:
    """Cameras and editors pad a JPEG with zero bytes after its end marker (the decoder
    stops at the marker): it is whole. Padding after a cut-short JPEG does not make it
    whole, nor does anything but zeros after the marker look like padding."""
    jpeg = WHOLE["image/jpeg"]
    assert jpeg.endswith(b"\xff\xd9")
    for padding in (b"\x00", b"\x00" * 2, b"\x00" * 4096):
        assert sniff(jpeg + padding) == "image/jpeg"
        assert whole(jpeg + padding, "image/jpeg"), len(padding)
    assert not whole(jpeg[:-2] + b"\x00" * 16, "image/jpeg")
    assert not whole(jpeg[:-1] + b"\x00" * 16, "image/jpeg")


def sniff_prefix(media_type: str) -> bytes:
    return {
        "image/png": b"\x89PNG\r\n\x1a\n",
        "image/gif": b"GIF89a",
        "image/jpeg": b"\xff\xd8\xff",
        "image/webp": b"RIFF",
    }[media_type]


def test_a_png_of_no_pixels_is_refused() -> None:
    empty = png(3, 2).replace(struct.pack(">II", 3, 2), struct.pack(">II", 0, 2), 1)
    assert not whole(empty, "image/png")
