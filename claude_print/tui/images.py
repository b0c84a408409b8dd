"""Images in stream-json `user` messages, given to the TUI the way a person gives them.

`claude -p --input-format stream-json` takes a user message's image blocks as they are.
The TUI takes an image only from the clipboard (Ctrl+V; on Linux it asks `xclip` or
`wl-paste`) or as a pasted path to an image file. claude-print uses the clipboard way
without the user's clipboard: the TUI's PATH starts with a private directory holding an
`xclip` and a `wl-paste` of claude-print's own, which hand out the image staged in a
private 0600 file, and only while one is staged. Otherwise they run the real tool further
down PATH (a model's Bash tool may use it), or fail as a missing tool would.

The model then gets the image block with the bytes and media type the caller sent, as
under `claude -p`; the TUI's text block holds an `[Image #N]` placeholder where the
image went in (measured on 2.1.197, 2.1.270 and 2.1.332; docs/compatibility.md).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import re
import shlex
import struct
from typing import Any, Dict, List, NamedTuple, Optional, Tuple, Union

# Where the image goes and what the TUI is told it is: the two files of `Clipboard.dir`.
IMAGE_NAME = "clipboard-image"
TYPE_NAME = "clipboard-type"
SERVED_NAME = "clipboard-served"  # the TUI has read the staged image
TOOLS = ("xclip", "wl-paste")
# The TUI marks each pasted image in its input box: "[Image #3]" (ids go on over a session).
PLACEHOLDER = re.compile(r"\[Image #(\d+)\]")
# What the TUI's clipboard read accepts (2.1.332 lists png, jpeg, jpg, webp, gif and bmp;
# 2.1.197 the same); the Messages API takes these four.
MEDIA_TYPES = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),  # and "WEBP" at offset 8
}


class Image(NamedTuple):
    media_type: str
    data: bytes


def sniff(data: bytes) -> Optional[str]:
    """The media type the bytes are (the TUI and `claude -p` go by the bytes too)."""
    for media_type, magics in MEDIA_TYPES.items():
        if any(data.startswith(magic) for magic in magics):
            if media_type == "image/webp" and data[8:12] != b"WEBP":
                continue
            return media_type
    return None


def from_block(block: Dict[str, Any]) -> Union[Image, str]:
    """An image content block as an Image, or why the TUI cannot take it."""
    source = block.get("source")
    kind = source.get("type") if isinstance(source, dict) else None
    if not isinstance(source, dict) or kind != "base64":
        return (
            f"an image block with a {kind or 'missing'!s} source cannot be sent: the TUI takes "
            "an image only as its bytes (send it as a base64 source)"
        )
    data = source.get("data")
    try:
        raw = base64.b64decode(data if isinstance(data, str) else "", validate=True)
    except (binascii.Error, ValueError):
        return "an image block's base64 data is not valid base64"
    found = sniff(raw)
    if found is None:
        return (
            "an image block's data is not a PNG, JPEG, GIF or WebP image (the TUI takes "
            "no other kind)"
        )
    if not whole(raw, found):
        # The TUI would read it off the clipboard and drop it without a word (measured on
        # 2.1.332 with a PNG signature and no chunks); claude -p sends the model
        # "[Image could not be processed: ...]" in its place.
        return (
            f"an image block's data is not a whole {found} image (cut short or damaged): "
            "Claude Code's input box cannot take it"
        )
    return Image(found, raw)


def whole(data: bytes, media_type: str) -> bool:
    """The image's frame is there: its size in its header and its end marker (no pixel is
    decoded: the TUI does that, and it drops an image it cannot decode)."""
    if media_type == "image/png":
        ok = len(data) >= 45 and data[12:16] == b"IHDR" and data[-8:-4] == b"IEND"
        return ok and min(struct.unpack(">II", data[16:24])) > 0
    if media_type == "image/gif":
        return len(data) >= 14 and min(struct.unpack("<HH", data[6:10])) > 0 and data[-1:] == b";"
    if media_type == "image/jpeg":
        frame = re.search(b"\xff[\xc0-\xc3\xc5-\xc7\xc9-\xcb\xcd-\xcf]", data)
        return frame is not None and data.rstrip(b"\x00")[-2:] == b"\xff\xd9"
    # WebP: RIFF's length is the file's, and a VP8, VP8L or VP8X chunk comes first.
    return (
        len(data) >= 20
        and struct.unpack("<I", data[4:8])[0] + 8 == len(data)
        and data[12:16] in (b"VP8 ", b"VP8L", b"VP8X")
    )


def is_source_note(record: Dict[str, Any]) -> bool:
    """The meta user record the TUI adds after a prompt with images: "[Image: source:
    <its copy>]" per image (2.1.197 on; an "[Image: original WxH, displayed at ...]" for
    one it resized). `claude -p` prints no event for it."""
    if record.get("type") != "user" or not record.get("isMeta"):
        return False
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return (
        isinstance(content, list)
        and bool(content)
        and all(
            isinstance(block, dict)
            and block.get("type") == "text"
            and str(block.get("text", "")).startswith(("[Image: ", "[Image source: "))
            for block in content
        )
    )


def placeholders(text: str) -> int:
    """How many image placeholders the input box's text shows (one may wrap)."""
    return len(_ON_SCREEN.findall(text))


_ON_SCREEN = re.compile(r"\[\s*Image\s+#\s*\d+\s*\]")


def strip_placeholders(sent: str, count: int) -> Optional[str]:
    """UserPromptSubmit's prompt without the `count` placeholders the images left at its
    end ("text[Image #4] [Image #5]"); None when they are not there as expected."""
    if count == 0:
        return None if PLACEHOLDER.search(sent) else sent
    tail = re.compile(r"(?:\[Image #\d+\] ?){" + str(count) + r"}\s*\Z")
    match = tail.search(sent)
    if match is None:
        return None
    rest = sent[: match.start()]
    return None if PLACEHOLDER.search(rest) else rest


# `$1...`: the TUI's arguments. 2.1.332: `xclip -selection clipboard -o -t TARGETS`, then
# `-o -t image/png`; `wl-paste --list-types`, then `--type image/png`. 2.1.197/2.1.270 (a
# shell line): `xclip -selection clipboard -t TARGETS -o`, `-t image/png -o`, `wl-paste -l`.
# Whatever type it asks for, it gets the staged bytes: both releases tell the type from them.
_SHIM = """\
#!/bin/sh
# claude-print's stand-in for {tool}: Claude Code reads an image from it on Ctrl+V. It
# hands out the image claude-print has staged, never the user's clipboard; with nothing
# staged it is the real {tool}, found further down PATH.
dir={dir}
if [ -f "$dir/{image}" ]; then
  case " $* " in
    *" TARGETS "*|*" -l "*|*" --list-types "*)
      IFS= read -r type < "$dir/{type}"; printf '%s\\n' "$type"; exit 0 ;;
    *" image/"*) cat "$dir/{image}" || exit 1; : > "$dir/{served}"; exit 0 ;;
  esac
  exit 1
fi
set -f
IFS=:
for entry in $PATH; do
  if [ "$entry" != "$dir" ] && [ -x "$entry/{tool}" ]; then
    exec "$entry/{tool}" "$@"
  fi
done
echo "{tool}: command not found" >&2
exit 127
"""


class Clipboard:
    """claude-print's private clipboard: the tools' directory (first on the TUI's PATH)
    and the one image staged for the next Ctrl+V."""

    def __init__(self, directory: str) -> None:
        self.dir = directory
        os.mkdir(directory, 0o700)
        for tool in TOOLS:
            path = os.path.join(directory, tool)
            text = _SHIM.format(
                tool=tool,
                dir=shlex.quote(directory),
                image=IMAGE_NAME,
                type=TYPE_NAME,
                served=SERVED_NAME,
            )
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o700)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)

    def path(self, path: str) -> str:
        """PATH with the tools' directory first."""
        return self.dir + (os.pathsep + path if path else "")

    def stage(self, image: Image) -> None:
        """The image the next Ctrl+V gives the TUI: the type first, the bytes last (the
        tools hand out only once the bytes' file is there, whole: it is renamed in)."""
        self.clear()
        self._write(TYPE_NAME, image.media_type.encode("ascii"))
        self._write(IMAGE_NAME + ".part", image.data)
        os.rename(os.path.join(self.dir, IMAGE_NAME + ".part"), os.path.join(self.dir, IMAGE_NAME))

    def served(self) -> bool:
        """The TUI has read the staged image's bytes."""
        return os.path.exists(os.path.join(self.dir, SERVED_NAME))

    def clear(self) -> None:
        for name in (IMAGE_NAME, IMAGE_NAME + ".part", TYPE_NAME, SERVED_NAME):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(self.dir, name))

    def _write(self, name: str, data: bytes) -> None:
        fd = os.open(
            os.path.join(self.dir, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600
        )
        with os.fdopen(fd, "wb") as f:
            f.write(data)


def blocks_of(content: List[Any]) -> Tuple[List[str], List[Image], str]:
    """A message's text blocks, image blocks and the first block the TUI cannot take."""
    texts: List[str] = []
    images: List[Image] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "image" and isinstance(block, dict):
            image = from_block(block)
            if isinstance(image, str):
                return texts, images, image
            images.append(image)
        else:
            return (
                texts,
                images,
                (
                    f"claude-print types each message into Claude Code's input box, which takes "
                    f"text and images only: a {kind or 'malformed'!s} content block cannot be sent "
                    "(give a file path in the text instead; the model can read it with its tools)"
                ),
            )
    return texts, images, ""
