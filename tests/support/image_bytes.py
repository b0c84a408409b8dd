"""Whole images for the image tests (tests/tui/test_images.py, tests/sdk/, tests/e2e/):
a PNG of any size and colour, a 1x1 GIF, and a stream-json image block."""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any, Dict, Tuple

# A 1x1 GIF, written out.
GIF_1X1 = bytes.fromhex(
    "4749463839610100010080000000000000ffffff21f90401000000002c00000000010001000002024401003b"
)


def png(width: int, height: int, rgb: Tuple[int, int, int] = (0x10, 0x20, 0x30)) -> bytes:
    """A whole PNG (8-bit RGB) of `width` x `height` pixels, every one `rgb`."""
    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def image_block(data: bytes, media_type: str = "image/png") -> Dict[str, Any]:
    """A stream-json image content block with `data` as base64."""
    encoded = base64.b64encode(data).decode("ascii")
    source = {"type": "base64", "media_type": media_type, "data": encoded}
    return {"type": "image", "source": source}
