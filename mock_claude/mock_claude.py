#!/usr/bin/env python3
"""mock_claude: a small fake of Claude Code 2.1.197's interactive TUI, for claude-print's tests.

It draws Ink-style screens on its terminal (words placed with cursor moves, never
plain spaces), answers without any network, writes a session transcript shaped
like the real one and runs the Stop / StopFailure / PermissionRequest / PostToolBatch
hooks of its settings. Where it mimics the real TUI, it mimics a recorded PTY capture of
2.1.197 (see README.md); the scenarios below add failure modes the real binary
cannot be made to show on demand. Python 3.8+ standard library only, one file,
so it can be installed by copying.

Command line (like the real TUI; commander-style parsing)::

    mock_claude.py [options] [--] [prompt]
      --version | -v                   print "2.1.197 (Claude Code)" (MOCK_CLAUDE_VERSION)
      --settings FILE-OR-JSON          repeatable; hooks of every one run
      --setting-sources LIST           comma list of user,project,local; '' = none
      --session-id UUID                the session id (else --resume ID, else the newest
                                       transcript here with --continue, else a uuid4)
      --model M  --permission-mode M  --dangerously-skip-permissions
      --allowedTools/--allowed-tools T...      variadic: eats following non-options,
      --disallowedTools/--disallowed-tools T...  a prompt included (as the real one
      --add-dir D...  --mcp-config F...          does); use '=' or '--' before it
      --append-system-prompt S  --system-prompt S  --max-turns N (ignored, as real)
      -r/--resume [ID]  -c/--continue
    -p/--print/--output-format: rejected (exit 1): claude-print must never pass them.
    Unknown options: "error: unknown option '...'" and exit 1. Extra positionals: ignored.

Environment:
    MOCK_CLAUDE_SCENARIO      comma-separated scenarios (below); default "ok"
    MOCK_CLAUDE_PROMPT_LOG    append one line per submitted prompt: base64 of its bytes
    MOCK_CLAUDE_ARGV_LOG      write the argv received (JSON list) at start
    MOCK_CLAUDE_VERSION       version string (default 2.1.197); from 2.1.247 a cost-state
                              record goes into the transcript at exit (the real one's shape),
                              every model priced at MOCK_PRICE, known to claude-print or not
    MOCK_CLAUDE_KEY_GUARD_MS  keys arriving less than this many ms (40) after a new screen
                              (a dialog, the ready REPL, the end of a turn) are dropped
    MOCK_CLAUDE_DROP_LOG      append one line per key the guard dropped
    CLAUDE_CODE_ENTRYPOINT    transcript "entrypoint" (default "cli"), as the real one
    CLAUDE_CODE_CHILD_SESSION non-empty: no transcript is written (measured on 2.1.197)
    ANTHROPIC_MODEL           model when --model is absent (default claude-opus-4-8)
    IS_SANDBOX=1              lets root use bypass mode (else it dies, like the real one)

Scenarios (MOCK_CLAUDE_SCENARIO):
    ok                 default: trust dialog if needed, REPL, answer, Stop hook
    tool               one Bash tool call (touch /tmp/x) -> PermissionRequest, then
                       "Tool turn done."
    tools:N            N tool calls in a row before the answer (max-turns tests)
    api_error          <synthetic> API Error 400 record, StopFailure hook, no Stop
    trust_no_default   trust dialog shown (even if trusted) with "No, exit" highlighted
    api_key_prompt     "Detected a custom API key" dialog, "No (recommended)" highlighted
    onboarding         "Welcome to Claude Code" + login method choices; waits
    onboarding_offline the captured offline welcome: "Unable to connect..." and exit 1
    bypass_warning     show the bypass warning even if settings skip it, and even when
                       bypass mode was not asked for (as if the user's own settings had
                       turned it on); without the scenario it shows like the real one
    unknown_screen     an unrecognised blocking dialog with a caret; waits forever
    die_early          print the root/sudo bypass error and exit 1 before any screen
    crash_mid_turn     exit 1 right after the prompt is submitted, before any hook
    no_screen          never draw anything; sleep until killed
    late_flush         Stop fires before the final assistant record, which lands 300 ms later
                       (a SIGTERM before then loses it: the worst case of the real one)
    hook_twice         Stop fires twice
    malformed_stop     Stop stdin is not JSON; malformed_stop:missing = JSON without the
                       session_id/transcript_path/last_assistant_message fields
    no_transcript      never write a transcript
    slow:SECS          wait SECS before answering
    unknown_probe      also send ESC[?996n and an XTGETTCAP DCS after the first frame
    hang               after submit, never answer (SIGTERM still exits)
    lose_prompt        Enter clears the input box but submits nothing
    drop_enter         ignore the first Enter after a paste (the real TUI under load)
    ignore_paste       bracketed pastes never reach the input box

The answer is "ACK <len(prompt)> <sha256(prompt)[:12]>" like tests/support/fake_api.py, which
also honours the same prompt directives: [[reply:TEXT]], [[error:STATUS]],
[[tool:NAME:COMMAND]], [[sleep:SECS]], and "2+2" -> "The answer is 4.".

Tools: a PermissionRequest hook decides (stdout hookSpecificOutput.decision.behavior, or
exit code 2 = deny); --dangerously-skip-permissions / --allowedTools allow and
--disallowedTools denies without asking; with no decision the permission dialog is drawn
and blocks, as in the real TUI. Allowed tools are not run, only pretended.
"""

from __future__ import annotations

import base64
import codecs
import contextlib
import datetime
import fcntl
import hashlib
import json
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import textwrap
import threading
import time
import tty
import unicodedata
import uuid
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

VERSION = os.environ.get("MOCK_CLAUDE_VERSION", "2.1.197")
# What JavaScript's trimEnd() strips (Python's rstrip() also takes \x1c-\x1f and \x85).
JS_TRAILING_SPACE = "[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+$"
DEFAULT_MODEL = "claude-opus-4-8"
PERMISSION_MODES = ("acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan")
SETTING_SOURCES = ("user", "project", "local")
HOOK_TIMEOUT = 600.0  # documented default for command hooks
SCENARIOS = (
    "ok",
    "tool",
    "tools",
    "api_error",
    "trust_no_default",
    "api_key_prompt",
    "onboarding",
    "onboarding_offline",
    "bypass_warning",
    "unknown_screen",
    "die_early",
    "crash_mid_turn",
    "no_screen",
    "late_flush",
    "hook_twice",
    "malformed_stop",
    "no_transcript",
    "slow",
    "unknown_probe",
    "hang",
    "lose_prompt",
    "drop_enter",
    "ignore_paste",
)
ROOT_BYPASS_ERROR = (
    "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"
)
CARET = "\u276f"  # the selection / prompt caret Claude Code draws
_DIRECTIVE = re.compile(r"\[\[(\w+):(.*?)\]\]", re.S)
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")

# name -> (key, kind, metavar); kinds follow commander: flag, value (always takes the
# next arg, even "-x"), variadic (first arg always, then any not starting with "-"),
# optional (takes the next arg unless it starts with "-").
_OPTIONS: Dict[str, Tuple[str, str, str]] = {
    "--settings": ("settings", "value", "<file-or-json>"),
    "--setting-sources": ("setting_sources", "value", "<sources>"),
    "--session-id": ("session_id", "value", "<uuid>"),
    "--model": ("model", "value", "<model>"),
    "--permission-mode": ("permission_mode", "value", "<mode>"),
    "--dangerously-skip-permissions": ("skip_permissions", "flag", ""),
    "--allowedTools": ("allowed_tools", "variadic", "<tools...>"),
    "--allowed-tools": ("allowed_tools", "variadic", "<tools...>"),
    "--disallowedTools": ("disallowed_tools", "variadic", "<tools...>"),
    "--disallowed-tools": ("disallowed_tools", "variadic", "<tools...>"),
    "--append-system-prompt": ("append_system_prompt", "value", "<prompt>"),
    "--system-prompt": ("system_prompt", "value", "<prompt>"),
    "--add-dir": ("add_dir", "variadic", "<directories...>"),
    "--mcp-config": ("mcp_config", "variadic", "<configs...>"),
    "--resume": ("resume", "optional", "[value]"),
    "-r": ("resume", "optional", "[value]"),
    "--continue": ("continue", "flag", ""),
    "-c": ("continue", "flag", ""),
    "--max-turns": ("max_turns", "value", "<turns>"),
    "--agents": ("agents", "value", "<json>"),
}
_FORBIDDEN = ("-p", "--print", "--output-format")


class ExitNow(Exception):
    """Unwind to main() and exit with this code (after restoring the terminal)."""

    def __init__(self, code: int, message: str = "") -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message


class Options:
    def __init__(self) -> None:
        self.settings: List[str] = []
        self.setting_sources: Optional[List[str]] = None  # None: default (all)
        self.session_id: Optional[str] = None
        self.model: Optional[str] = None
        self.permission_mode = "default"
        self.skip_permissions = False
        self.allowed_tools: List[str] = []
        self.disallowed_tools: List[str] = []
        self.resume: Optional[str] = None
        self.continue_last = False
        self.prompt: Optional[str] = None
        self.version = False


def parse_args(argv: Sequence[str]) -> Options:
    raw: Dict[str, List[str]] = {}
    positionals: List[str] = []
    i, only_positional = 0, False
    while i < len(argv):
        arg = argv[i]
        i += 1
        if only_positional or arg == "-" or not arg.startswith("-"):
            positionals.append(arg)
            continue
        if arg == "--":
            only_positional = True
            continue
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in _FORBIDDEN:
            raise ExitNow(
                1,
                f"mock_claude: {name} is print mode; claude-print must never pass "
                "it to the interactive TUI",
            )
        if name in ("-v", "--version"):
            raw["version"] = ["1"]
            continue
        spec = _OPTIONS.get(name)
        if spec is None:
            raise ExitNow(1, f"error: unknown option '{arg}'")
        key, kind, meta = spec
        values = raw.setdefault(key, [])
        if kind == "flag":
            values.append("1")
        elif eq:
            values.append(inline)
        elif kind == "optional":
            if i < len(argv) and not argv[i].startswith("-"):
                values.append(argv[i])
                i += 1
            else:
                values.append("")
        elif i >= len(argv):
            raise ExitNow(1, f"error: option '{name} {meta}' argument missing")
        else:
            values.append(argv[i])
            i += 1
            while kind == "variadic" and i < len(argv) and not argv[i].startswith("-"):
                values.append(argv[i])
                i += 1
    return build_options(raw, positionals)


def build_options(raw: Dict[str, List[str]], positionals: List[str]) -> Options:
    opts = Options()
    opts.version = "version" in raw
    opts.settings = raw.get("settings", [])
    if "setting_sources" in raw:
        sources = [s.strip() for s in raw["setting_sources"][-1].split(",") if s.strip()]
        for source in sources:
            if source not in SETTING_SOURCES:
                raise ExitNow(
                    1,
                    "Error processing --setting-sources: Invalid setting source: "
                    f"{source}. Valid options are: user, project, local",
                )
        opts.setting_sources = sources
    if "permission_mode" in raw:
        mode = raw["permission_mode"][-1]
        if mode not in PERMISSION_MODES:
            raise ExitNow(
                1,
                f"error: option '--permission-mode <mode>' argument '{mode}' is "
                f"invalid. Allowed choices are {', '.join(PERMISSION_MODES)}.",
            )
        opts.permission_mode = mode
    opts.skip_permissions = "skip_permissions" in raw
    if opts.skip_permissions:
        opts.permission_mode = "bypassPermissions"
    opts.model = raw["model"][-1] if "model" in raw else None
    opts.allowed_tools = split_tools(raw.get("allowed_tools", []))
    opts.disallowed_tools = split_tools(raw.get("disallowed_tools", []))
    resume = raw.get("resume", [""])[-1]
    opts.resume = resume or None
    opts.continue_last = "continue" in raw
    if "session_id" in raw:
        opts.session_id = raw["session_id"][-1]
        if not _UUID.match(opts.session_id):
            raise ExitNow(1, "Error: Invalid session ID. Must be a valid UUID.")
    if "max_turns" in raw and not raw["max_turns"][-1].lstrip("-").isdigit():
        raise ExitNow(1, "error: option '--max-turns <turns>' argument is invalid")
    opts.prompt = positionals[0] if positionals else None  # extras are ignored, as real
    return opts


def split_tools(values: List[str]) -> List[str]:
    return [tool for value in values for tool in re.split(r"[ ,]+", value) if tool]


def parse_scenarios(value: str) -> Dict[str, str]:
    scenarios: Dict[str, str] = {}
    for item in value.split(","):
        name, _, arg = item.strip().partition(":")
        if not name:
            continue
        if name not in SCENARIOS:
            known = ", ".join(SCENARIOS)
            raise ExitNow(1, f"mock_claude: unknown scenario {name!r} (known: {known})")
        numeric = {"slow": float, "tools": int}.get(name)
        try:
            if numeric is not None and arg:
                numeric(arg)
        except ValueError:
            raise ExitNow(1, f"mock_claude: scenario {name} wants a number, not {arg!r}") from None
        scenarios[name] = arg
    return scenarios


# ---------------------------------------------------------------- terminal output

Segment = Tuple[int, str, str]  # (1-based column, text, SGR parameters or "")
Line = List[Segment]


def cells(text: str) -> int:
    """Terminal columns taken by text (wide East Asian chars count 2, combining 0)."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def seg(text: str, col: int = 1, sgr: str = "") -> Segment:
    return (col, text, sgr)


def render_line(line: Line) -> str:
    """Ink never prints the spaces between words: it moves the cursor to each word."""
    out: List[str] = []
    for col, text, sgr in line:
        if sgr:
            out.append(f"\x1b[{sgr}m")
        x, pos = col, 0
        for match in re.finditer(r"[^ ]+", text):
            x += cells(text[pos : match.start()])
            out.append(f"\x1b[{x}G{match.group()}")
            x += cells(match.group())
            pos = match.end()
        if sgr:
            out.append("\x1b[39m\x1b[22m\x1b[27m")
    out.append("\x1b[K")
    return "".join(out)


def hard_wrap(text: str, width: int) -> List[str]:
    """Cut one display line into pieces of at most width cells, keeping every space."""
    pieces, current, used = [], "", 0
    for ch in text:
        w = cells(ch)
        if used + w > width and current:
            pieces.append(current)
            current, used = "", 0
        current += ch
        used += w
    pieces.append(current)
    return pieces


def printable(text: str) -> str:
    return "".join(ch if ch == "\n" or ch >= " " else "?" for ch in text.replace("\t", "    "))


def terminal_width() -> int:
    try:
        packed = fcntl.ioctl(1, termios.TIOCGWINSZ, b"\0" * 8)
        cols = struct.unpack("HHHH", packed)[1]
        return cols if cols >= 20 else 80
    except OSError:
        return 80


class Ui:
    """A log that scrolls up (Ink's <Static>) and a live area redrawn in place."""

    def __init__(self, probes: bool, odd_probes: bool) -> None:
        self.width = terminal_width()
        self.live_height = 0
        self.cursor_row = 0  # row of the live area the cursor is parked on
        self.frames = 0
        self.last_new_screen = 0.0
        self.probes = probes
        self.odd_probes = odd_probes

    def write(self, data: str) -> None:
        buf = data.encode("utf-8", "replace")
        while buf:  # a PTY write can be short
            try:
                n = os.write(1, buf)
            except InterruptedError:
                continue
            buf = buf[n:]

    def rule(self, sgr: str = "37") -> Line:
        return [seg("─" * self.width, 1, sgr)]

    def _erase(self) -> str:
        if not self.live_height:
            return "\r"
        down = self.live_height - 1 - self.cursor_row
        out = f"\x1b[{down}B" if down > 0 else ""
        # the same erase sequence as Ink's log-update
        return out + "\x1b[2K\x1b[1A" * (self.live_height - 1) + "\x1b[2K\x1b[G"

    def show(
        self,
        live: Sequence[Line],
        static: Sequence[Line] = (),
        cursor: Optional[Tuple[int, int]] = None,
        new_screen: bool = False,
    ) -> None:
        out = [self._erase()]
        out.extend(render_line(line) + "\r\n" for line in static)
        out.append("\r\n".join(render_line(line) for line in live))
        self.live_height = len(live)
        self.cursor_row = max(len(live) - 1, 0)
        if cursor is not None and live:
            row, col = cursor
            up = len(live) - 1 - row
            out.append((f"\x1b[{up}A" if up > 0 else "") + f"\x1b[{col}G")
            self.cursor_row = row
        if new_screen:
            # Before the write: a driver cannot see the screen any earlier, so the key
            # guard never depends on how long this process waits after writing.
            self.last_new_screen = time.monotonic()
        self.write("".join(out))
        self.frames += 1
        if self.frames == 1 and self.probes:
            # 2.1.197 asks XTVERSION then DA1 right after its first frame; no reply needed
            self.write("\x1b[>0q\x1b[c")
            if self.odd_probes:
                self.write("\x1b[?996n\x1bP+q436f\x1b\\")


# ---------------------------------------------------------------- terminal input

Event = Tuple[str, str, float]  # (kind: key|text|paste, value, arrival time of its start)
_PASTE_START, _PASTE_END = b"\x1b[200~", b"\x1b[201~"
_CSI_KEYS = {"A": "up", "B": "down", "C": "right", "D": "left", "Z": "shift-tab"}
_C0_KEYS = {
    "\r": "enter",
    "\n": "newline",
    "\t": "tab",
    "\x7f": "backspace",
    "\x08": "backspace",
    "\x03": "ctrl-c",
    "\x07": "ctrl-g",
    "\x04": "ctrl-d",
    "\x1b": "escape",
}


class KeyParser:
    """Bytes from the terminal -> key, text and paste events; pastes may span many chunks."""

    def __init__(self) -> None:
        self.pending = b""
        self.paste: Optional[bytearray] = None
        self.paste_started = 0.0
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, data: bytes, now: float) -> List[Event]:
        events: List[Event] = []
        buf = self.pending + data
        self.pending = b""
        i = 0
        while i < len(buf):
            if self.paste is not None:
                end = buf.find(_PASTE_END, i)
                if end < 0:
                    keep = max(i, len(buf) - len(_PASTE_END) + 1)
                    self.paste += buf[i:keep]
                    self.pending = buf[keep:]
                    return events
                self.paste += buf[i:end]
                text = bytes(self.paste).decode("utf-8", "replace")
                events.append(("paste", text, self.paste_started))
                self.paste = None
                i = end + len(_PASTE_END)
                continue
            b = buf[i]
            if b == 0x1B:
                consumed = self._escape(buf, i, now, events)
                if consumed < 0:
                    self.pending = buf[i:]
                    return events
                i += consumed
                continue
            if b < 0x20 or b == 0x7F:
                events.append(("key", _C0_KEYS.get(chr(b), f"ctrl-{b}"), now))
                i += 1
                continue
            j = i
            while j < len(buf) and buf[j] >= 0x20 and buf[j] != 0x7F and buf[j] != 0x1B:
                j += 1
            text = self.decoder.decode(buf[i:j])
            if text:
                events.append(("text", text, now))
            i = j
        return events

    def _escape(self, buf: bytes, i: int, now: float, events: List[Event]) -> int:
        """Length of the escape sequence at buf[i], -1 if incomplete (wait for more)."""
        if i + 1 >= len(buf):
            return -1
        kind = buf[i + 1]
        if buf.startswith(_PASTE_START, i):
            self.paste = bytearray()
            self.paste_started = now
            return len(_PASTE_START)
        if kind == ord("["):
            j = i + 2
            while j < len(buf) and not 0x40 <= buf[j] <= 0x7E:
                j += 1
            if j >= len(buf):
                return -1 if len(buf) - i < 64 else len(buf) - i
            params, final = buf[i + 2 : j], chr(buf[j])
            if final in _CSI_KEYS and params in (b"", b"1"):
                events.append(("key", _CSI_KEYS[final], now))
            return j + 1 - i  # probe replies (DA1, DECRPM, focus ...) are ignored
        if kind == ord("O"):
            if i + 2 >= len(buf):
                return -1
            final = chr(buf[i + 2])
            if final in _CSI_KEYS:
                events.append(("key", _CSI_KEYS[final], now))
            return 3
        if kind in (ord("P"), ord("]"), ord("_"), ord("^")):  # DCS / OSC / APC / PM strings
            for j in range(i + 2, len(buf)):
                if buf[j] == 0x07 or (buf[j] == 0x1B and j + 1 < len(buf) and buf[j + 1] == 0x5C):
                    return j + (1 if buf[j] == 0x07 else 2) - i
            return -1
        if kind == 0x1B:
            events.append(("key", "escape", now))
            return 1
        events.append(("key", "escape", now))  # a lone Esc (alt+key is not needed here)
        return 1


# ---------------------------------------------------------------- files


def now_iso() -> str:
    stamp = datetime.datetime.now(datetime.timezone.utc)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


def slug(path: str) -> str:
    # every UTF-16 unit that is not [A-Za-z0-9] becomes "-" (astral chars are two units)
    out = "".join(
        ch if ch.isascii() and ch.isalnum() else ("--" if ord(ch) > 0xFFFF else "-") for ch in path
    )
    if len(out) > 200:
        out = out[:200] + "-" + hashlib.sha256(path.encode()).hexdigest()[:8]  # approximation
    return out


def read_json(path: str) -> Dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def write_json(path: str, data: Dict[str, Any]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.mock-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
    os.replace(tmp, path)


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


# USD per million input and output tokens, for every model: the mock's own price table,
# which (like a newer release's) also prices models claude-print's table lacks.
MOCK_PRICE = (5.0, 25.0)


def version_at_least(version: str) -> bool:
    parts = VERSION.split(".")[:3]
    try:
        return tuple(int(p) for p in parts) >= tuple(int(p) for p in version.split("."))
    except ValueError:
        return False


def usage_block(output_tokens: int) -> Dict[str, Any]:
    return {
        "input_tokens": 42,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
        "inference_geo": "",
        "iterations": [],
        "speed": "standard",
    }


class Transcript:
    """Appends records shaped like 2.1.197's ~/.claude/projects/<slug>/<session>.jsonl."""

    def __init__(self, path: str, enabled: bool, common: Dict[str, Any]) -> None:
        self.path = path
        self.enabled = enabled
        self.common = common
        self.last_uuid: Optional[str] = None
        self.count = 0
        self.costs: Dict[str, Dict[str, Any]] = {}  # model -> tokens and costUSD so far
        self.total_cost = 0.0  # summed call by call, as the real one sums

    def raw(self, record: Dict[str, Any]) -> None:
        self.count_cost(record)
        if not self.enabled:
            return
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(dumps(record) + "\n")

    def count_cost(self, record: Dict[str, Any]) -> None:
        message = record.get("message")
        if record.get("type") != "assistant" or not isinstance(message, dict):
            return
        usage, model = message.get("usage"), str(message.get("model", ""))
        if not isinstance(usage, dict) or model == "<synthetic>":
            return
        tokens_in, tokens_out = usage.get("input_tokens") or 0, usage.get("output_tokens") or 0
        cost = tokens_in / 1e6 * MOCK_PRICE[0] + tokens_out / 1e6 * MOCK_PRICE[1]
        entry = self.costs.setdefault(
            model, {"inputTokens": 0, "outputTokens": 0, "webSearchRequests": 0, "costUSD": 0.0}
        )
        entry["inputTokens"] += tokens_in
        entry["outputTokens"] += tokens_out
        entry["costUSD"] += cost
        self.total_cost += cost

    def cost_state(self) -> None:
        """2.1.247+: the session's cost, written when the session is left (SIGTERM too)."""
        if not version_at_least("2.1.247") or not self.count:
            return
        self.raw(
            {
                "type": "cost-state",
                "sessionId": self.common.get("sessionId"),
                "totalCostUSD": self.total_cost,
                "modelUsage": {model: dict(entry) for model, entry in self.costs.items()},
                "hasUnknownModelCost": False,
            }
        )

    def chained(
        self, record: Dict[str, Any], parent: Optional[str] = None, advance: bool = True
    ) -> str:
        rec_uuid = str(record.get("uuid") or uuid.uuid4())
        full: Dict[str, Any] = {
            "parentUuid": parent if parent is not None else self.last_uuid,
            "isSidechain": False,
        }
        full.update(record)
        full["uuid"] = rec_uuid
        full.setdefault("timestamp", now_iso())
        full.update(self.common)
        self.raw(full)
        self.count += 1
        if advance:
            self.last_uuid = rec_uuid
        return rec_uuid


# ---------------------------------------------------------------- hooks


class Hooks:
    def __init__(self, settings: List[Dict[str, Any]], env: Dict[str, str], cwd: str) -> None:
        self.settings = settings
        self.env = env
        self.cwd = cwd

    def commands(self, event: str, tool: Optional[str] = None) -> List[Tuple[str, float]]:
        found: List[Tuple[str, float]] = []
        for settings in self.settings:
            hooks = settings.get("hooks")
            groups = hooks.get(event, []) if isinstance(hooks, dict) else []
            for group in groups if isinstance(groups, list) else []:
                if not isinstance(group, dict):
                    continue
                matcher = str(group.get("matcher") or "*")
                if tool is not None and not matches(matcher, tool):
                    continue
                for hook in group.get("hooks") or []:
                    if isinstance(hook, dict) and hook.get("type", "command") == "command":
                        command = str(hook.get("command", ""))
                        if command and command not in [c for c, _ in found]:  # docs: deduped
                            found.append((command, float(hook.get("timeout") or HOOK_TIMEOUT)))
        return found

    def run(
        self, event: str, payload: str, tool: Optional[str] = None
    ) -> List[Tuple[int, str, str]]:
        """Run every matching command in parallel (as the real one does); (rc, out, err) each."""
        commands = self.commands(event, tool)
        results: List[Tuple[int, str, str]] = [(0, "", "")] * len(commands)

        def one(index: int, command: str, timeout: float) -> None:
            results[index] = run_hook(command, payload, timeout, self.env, self.cwd)

        threads = [
            threading.Thread(target=one, args=(n, c, t), daemon=True)
            for n, (c, t) in enumerate(commands)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():  # join in slices so SIGTERM is still handled
                thread.join(0.05)
        return results


def matches(matcher: str, tool: str) -> bool:
    if matcher in ("*", ""):
        return True
    try:
        return re.fullmatch(matcher, tool) is not None
    except re.error:
        return matcher == tool


def run_hook(
    command: str, payload: str, timeout: float, env: Dict[str, str], cwd: str
) -> Tuple[int, str, str]:
    proc = subprocess.Popen(
        ["/bin/sh", "-c", command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(payload.encode("utf-8", "replace"), timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return (-1, out.decode("utf-8", "replace"), "hook timed out")
    return (proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


def permission_decision(results: List[Tuple[int, str, str]]) -> Optional[Tuple[str, str]]:
    """First decision of any PermissionRequest hook: ("allow"|"deny", message) or None."""
    for rc, out, err in results:
        if rc == 2:
            return ("deny", err.strip() or "Denied by hook")
        try:
            data = json.loads(out)
            decision = data["hookSpecificOutput"]["decision"]
            behavior = decision["behavior"]
        except (ValueError, KeyError, TypeError):
            continue
        if behavior in ("allow", "deny"):
            return (str(behavior), str(decision.get("message") or ""))
    return None


# ---------------------------------------------------------------- the app

MenuRender = Callable[[int], List[Line]]


class App:
    def __init__(self, opts: Options, scenarios: Dict[str, str]) -> None:
        self.opts = opts
        self.sc = scenarios
        self.home = os.path.expanduser("~")
        self.cwd = os.path.realpath(os.getcwd())
        self.sid = opts.session_id or opts.resume or self.last_session() or str(uuid.uuid4())
        self.model = opts.model or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL
        self.entrypoint = os.environ.get("CLAUDE_CODE_ENTRYPOINT") or "cli"
        self.mode = opts.permission_mode
        self.transcript_path = os.path.join(
            self.home, ".claude", "projects", slug(self.cwd), self.sid + ".jsonl"
        )
        enabled = "no_transcript" not in self.sc and not os.environ.get("CLAUDE_CODE_CHILD_SESSION")
        self.transcript = Transcript(
            self.transcript_path,
            enabled,
            {
                "userType": "external",
                "entrypoint": self.entrypoint,
                "cwd": self.cwd,
                "sessionId": self.sid,
                "version": VERSION,
                "gitBranch": "HEAD",
            },
        )
        self.settings = self.load_settings()
        self.hooks = Hooks(self.settings, self.hook_env(), self.cwd)
        self.ui = Ui(probes=True, odd_probes="unknown_probe" in self.sc)
        self.parser = KeyParser()
        self.guard = float(os.environ.get("MOCK_CLAUDE_KEY_GUARD_MS", "40")) / 1000.0
        self.drop_log = os.environ.get("MOCK_CLAUDE_DROP_LOG")  # keys the guard dropped
        self.backlog: List[Event] = []  # typed while busy: exempt from the guard
        self.pieces: List[Tuple[str, str]] = []  # input box: (actual text, shown text)
        self.pastes = 0
        self.paste_pending_enter = False
        self.turns = 0
        self.started = time.time()
        self.session_file = os.path.join(self.home, ".claude", "sessions", f"{os.getpid()}.json")
        self.raw_mode_saved: Optional[List[Any]] = None
        self.modes_on = False

    def last_session(self) -> Optional[str]:
        """--continue: the newest transcript of this folder (its id is the file name)."""
        if not self.opts.continue_last:
            return None
        folder = os.path.join(self.home, ".claude", "projects", slug(self.cwd))
        try:
            names = [n for n in os.listdir(folder) if n.endswith(".jsonl")]
        except OSError:
            return None
        names.sort(key=lambda n: os.path.getmtime(os.path.join(folder, n)))
        return names[-1][: -len(".jsonl")] if names else None

    # -- settings and environment

    def load_settings(self) -> List[Dict[str, Any]]:
        sources = self.opts.setting_sources
        if sources is None:
            sources = list(SETTING_SOURCES)
        paths = {
            "user": os.path.join(self.home, ".claude", "settings.json"),
            "project": os.path.join(self.cwd, ".claude", "settings.json"),
            "local": os.path.join(self.cwd, ".claude", "settings.local.json"),
        }
        loaded = [read_json(paths[s]) for s in SETTING_SOURCES if s in sources]
        for value in self.opts.settings:
            try:
                inline = json.loads(value)
            except ValueError:
                inline = None
            if isinstance(inline, dict):
                loaded.append(inline)
            elif not os.path.isfile(value):
                raise ExitNow(1, f"Error: Settings file not found: {value}")
            else:
                try:
                    with open(value, encoding="utf-8") as f:
                        data = json.load(f)
                except ValueError:
                    raise ExitNow(1, f"Error: Invalid JSON in settings file: {value}") from None
                loaded.append(data if isinstance(data, dict) else {})
        return loaded

    def hook_env(self) -> Dict[str, str]:
        # what 2.1.197 gave its hooks (captured with `env` in a hook)
        env = dict(os.environ)
        env.update(
            {
                "CLAUDECODE": "1",
                "CLAUDE_CODE_CHILD_SESSION": "1",
                "CLAUDE_CODE_ENTRYPOINT": self.entrypoint,
                "CLAUDE_CODE_SESSION_ID": self.sid,
                "CLAUDE_EFFORT": "high",
                "CLAUDE_PROJECT_DIR": self.cwd,
            }
        )
        return env

    def setting_true(self, key: str) -> bool:
        return any(s.get(key) is True for s in self.settings)

    # -- terminal

    def enter_raw(self) -> None:
        self.raw_mode_saved = termios.tcgetattr(0)
        tty.setraw(0)

    def enable_modes(self) -> None:
        # measured order: modes first, then the first frame, then the probes
        self.modes_on = True
        self.ui.write("\x1b[?25l\x1b[?2004h\x1b[?1004h\x1b[?2031h")

    def restore_terminal(self) -> None:
        """Idempotent: undo the modes (as the real one does on exit) and the raw mode."""
        if self.modes_on:
            self.modes_on = False
            self.ui.write("\x1b[?1004l\x1b[?2031l\x1b[?2004l\x1b[?25h\x1b]0;\x07")
        if self.raw_mode_saved is not None:
            with contextlib.suppress(termios.error):
                termios.tcsetattr(0, termios.TCSADRAIN, self.raw_mode_saved)
            self.raw_mode_saved = None

    def read_chunk(self, timeout: Optional[float]) -> List[Event]:
        """Events of one read() from the terminal, minus keys that came too soon."""
        if self.backlog:
            events, self.backlog = self.backlog, []
            return events
        ready, _, _ = select.select([0], [], [], timeout)
        if not ready:
            return []
        try:
            data = os.read(0, 65536)
        except OSError:
            data = b""
        if not data:
            raise ExitNow(129)  # terminal gone: like a hangup
        now = time.monotonic()
        events = self.parser.feed(data, now)
        # keys sent before the screen settled are lost; drivers must wait for quiet
        settled = self.ui.last_new_screen + self.guard
        lost = [e for e in events if e[2] < settled]
        if lost and self.drop_log:
            with open(self.drop_log, "a", encoding="utf-8") as f:
                for kind, value, when in lost:
                    ms = (when - self.ui.last_new_screen) * 1000
                    f.write(f"{kind} {value[:40]!r} {ms:.0f} ms after a new screen\n")
        return [e for e in events if e[2] >= settled]

    def drain_backlog(self) -> None:
        while select.select([0], [], [], 0)[0]:
            try:
                data = os.read(0, 65536)
            except OSError:
                return
            if not data:
                return
            self.backlog.extend(self.parser.feed(data, time.monotonic()))

    def wait_forever(self) -> None:
        while True:
            self.read_chunk(None)

    # -- screens

    def menu(self, render: MenuRender, count: int, selected: int) -> int:
        self.ui.show(render(selected), new_screen=True)
        while True:
            start = selected
            for kind, value, _ in self.read_chunk(None):
                if kind != "key":
                    continue
                if value == "up":
                    selected = max(0, selected - 1)
                elif value == "down":
                    selected = min(count - 1, selected + 1)
                elif value == "enter":
                    # measured: an arrow and Enter in one read act on the old selection
                    return start
            if selected != start:
                self.ui.show(render(selected))

    def items(self, labels: Sequence[str], selected: int, indent: int = 2) -> List[Line]:
        lines: List[Line] = []
        for n, label in enumerate(labels):
            line: Line = []
            if n == selected:
                line.append(seg(CARET, indent, "97"))
            line.append(seg(f"{n + 1}.", indent + 2, "37"))
            line.append(seg(label, indent + 5, "97" if n == selected else ""))
            lines.append(line)
        return lines

    def paragraph(self, text: str, col: int, sgr: str = "") -> List[Line]:
        width = max(self.ui.width - col - 1, 20)
        return [[seg(part, col, sgr)] for part in textwrap.wrap(text, width)]

    def trust_screen(self) -> None:
        labels = ["Yes, I trust this folder", "No, exit"]

        def render(sel: int) -> List[Line]:
            return [
                self.ui.rule("93"),
                [seg("Accessing workspace:", 2, "93;1")],
                [],
                [seg(self.cwd, 2, "1")],
                [],
                *self.paragraph(
                    "Quick safety check: Is this a project you created or one you trust? "
                    "(Like your own code, a well-known open source project, or work from "
                    "your team). If not, take a moment to review what's in this folder "
                    "first.",
                    2,
                ),
                [],
                [seg("Claude Code'll be able to read, edit, and execute files here.", 2)],
                [],
                [seg("Security guide", 2, "37")],
                [],
                *self.items(labels, sel),
                [],
                [seg("Enter to confirm · Esc to cancel", 2, "37")],
            ]

        choice = self.menu(render, 2, 1 if "trust_no_default" in self.sc else 0)
        if choice == 1:
            raise ExitNow(1)
        path = os.path.join(self.home, ".claude.json")
        config = read_json(path)
        projects = config.setdefault("projects", {})
        projects.setdefault(self.cwd, {})["hasTrustDialogAccepted"] = True
        write_json(path, config)

    def trusted(self) -> bool:
        config = read_json(os.path.join(self.home, ".claude.json"))
        project = config.get("projects", {}).get(self.cwd, {})
        return isinstance(project, dict) and project.get("hasTrustDialogAccepted") is True

    def api_key_screen(self) -> None:
        key = os.environ.get("ANTHROPIC_API_KEY", "sk-ant-mock-key")
        labels = ["Yes", "No (recommended)"]

        def render(sel: int) -> List[Line]:
            return [
                self.ui.rule("93"),
                [seg("Detected a custom API key in your environment", 3, "93;1")],
                [],
                [seg("ANTHROPIC_API_KEY", 3, "1"), seg(":", 20), seg(f"sk-ant-...{key[-20:]}", 22)],
                [],
                [seg("Do you want to use this API key?", 3)],
                [],
                *self.items(labels, sel, indent=3),
                [],
                [seg("Enter to confirm · Esc to cancel", 3, "37")],
            ]

        choice = self.menu(render, 2, 1)
        path = os.path.join(self.home, ".claude.json")
        config = read_json(path)
        responses = config.setdefault("customApiKeyResponses", {"approved": [], "rejected": []})
        responses.setdefault("approved" if choice == 0 else "rejected", []).append(key[-20:])
        write_json(path, config)
        if choice == 1:
            self.onboarding_screen()  # unverified: without the key there is no credential

    def bypass_screen(self) -> None:
        labels = ["No, exit", "Yes, I accept"]

        def render(sel: int) -> List[Line]:
            return [
                self.ui.rule("31"),
                [seg("WARNING: Claude Code running in Bypass Permissions mode", 3, "31;1")],
                [],
                *self.paragraph(
                    "In Bypass Permissions mode, Claude Code will not ask for your approval "
                    "before running potentially dangerous commands.",
                    3,
                ),
                *self.paragraph(
                    "This mode should only be used in a sandboxed container/VM that has "
                    "restricted internet access and can easily be restored if damaged.",
                    3,
                ),
                [],
                *self.paragraph(
                    "By proceeding, you accept all responsibility for actions taken while "
                    "running in Bypass Permissions mode.",
                    3,
                ),
                [],
                [seg("https://code.claude.com/docs/en/security", 3)],
                [],
                *self.items(labels, sel, indent=3),
                [],
                [seg("Enter to confirm · Esc to cancel", 3, "37")],
            ]

        if self.menu(render, 2, 0) == 0:
            raise ExitNow(1)
        # measured: accepting writes this into the user settings
        path = os.path.join(self.home, ".claude", "settings.json")
        user = read_json(path)
        user["skipDangerousModePermissionPrompt"] = True
        write_json(path, user)

    def welcome_lines(self) -> List[Line]:
        return [
            [seg("Welcome to Claude Code", 1, "31"), seg(f"v{VERSION}", 24, "37")],
            [seg("." * 58, 1)],
            [],
        ]

    def onboarding_screen(self) -> None:
        # login choices as remembered from connected machines: not captured here
        labels = [
            "Claude account with subscription · Pro, Max, Team, or Enterprise",
            "Anthropic Console account · API usage billing",
            "3rd-party platform · Amazon Bedrock, Microsoft Foundry, or Vertex AI",
        ]
        intro = self.paragraph(
            "Claude Code can be used with your Claude subscription or billed based on API usage "
            "through your Console account.",
            2,
        )
        head = [*self.welcome_lines(), *intro, [], [seg("Select login method:", 2)], []]
        self.menu(lambda sel: [*head, *self.items(labels, sel)], 3, 0)
        self.wait_forever()

    def onboarding_offline_screen(self) -> None:
        # captured: no ~/.claude.json and no internet -> this, then exit 1 about 0.3 s later
        self.ui.show(
            [
                *self.welcome_lines(),
                [seg("Unable to connect to Anthropic services", 2, "95")],
                [],
                [seg("Failed to connect to api.anthropic.com: ENOTFOUND", 2, "95")],
                [],
                [seg("Please check your internet connection and network settings.", 2)],
                [],
                [
                    seg(
                        "Note: Claude Code might not be available in your country. Check supported "
                        "countries at",
                        2,
                    )
                ],
                [seg("https://anthropic.com/supported-countries", 2)],
            ],
            new_screen=True,
        )
        time.sleep(0.3)
        raise ExitNow(1)

    def unknown_screen(self) -> None:
        labels = ["Continue", "Something else entirely"]

        def render(sel: int) -> List[Line]:
            return [
                self.ui.rule("94"),
                [seg("A brand-new dialog this mock's driver cannot know", 2, "94;1")],
                [],
                [seg("Claude Code has a question the driver has never seen.", 2)],
                [],
                *self.items(labels, sel),
                [],
                [seg("Enter to confirm · Esc to cancel", 2, "37")],
            ]

        while True:  # blocking: Enter just draws it again
            self.menu(render, 2, 0)

    # -- REPL

    def footer(self, busy: bool) -> Line:
        if busy:
            return [seg("esc to interrupt · ← for agents", 3, "37")]
        text = {
            "acceptEdits": "⏵⏵ accept edits on (shift+tab to cycle)",
            "plan": "⏸ plan mode on (shift+tab to cycle)",
            "auto": "⏵⏵ auto mode on (shift+tab to cycle)",
            "dontAsk": "⏵⏵ don't ask on (shift+tab to cycle)",
            "bypassPermissions": "⏵⏵ bypass permissions on (shift+tab to cycle)",
        }.get(self.mode, "? for shortcuts")  # measured: only default mode says "?"
        line = [seg(text + " · ← for agents", 3, "37")]
        right = "● high · /effort"
        if self.mode != "bypassPermissions" and self.ui.width - 17 > cells(text) + 20:
            line.append(seg(right, self.ui.width - 17, "37"))
        return line

    def input_lines(self) -> Tuple[List[Line], Tuple[int, int]]:
        shown = printable("".join(s for _, s in self.pieces)).split("\n")
        lines: List[Line] = []
        for n, text in enumerate(shown):
            prefix = (
                CARET + "\u00a0" if n == 0 else "  "
            )  # measured: a no-break space after the caret
            lines.append([seg(prefix + text, 1)])
        last = lines[-1]
        col = 1 + cells(last[0][1])
        last.append(seg(" ", col, "7"))  # the inverse-video block cursor
        return lines, (len(lines) - 1, col)

    def live_repl(self, busy: bool, spinner: str = "") -> Tuple[List[Line], Tuple[int, int]]:
        top: List[Line] = [[seg("✻", 1, "31"), seg(spinner, 3, "33")], []] if busy else []
        box, (row, col) = self.input_lines()
        live = [*top, self.ui.rule(), *box, self.ui.rule(), self.footer(busy)]
        return live, (len(top) + 1 + row, col)

    def draw_repl(
        self,
        static: Sequence[Line] = (),
        busy: bool = False,
        spinner: str = "",
        new_screen: bool = False,
    ) -> None:
        live, cursor = self.live_repl(busy, spinner)
        self.ui.show(live, static=static, cursor=cursor, new_screen=new_screen)

    def banner(self) -> List[Line]:
        width = min(self.ui.width, 104)
        title = f"Claude Code v{VERSION}"
        top = "╭───" + " " + title + " " + "─" * max(width - len(title) - 6, 1) + "╮"
        inner = width - 2

        def boxed(text: str, sgr: str = "") -> Line:
            return [seg("│", 1, "31"), seg(text, 3, sgr), seg("│", inner + 2, "31")]

        model = self.model.replace("claude-", "").replace("-", " ").title()
        return [
            [seg(top, 1, "31")],
            boxed(""),
            boxed("Welcome back!", "1"),
            boxed(""),
            boxed(f"{model} · API Usage Billing", "37"),
            boxed(self.cwd[: inner - 3], "37"),
            [seg("╰" + "─" * inner + "╯", 1, "31")],
            [],
        ]

    def set_status(self, status: str) -> None:
        now_ms = int(time.time() * 1000)
        with contextlib.suppress(OSError):
            write_json(
                self.session_file,
                {
                    "pid": os.getpid(),
                    "sessionId": self.sid,
                    "cwd": self.cwd,
                    "startedAt": int(self.started * 1000),
                    "version": VERSION,
                    "kind": "interactive",
                    "entrypoint": self.entrypoint,
                    "status": status,
                    "updatedAt": now_ms,
                    "statusUpdatedAt": now_ms,
                },
            )

    def repl(self) -> None:
        self.ui.write("\x1b]0;✳ Claude Code\x07")
        self.draw_repl(static=self.banner(), new_screen=True)
        self.set_status("idle")
        auto_at = time.monotonic() + 0.2 if self.opts.prompt is not None else None
        while True:
            timeout = None if auto_at is None else max(auto_at - time.monotonic(), 0.0)
            events = self.read_chunk(timeout)
            if auto_at is not None and time.monotonic() >= auto_at:
                auto_at = None
                prompt = self.opts.prompt or ""
                # argv prompts arrive byte-exact: tabs and trailing spaces kept
                self.submit(prompt, os.fsencode(prompt), printable(prompt))
            for kind, value, _ in events:
                self.handle_input(kind, value)

    def handle_input(self, kind: str, value: str) -> None:
        if kind == "paste":
            if "ignore_paste" in self.sc:
                return
            self.paste_pending_enter = "drop_enter" in self.sc
            text = value.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
            shown = text
            if len(text) > 800:
                self.pastes += 1
                shown = f"[Pasted text #{self.pastes} +{text.count(chr(10))} lines]"
            self.pieces.append((text, shown))
        elif kind == "text":
            self.pieces.append((value, value))
        elif value == "newline":
            self.pieces.append(("\n", "\n"))
        elif value == "ctrl-g":
            text = self.external_editor("".join(a for a, _ in self.pieces))
            shown = text
            if len(text) > 10000:  # drawn cut, as the real box does; sent whole
                self.pastes += 1
                cut = text[500:-500]
                marker = f"[...Truncated text #{self.pastes} +{cut.count(chr(10))} lines...]"
                shown = text[:500] + marker + text[-500:]
            self.pieces = [(text, shown)] if text else []
        elif value == "backspace" and self.pieces:
            actual, shown = self.pieces.pop()
            if actual == shown and len(actual) > 1:
                self.pieces.append((actual[:-1], shown[:-1]))
        elif value == "enter" and self.paste_pending_enter:
            self.paste_pending_enter = False
            return  # lost, as an Enter racing a big paste can be in the real TUI
        elif value == "enter":
            prompt = "".join(a for a, _ in self.pieces)
            shown = "".join(s for _, s in self.pieces)
            self.pieces = []
            if prompt.strip() == "/exit":
                self.ui.show([])
                self.restore_terminal()
                self.ui.write(
                    "\x1b[2mResume this session with:\x1b[22m\r\n"
                    f"\x1b[2mclaude --resume {self.sid}\x1b[22m\r\n"
                )
                raise ExitNow(0)
            if prompt.strip():
                self.submit(prompt, prompt.encode("utf-8", "replace"), shown)
                return
        else:
            return  # tab, escape, arrows ... do nothing in the input box
        self.draw_repl()

    def external_editor(self, text: str) -> str:
        """Ctrl+G as measured on 2.1.197-2.1.330: $VISUAL or $EDITOR runs on a temp file
        holding the box's text (the path is its last argument); the file's text comes back
        with its trailing whitespace trimmed (JavaScript's trimEnd), composed (NFC) up to
        2.1.269 and, from 2.1.277 on,
        its line breaks made LF and its other control characters dropped; tabs and a
        leading "!" stay as they are (measured on 2.1.197, 2.1.270, 2.1.331)."""
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
        if not editor:
            return text
        folder = tempfile.mkdtemp(prefix="mock-claude-editor-")
        path = os.path.join(folder, "claude-prompt.md")
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            subprocess.run(["/bin/sh", "-c", editor + ' "$1"', "sh", path], check=False)
            with open(path, encoding="utf-8", errors="replace", newline="") as f:
                loaded = f.read()
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        if not version_at_least("2.1.270"):
            loaded = unicodedata.normalize("NFC", loaded)
        if version_at_least("2.1.277"):
            loaded = re.sub("\r\n|[\r\v\f\x85\u2028\u2029]", "\n", loaded)
            loaded = re.sub("[\x00-\x08\x0b-\x1f\x7f-\x84\x86-\x9f\ufeff]", "", loaded)
        return re.sub(JS_TRAILING_SPACE, "", loaded)

    # -- a turn

    def submit(self, prompt: str, prompt_bytes: bytes, shown: str) -> None:
        if "lose_prompt" in self.sc:
            return  # keys lost on the way: nothing is submitted, nothing is logged
        log = os.environ.get("MOCK_CLAUDE_PROMPT_LOG")
        if log:
            with open(log, "a", encoding="ascii") as f:
                f.write(base64.b64encode(prompt_bytes).decode("ascii") + "\n")
        prompt = prompt_bytes.decode("utf-8", "replace")
        if self.prompt_blocked(prompt):
            self.draw_repl()
            return
        wrapped = [
            piece
            for text in printable(shown[:20000]).split("\n")
            for piece in hard_wrap(text, self.ui.width - 2)
        ]
        # the mock keeps the echo short: a 100 KB prompt would scroll for ages
        echo: List[Line] = [
            [seg((CARET + " " if n == 0 else "  ") + piece, 1, "97")]
            for n, piece in enumerate(wrapped[:12])
        ]
        if len(wrapped) > 12:
            echo.append([seg("  …", 1, "37")])
        echo.append([])
        self.draw_repl(static=echo, busy=True, spinner="Cogitating…")
        self.set_status("busy")
        self.turn(prompt)
        self.drain_backlog()
        self.set_status("idle")
        self.draw_repl(new_screen=True)

    def prompt_blocked(self, prompt: str) -> bool:
        """UserPromptSubmit, as the real one runs it: the payload carries the prompt about
        to be sent (the `mangle_prompt` scenario changes it first, as a box that lost
        part of it would); a hook that blocks stops it before any request."""
        if "mangle_prompt" in self.sc:
            prompt = prompt[: len(prompt) // 2]
        payload = self.base_payload(str(uuid.uuid4()), "UserPromptSubmit")
        payload["prompt"] = prompt
        for rc, out, _ in self.hooks.run("UserPromptSubmit", dumps(payload)):
            try:
                decision = json.loads(out).get("decision") if rc == 0 and out.strip() else None
            except (ValueError, AttributeError):
                decision = None
            if rc == 2 or decision == "block":
                return True
        return False

    def base_payload(self, prompt_id: str, event: str) -> Dict[str, Any]:
        return {
            "session_id": self.sid,
            "transcript_path": self.transcript_path,
            "cwd": self.cwd,
            "prompt_id": prompt_id,
            "permission_mode": self.mode,
            "effort": {"level": "high"},
            "hook_event_name": event,
        }

    def turn(self, prompt: str) -> None:
        started = time.monotonic()
        tr = self.transcript
        if self.turns == 0:
            tr.raw({"type": "mode", "mode": "normal", "sessionId": self.sid})
            tr.raw({"type": "permission-mode", "permissionMode": self.mode, "sessionId": self.sid})
        self.turns += 1
        prompt_id = str(uuid.uuid4())
        user_uuid = str(uuid.uuid4())
        stamp = now_iso()
        tr.raw(
            {
                "type": "file-history-snapshot",
                "messageId": user_uuid,
                "snapshot": {"messageId": user_uuid, "trackedFileBackups": {}, "timestamp": stamp},
                "isSnapshotUpdate": False,
            }
        )
        tr.chained(
            {
                "promptId": prompt_id,
                "type": "user",
                "message": {"role": "user", "content": prompt},
                "uuid": user_uuid,
                "timestamp": stamp,
                "permissionMode": self.mode,
                "origin": {"kind": "human"},
                "promptSource": "typed",
            }
        )
        self.history(prompt)
        if "crash_mid_turn" in self.sc:
            raise ExitNow(1, "mock_claude: crash_mid_turn: dying in the middle of a turn")
        directives = dict(_DIRECTIVE.findall(prompt))
        if "hang" in self.sc:
            self.wait_forever()
        delay = float(self.sc.get("slow") or 0) + float(directives.get("sleep") or 0)
        if delay:
            time.sleep(delay)
        if "api_error" in self.sc or "error" in directives:
            self.api_error(prompt, prompt_id, int(directives.get("error") or 400), started)
            return
        tool_calls = self.planned_tools(directives)
        for name, command in tool_calls:
            batch = [self.tool_call(name, command, prompt_id)]
            reason = self.post_tool_batch(prompt_id, batch)
            if reason is not None:
                # measured (2.1.197): the turn ends here; no Stop hook fires
                self.transcript.chained(
                    {
                        "attachment": {
                            "type": "hook_stopped_continuation",
                            "message": reason,
                            "hookName": "PostToolBatch",
                            "hookEvent": "PostToolBatch",
                        },
                        "type": "attachment",
                    }
                )
                self.finish_turn(prompt, started)
                return
        if tool_calls:
            answer = "Tool turn done."
        elif "reply" in directives:
            answer = directives["reply"]
        elif "2+2" in prompt:
            answer = "The answer is 4."
        else:
            digest = hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()[:12]
            answer = f"ACK {len(prompt)} {digest}"
        record: Dict[str, Any] = {
            "message": {
                "id": "msg_" + uuid.uuid4().hex[:24],
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [{"type": "text", "text": answer}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": usage_block(max(1, len(answer) // 4)),
                "stop_details": None,
            },
            "type": "assistant",
        }
        answer_lines = self.bullet(answer, "97")
        self.draw_repl(static=answer_lines, busy=True, spinner="Running stop hook…")
        late = "late_flush" in self.sc
        if not late:
            tr.chained(record)
        fired = time.monotonic()
        ran = self.fire_stop(prompt_id, answer)
        if late:
            time.sleep(max(0.0, fired + 0.3 - time.monotonic()))
            tr.chained(record)
        if ran:
            tr.chained(
                {
                    "type": "system",
                    "subtype": "stop_hook_summary",
                    "hookCount": len(ran),
                    "hookInfos": [{"command": c, "durationMs": 1} for c in ran],
                    "hookErrors": [],
                    "hookAdditionalContext": [],
                    "preventedContinuation": False,
                    "stopReason": "",
                    "hasOutput": False,
                    "level": "suggestion",
                    "toolUseID": str(uuid.uuid4()),
                }
            )
        self.finish_turn(prompt, started)

    def finish_turn(self, prompt: str, started: float) -> None:
        tr = self.transcript
        seconds = time.monotonic() - started
        tr.chained(
            {
                "type": "system",
                "subtype": "turn_duration",
                "durationMs": int(seconds * 1000),
                "messageCount": tr.count,
                "isMeta": False,
            }
        )
        tr.raw(
            {
                "type": "last-prompt",
                "lastPrompt": prompt,
                "leafUuid": tr.last_uuid,
                "sessionId": self.sid,
            }
        )
        self.draw_repl(
            static=[[seg("✻", 1, "37"), seg(f"Cogitated for {int(seconds)}s", 3, "37")], []],
            busy=True,
            spinner="Cogitating…",
        )

    def bullet(self, text: str, sgr: str) -> List[Line]:
        lines: List[Line] = []
        for n, part in enumerate(printable(text).split("\n")):
            for m, piece in enumerate(hard_wrap(part, self.ui.width - 2)):
                lines.append([seg("●", 1, sgr), seg(piece, 3)] if n == m == 0 else [seg(piece, 3)])
        return [*lines, []]

    def fire_stop(self, prompt_id: str, answer: str) -> List[str]:
        payload = self.base_payload(prompt_id, "Stop")
        payload.update(
            {
                "stop_hook_active": False,
                "last_assistant_message": answer,
                "background_tasks": [],
                "session_crons": [],
            }
        )
        text = dumps(payload)
        if "malformed_stop" in self.sc:
            if self.sc["malformed_stop"] == "missing":
                for key in ("session_id", "transcript_path", "last_assistant_message"):
                    payload.pop(key)
                text = dumps(payload)
            else:
                text = "Stop hook payload that is not JSON {"
        for _ in range(2 if "hook_twice" in self.sc else 1):
            self.hooks.run("Stop", text)
        return [c for c, _ in self.hooks.commands("Stop")]

    def api_error(self, prompt: str, prompt_id: str, status: int, started: float) -> None:
        text = f"API Error: {status} fake {status} failure"
        zero = {
            "input_tokens": 0,
            "output_tokens": 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": None,
            "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
            "inference_geo": None,
            "iterations": None,
            "speed": None,
        }
        self.transcript.chained(
            {
                "type": "assistant",
                "timestamp": now_iso(),
                "message": {
                    "id": str(uuid.uuid4()),
                    "container": None,
                    "model": "<synthetic>",
                    "role": "assistant",
                    "stop_details": None,
                    "stop_reason": "stop_sequence",
                    "stop_sequence": "",
                    "type": "message",
                    "usage": zero,
                    "content": [{"type": "text", "text": text}],
                    "context_management": None,
                },
                "requestId": "req_mock",
                "error": "unknown",
                "isApiErrorMessage": True,
                "apiErrorStatus": status,
            }
        )
        self.draw_repl(static=self.bullet(text, "31"), busy=True, spinner="Cogitating…")
        payload = self.base_payload(prompt_id, "StopFailure")
        del payload["permission_mode"]  # measured: StopFailure has none
        payload.update({"error": "unknown", "last_assistant_message": text})
        self.hooks.run("StopFailure", dumps(payload))
        self.finish_turn(prompt, started)

    def planned_tools(self, directives: Dict[str, str]) -> List[Tuple[str, str]]:
        if "tool" in directives:
            name, _, command = directives["tool"].partition(":")
            return [(name, command)]
        if "tools" in self.sc:
            count = int(self.sc["tools"] or 1)
            return [("Bash", f"touch /tmp/x{n + 1}") for n in range(count)]
        if "tool" in self.sc:
            return [("Bash", "touch /tmp/x")]
        return []

    def tool_allowed_by_flags(self, name: str) -> Optional[bool]:
        def listed(tools: List[str]) -> bool:
            return any(t == name or t.startswith(name + "(") for t in tools)

        if listed(self.opts.disallowed_tools):
            return False
        if self.mode == "bypassPermissions" or listed(self.opts.allowed_tools):
            return True
        return None

    def post_tool_batch(self, prompt_id: str, calls: List[Dict[str, Any]]) -> Optional[str]:
        """PostToolBatch hooks; the stopReason when one answers {"continue": false}."""
        payload = self.base_payload(prompt_id, "PostToolBatch")
        payload["tool_calls"] = calls
        for _, out, _ in self.hooks.run("PostToolBatch", dumps(payload)):
            try:
                answer = json.loads(out)
            except ValueError:
                continue
            if isinstance(answer, dict) and answer.get("continue") is False:
                return str(answer.get("stopReason") or "")
        return None

    def tool_call(self, name: str, command: str, prompt_id: str) -> Dict[str, Any]:
        """One tool call and its result; the call as PostToolBatch reports it."""
        tr = self.transcript
        tool_id = "toolu_" + uuid.uuid4().hex[:24]
        tool_input = {"command": command, "description": "Run the requested command"}
        assistant_uuid = tr.chained(
            {
                "message": {
                    "id": "msg_" + uuid.uuid4().hex[:24],
                    "type": "message",
                    "role": "assistant",
                    "model": self.model,
                    "content": [
                        {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
                    ],
                    "stop_reason": "tool_use",
                    "stop_sequence": None,
                    "usage": usage_block(12),
                    "stop_details": None,
                },
                "type": "assistant",
            }
        )
        head: Line = [seg("●", 1, "37"), seg(f"{name}({command})", 3, "1")]
        self.draw_repl(static=[head], busy=True, spinner="Cogitating…")
        decision: Optional[Tuple[str, str]] = None
        by_hook = False
        flags = self.tool_allowed_by_flags(name)
        if flags is not None:
            decision = (
                ("allow", "") if flags else ("deny", f"Permission to use {name} has been denied.")
            )
        else:
            payload = self.base_payload(prompt_id, "PermissionRequest")
            dirs = sorted({os.path.dirname(w) for w in command.split() if w.startswith("/")})
            payload.update(
                {
                    "tool_name": name,
                    "tool_input": tool_input,
                    "permission_suggestions": (
                        [{"type": "addDirectories", "directories": dirs, "destination": "session"}]
                        if dirs
                        else []
                    )
                    + [{"type": "setMode", "mode": "acceptEdits", "destination": "session"}],
                }
            )
            decision = permission_decision(
                self.hooks.run("PermissionRequest", dumps(payload), tool=name)
            )
            by_hook = decision is not None
            if decision is None:
                decision = self.permission_dialog(name, command)
        behavior, message = decision
        if by_hook:
            tr.chained(
                {
                    "attachment": {
                        "type": "hook_permission_decision",
                        "decision": behavior,
                        "toolUseID": tool_id,
                        "hookEvent": "PermissionRequest",
                    },
                    "type": "attachment",
                },
                parent=assistant_uuid,
                advance=False,
            )
        if behavior == "deny":
            message = message or "Permission denied"
            result: Dict[str, Any] = {
                "type": "tool_result",
                "content": message,
                "is_error": True,
                "tool_use_id": tool_id,
            }
            tool_use_result: Any = f"Error: {message}"
            shown = [[seg("⎿", 3, "37"), seg(f"Error: {message}", 6, "31")]]
            if by_hook:
                shown.append([seg("⎿", 3, "37"), seg("Denied by PermissionRequest hook", 6, "37")])
        else:
            result = {
                "tool_use_id": tool_id,
                "type": "tool_result",
                "content": "",
                "is_error": False,
            }
            tool_use_result = {
                "stdout": "",
                "stderr": "",
                "interrupted": False,
                "isImage": False,
                "noOutputExpected": False,
            }
            shown = [[seg("⎿", 3, "37"), seg("(No output)", 6, "37")]]
        tr.chained(
            {
                "promptId": prompt_id,
                "type": "user",
                "message": {"role": "user", "content": [result]},
                "toolUseResult": tool_use_result,
                "sourceToolAssistantUUID": assistant_uuid,
            },
            parent=assistant_uuid,
        )
        self.draw_repl(static=[*shown, []], busy=True, spinner="Cogitating…")
        return {
            "tool_name": name,
            "tool_input": tool_input,
            "tool_use_id": tool_id,
            "tool_response": result["content"],
        }

    def permission_dialog(self, name: str, command: str) -> Tuple[str, str]:
        """No hook decided: the TUI asks the user and blocks until answered (as measured)."""
        folder = os.path.basename(os.path.dirname(command.split()[-1])) if command else ""
        labels = [
            "Yes",
            f"Yes, and always allow access to {folder or '.'}/ from this project",
            "No",
        ]

        def render(sel: int) -> List[Line]:
            return [
                self.ui.rule("97"),
                [seg(f"{name} command", 2, "97;1")],
                [],
                [seg(command, 4)],
                [seg("Run the requested command", 4, "37")],
                [],
                [seg("Do you want to proceed?", 2)],
                *self.items(labels, sel),
                [],
                [seg("Esc to cancel · Tab to amend · ctrl+e to explain", 2, "37")],
            ]

        choice = self.menu(render, 3, 0)
        if choice == 2:
            return ("deny", "The user doesn't want to proceed with this tool use.")
        return ("allow", "")

    def history(self, prompt: str) -> None:
        path = os.path.join(self.home, ".claude", "history.jsonl")
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "a", encoding="utf-8") as f:
                f.write(
                    dumps(
                        {
                            "display": prompt,
                            "pastedContents": {},
                            "timestamp": int(time.time() * 1000),
                            "project": self.cwd,
                            "sessionId": self.sid,
                        }
                    )
                    + "\n"
                )
        except OSError:
            pass

    # -- the whole run

    def run(self) -> None:
        if "die_early" in self.sc:
            raise ExitNow(1, f"\x1b[0m\x1b[31m{ROOT_BYPASS_ERROR}\x1b[0m")
        if (
            self.mode == "bypassPermissions"
            and os.geteuid() == 0
            and os.environ.get("IS_SANDBOX") != "1"
        ):
            raise ExitNow(1, f"\x1b[0m\x1b[31m{ROOT_BYPASS_ERROR}\x1b[0m")  # measured as root
        self.enter_raw()
        if "no_screen" in self.sc:
            while True:
                time.sleep(3600)
        self.enable_modes()
        if "onboarding_offline" in self.sc:
            self.onboarding_offline_screen()
        if "onboarding" in self.sc:
            self.onboarding_screen()
        if "unknown_screen" in self.sc:
            self.unknown_screen()
        if "trust_no_default" in self.sc or not self.trusted():
            self.trust_screen()
        if "api_key_prompt" in self.sc:
            self.api_key_screen()
        if "bypass_warning" in self.sc or (
            self.mode == "bypassPermissions"
            and not self.setting_true("skipDangerousModePermissionPrompt")
        ):
            self.bypass_screen()
            self.mode = "bypassPermissions"  # accepted (the scenario may not have asked)
        self.repl()


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    argv_log = os.environ.get("MOCK_CLAUDE_ARGV_LOG")
    if argv_log:
        with open(argv_log, "w", encoding="utf-8") as f:
            json.dump(args, f)
    app: Optional[App] = None

    def on_signal(signum: int, _frame: Any) -> None:
        # measured on 2.1.197: SIGINT exits 0, SIGTERM 143, SIGHUP 129
        raise ExitNow(0 if signum == signal.SIGINT else 128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, on_signal)
    try:
        opts = parse_args(args)
        if opts.version:
            print(f"{VERSION} (Claude Code)")
            return 0
        scenarios = parse_scenarios(os.environ.get("MOCK_CLAUDE_SCENARIO", "ok"))
        if not os.isatty(0):
            raise ExitNow(
                1,
                "mock_claude: stdin is not a terminal; this mock only implements "
                "the interactive TUI (run it on a PTY)",
            )
        app = App(opts, scenarios)
        app.run()
        return 0
    except ExitNow as stop:
        if app is not None:
            app.restore_terminal()  # before the message, so it lands on a sane terminal
        if stop.message:
            sys.stderr.write(stop.message + ("\r\n" if app is not None else "\n"))
            sys.stderr.flush()
        return stop.code
    finally:
        if app is not None:
            app.restore_terminal()
            app.transcript.cost_state()
            with contextlib.suppress(OSError):
                os.unlink(app.session_file)


if __name__ == "__main__":
    sys.exit(main())
