"""End to end: an image in a stream-json `user` message, from a stream-json caller and
from the Claude Agent SDK, reaches the model as `claude -p` sends it: each image an image
block of the same media type and bytes, in the same order, in the user message of the
prompt. What differs is written out here per release (docs/compatibility.md, "Images"):

- the TUI's text block ends with a mark per image ("[Image #1] [Image #2]"), and its
  image blocks follow the text block whatever the caller's order was;
- the TUI adds a text block "[Image: source: <its copy of the image>]" per image
  (2.1.197 and 2.1.270 keep the copy in ~/.claude/image-cache, 2.1.332 in $TMPDIR);
  `claude -p` adds one only from 2.1.332 (its own copy's path);
- `claude -p` 2.1.332 ends the caller's text with a line break when it came after the
  images.

`claude -p` 2.1.197 drops a message with an image when stdin ends before it has read
the image (measured: exit 0, no request): both sides here keep stdin open until the
result, as the SDK does.
"""

from __future__ import annotations

import base64
import json
import os
import re
import select
import shlex
import subprocess
import sys
import time
from typing import Any, Dict, List, Tuple

import pytest
from fake_api import FakeApiServer
from harness import RUN_TIMEOUT, Sandbox, claude_release, entrypoints
from image_bytes import GIF_1X1, image_block, png

pytestmark = [pytest.mark.e2e]


RED = png(16, 16, (200, 30, 60))


def user_message(content: List[Dict[str, Any]]) -> Dict[str, Any]:
    return {
        "type": "user",
        "message": {"role": "user", "content": content},
        "parent_tool_use_id": None,
        "session_id": "",
    }


STREAMED = ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]


def run_held(
    argv: List[str], sandbox: Sandbox, api: FakeApiServer, message: Dict[str, Any]
) -> Tuple[int, List[Dict[str, Any]], str]:
    """One message in, stdin kept open until the result is out (as the SDK does)."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=sandbox.project,
        env=sandbox.env(ANTHROPIC_BASE_URL=api.url, CLAUDE_PRINT_TRACE="1"),
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
        events: List[Dict[str, Any]] = []
        buffer = b""
        deadline = time.monotonic() + RUN_TIMEOUT
        fd = proc.stdout.fileno()
        while not any(e.get("type") == "result" for e in events):
            ready = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]
            chunk = os.read(fd, 65536) if ready else b""
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            events += [json.loads(line) for line in lines if line.strip()]
        proc.stdin.close()
        proc.stdin = None
        _, err = proc.communicate(timeout=RUN_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, events, err.decode("utf-8", "replace")


class View:
    """The prompt's user message in a turn request: its images and its texts (Claude
    Code's own <system-reminder> blocks aside)."""

    def __init__(self, requests: List[Dict[str, Any]]) -> None:
        turns = [r for r in requests if not r["side"] and not r["tool_result"]]
        assert turns, "no turn request reached the fake API"
        messages = [
            m
            for m in turns[0]["body"]["messages"]
            if m["role"] == "user"
            and isinstance(m["content"], list)
            and any(b.get("type") == "image" for b in m["content"])
        ]
        assert len(messages) == 1, turns[0]["body"]["messages"]
        blocks = messages[0]["content"]
        self.images = [
            (b["source"]["media_type"], base64.b64decode(b["source"]["data"]))
            for b in blocks
            if b["type"] == "image"
        ]
        self.texts = [
            b["text"]
            for b in blocks
            if b["type"] == "text" and not b["text"].startswith("<system-reminder>")
        ]
        self.kinds = [
            b["type"]
            for b in blocks
            if b["type"] == "image"
            or (b["type"] == "text" and not b["text"].startswith("<system-reminder>"))
        ]
        # 2.1.197 says "[Image source: ...]" for an image whose size it did not read (GIF).
        self.notes = [
            t for t in self.texts if t.startswith(("[Image: source: ", "[Image source: "))
        ]
        self.prose = [t for t in self.texts if t not in self.notes]


def assert_same_images(
    ours: View,
    theirs: View,
    release: str,
    text: str,
    images: List[Tuple[str, bytes]],
    images_first: bool,
) -> None:
    assert theirs.images == images, release  # the oracle took them as sent
    assert ours.images == images, release
    marks = " ".join(f"[Image #{n}]" for n in range(1, len(images) + 1))
    assert ours.prose == [text + marks], release
    # Measured: 2.1.332 adds the line break when the text block came after the images.
    their_text = text + "\n" if release >= "2.1.332" and images_first else text
    assert theirs.prose == ([their_text] if text else []), release
    # Each side's note names its own copy of each image (the TUI's on every release).
    assert len(ours.notes) == len(images), ours.notes
    assert len(theirs.notes) == (len(images) if release >= "2.1.332" else 0), theirs.notes
    if release >= "2.1.332":  # the facts file's "[Image: source: <a temp path>]", last
        for note in theirs.notes:
            assert re.fullmatch(r"\[Image: source: /\S+/images/\d+\.(png|gif)\]", note), note
        assert theirs.kinds[-len(images) :] == ["text"] * len(images)
        assert theirs.texts[-len(images) :] == theirs.notes
    # The TUI puts its text block first, then the images.
    body = ours.kinds
    assert body[: len(images) + 1] == ["text"] + ["image"] * len(images), body


CASES = {
    "one_png_after_text": ("What is in this zebra picture?", [(RED, "image/png")], False),
    "png_and_gif_before_text": (
        "Compare these zebra images.",
        [(RED, "image/png"), (GIF_1X1, "image/gif")],
        True,
    ),
    "image_only": ("", [(RED, "image/png")], True),
    # The label is wrong: both go by the bytes.
    "mislabelled_gif": ("And this zebra one?", [(GIF_1X1, "image/png")], True),
}


@pytest.mark.parametrize(
    "case",
    [
        # One case on each older CI release (CI's time, issue 42); all with --full.
        pytest.param(
            c,
            marks=[pytest.mark.matrix, pytest.mark.between] if c == "one_png_after_text" else [],
        )
        for c in sorted(CASES)
    ],
)
def test_a_stream_json_image_reaches_the_model_as_claude_p_sends_it(
    case: str,
    sandbox: Sandbox,
    fake_api: FakeApiServer,
    oracle_api: FakeApiServer,
    real_claude: str,
) -> None:
    text, pictures, first = CASES[case]
    blocks = [image_block(data, label) for data, label in pictures]
    words = [{"type": "text", "text": text}] if text else []
    content = [*blocks, *words] if first else [*words, *blocks]
    message = user_message(content)
    ours_at, theirs_at = len(fake_api.requests), len(oracle_api.requests)
    mine = [sys.executable, "-m", "claude_print", "--claude-binary", real_claude, *STREAMED]
    code, events, err = run_held(mine, sandbox, fake_api, message)
    assert code == 0, err[-4000:]
    oracle = [real_claude, "-p", *STREAMED]
    their_code, their_events, their_err = run_held(oracle, sandbox, oracle_api, message)
    assert their_code == 0, their_err[-4000:]
    release = claude_release(real_claude)
    expected = [(label_of(data), data) for data, _ in pictures]
    ours = View([r for r in fake_api.requests[ours_at:] if not r["side"]])
    theirs = View([r for r in oracle_api.requests[theirs_at:] if not r["side"]])
    assert_same_images(ours, theirs, release, text, expected, first)
    # The same events, the model's answer the same: claude -p prints no event for the
    # TUI's source note.
    assert [e["type"] for e in events] == [e["type"] for e in their_events], (events, their_events)
    assert {"cli"} in [set(entrypoints(t)) for t in sandbox.transcripts()]
    assert sandbox.leftovers() == []


def label_of(data: bytes) -> str:
    return "image/gif" if data.startswith(b"GIF") else "image/png"


SDK_PROGRAM = """
import asyncio, base64, json, sys
from claude_agent_sdk import ClaudeAgentOptions, query

async def prompt():
    yield json.loads(sys.argv[3])

async def main():
    options = ClaudeAgentOptions(cli_path=sys.argv[1], cwd=sys.argv[2])
    async for message in query(prompt=prompt(), options=options):
        print(type(message).__name__, getattr(message, "subtype", ""), flush=True)

asyncio.run(main())
"""


def run_sdk(
    cli_path: str, sandbox: Sandbox, api: FakeApiServer, message: Dict[str, Any]
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-c", SDK_PROGRAM, cli_path, str(sandbox.project), json.dumps(message)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd=sandbox.project,
        env=sandbox.env(ANTHROPIC_BASE_URL=api.url, CLAUDE_PRINT_TRACE="1"),
        timeout=RUN_TIMEOUT,
    )


@pytest.mark.matrix
def test_an_sdk_image_reaches_the_model_as_the_cli_sends_it(
    sandbox: Sandbox, fake_api: FakeApiServer, oracle_api: FakeApiServer, real_claude: str
) -> None:
    text = "Describe this zebra screenshot."
    message = user_message([image_block(RED, "image/png"), {"type": "text", "text": text}])
    wrapper = sandbox.tmp / "claude-print"
    wrapper.write_text(
        "#!/bin/sh\n"
        f"exec {shlex.quote(sys.executable)} -m claude_print"
        f' --claude-binary {shlex.quote(real_claude)} "$@"\n'
    )
    wrapper.chmod(0o755)
    ours_at, theirs_at = len(fake_api.requests), len(oracle_api.requests)
    mine = run_sdk(str(wrapper), sandbox, fake_api, message)
    assert mine.returncode == 0, mine.stderr.decode()[-4000:]
    theirs = run_sdk(real_claude, sandbox, oracle_api, message)
    assert theirs.returncode == 0, theirs.stderr.decode()[-4000:]
    assert mine.stdout == theirs.stdout  # the same messages, the same result
    assert mine.stdout.decode().splitlines()[-1] == "ResultMessage success"
    release = claude_release(real_claude)
    ours_view = View([r for r in fake_api.requests[ours_at:] if not r["side"]])
    their_view = View([r for r in oracle_api.requests[theirs_at:] if not r["side"]])
    assert_same_images(ours_view, their_view, release, text, [("image/png", RED)], True)
    assert sandbox.leftovers() == []


def test_a_second_turn_s_image_marks_go_on(
    sandbox: Sandbox, fake_api: FakeApiServer, real_claude: str
) -> None:
    """Image ids go on over a session (#1, then #2): both turns get their own image."""
    mine = [sys.executable, "-m", "claude_print", "--claude-binary", real_claude, *STREAMED]
    proc = subprocess.Popen(
        mine,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=sandbox.project,
        env=sandbox.env(CLAUDE_PRINT_TRACE="1"),
    )
    first = user_message([{"type": "text", "text": "First zebra."}, image_block(RED, "image/png")])
    second = user_message(
        [{"type": "text", "text": "Second zebra."}, image_block(GIF_1X1, "image/gif")]
    )
    start = len(fake_api.requests)
    out, err = proc.communicate(
        (json.dumps(first) + "\n" + json.dumps(second) + "\n").encode(), timeout=RUN_TIMEOUT
    )
    assert proc.returncode == 0, err.decode()[-4000:]
    results = [json.loads(line) for line in out.splitlines() if b'"result"' in line]
    assert [r.get("subtype") for r in results if r.get("type") == "result"] == ["success"] * 2
    turns = [r for r in fake_api.requests[start:] if not r["side"] and not r["tool_result"]]
    last = turns[-1]["body"]["messages"]
    pictures = [
        base64.b64decode(b["source"]["data"])
        for m in last
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "image"
    ]
    assert pictures == [RED, GIF_1X1]  # the history keeps the first, the second comes after
    prose = [
        b["text"]
        for m in last
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "text" and "zebra" in b["text"]
    ]
    assert prose == ["First zebra.[Image #1]", "Second zebra.[Image #2]"], prose
    assert sandbox.leftovers() == []


@pytest.mark.matrix
def test_the_user_s_clipboard_tools_are_never_run(
    sandbox: Sandbox, fake_api: FakeApiServer, real_claude: str
) -> None:
    """With a display (X11 and Wayland, so the TUI asks wl-paste first on 2.1.332) and the
    user's own xclip and wl-paste on PATH (stand-ins that log every call), an image turn
    reaches the model and the user's tools are never run: no read, no copy."""
    tools = sandbox.tmp / "user-bin"
    tools.mkdir()
    log = sandbox.tmp / "user-clipboard.log"
    for tool in ("xclip", "wl-paste", "wl-copy", "xsel"):
        script = tools / tool
        script.write_text(f'#!/bin/sh\necho "{tool} $*" >> {shlex.quote(str(log))}\nexit 1\n')
        script.chmod(0o755)
    env = sandbox.env(
        DISPLAY=":99",
        WAYLAND_DISPLAY="wayland-99",
        PATH=f"{tools}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        CLAUDE_PRINT_TRACE="1",
    )
    message = user_message(
        [{"type": "text", "text": "Whose zebra?"}, image_block(RED, "image/png")]
    )
    start = len(fake_api.requests)
    proc = subprocess.run(
        [sys.executable, "-m", "claude_print", "--claude-binary", real_claude, *STREAMED],
        input=json.dumps(message).encode() + b"\n",
        capture_output=True,
        cwd=sandbox.project,
        env=env,
        timeout=RUN_TIMEOUT,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-4000:]
    view = View([r for r in fake_api.requests[start:] if not r["side"]])
    assert view.images == [("image/png", RED)]
    assert not log.exists(), log.read_text()
    assert sandbox.leftovers() == []
