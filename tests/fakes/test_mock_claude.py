"""mock_claude on a real PTY: its screens, keys, transcript, hooks and failure scenarios.

Every wait is on an event (text on the rendered screen, a file a hook wrote, the
process ending); the only deliberate pauses are waiting for the output to go quiet
before sending keys, which is what a driver of the real TUI has to do too, and waiting
out a key guard a test set itself. A check that something did not happen looks at an
event that would have come after it (the next prompt, the exit), never at a quiet spell.
"""

from __future__ import annotations

import base64
import codecs
import fcntl
import hashlib
import json
import os
import re
import select
import shlex
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

import pytest

ROOT = Path(__file__).resolve().parents[2]
MOCK = ROOT / "mock_claude" / "claude"
ROWS, COLS = 40, 100
CARET = "\u276f"  # what Claude Code puts before the highlighted entry and the input
TIMEOUT = 20.0  # generous: the mock answers in well under a second

_CSI = re.compile(r"\x1b\[([?>=<]?)([0-9;]*)([ -/]*)([@-~])")
_STRING = re.compile(r"\x1b[\]P_^].*?(?:\x07|\x1b\\)", re.S)
_PARTIAL = re.compile(r"\x1b(?:\[[?>=<]?[0-9;]*[ -/]*|[\]P_^].*)?\Z", re.S)

HOOK_PY = """\
import json, os, shutil, sys
event, out = sys.argv[1], sys.argv[2]
data = sys.stdin.read()
n = len([f for f in os.listdir(out) if f.startswith(event + ".") and f.endswith(".json")])
base = os.path.join(out, "%s.%d" % (event, n))
try:
    path = json.loads(data).get("transcript_path")
    if path and os.path.exists(path):
        shutil.copy(path, base + ".transcript")
except ValueError:
    pass
with open(base + ".tmp", "w") as f:
    f.write(data)
os.rename(base + ".tmp", base + ".json")
if event == "PermissionRequest":
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
          "decision": {"behavior": "deny", "message": "denied by the test"}}}))
"""


class Screen:
    """Just enough of a terminal to read Ink's output: cursor moves become spaces."""

    def __init__(self) -> None:
        self.cells = [[" "] * COLS for _ in range(ROWS)]
        self.x = self.y = 0
        self.pending = ""
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, data: bytes) -> None:
        text = self.pending + self.decoder.decode(data)
        self.pending = ""
        i = 0
        while i < len(text):
            ch = text[i]
            if ch == "\x1b":
                csi = _CSI.match(text, i)
                if csi:
                    self._csi(csi.group(1), csi.group(2), csi.group(4))
                    i = csi.end()
                    continue
                string = _STRING.match(text, i)
                if string:
                    i = string.end()
                    continue
                if _PARTIAL.match(text, i):
                    self.pending = text[i:]
                    return
                i += 2  # ESC 7, ESC 8, ESC ( B ...: nothing to draw
                continue
            if ch == "\r":
                self.x = 0
            elif ch == "\n":
                self._linefeed()
            elif ch >= " ":
                if self.x >= COLS:
                    self.x = 0
                    self._linefeed()
                self.cells[self.y][self.x] = ch
                self.x += 1
            i += 1

    def _linefeed(self) -> None:
        if self.y == ROWS - 1:
            self.cells = [*self.cells[1:], [" "] * COLS]
        else:
            self.y += 1

    def _csi(self, private: str, params: str, final: str) -> None:
        if private:
            return
        nums = [int(p) if p else 0 for p in params.split(";")] if params else []
        n = max(nums[0], 1) if nums else 1
        if final == "G":
            self.x = min(n, COLS) - 1
        elif final == "A":
            self.y = max(self.y - n, 0)
        elif final == "B":
            self.y = min(self.y + n, ROWS - 1)
        elif final == "C":
            self.x = min(self.x + n, COLS - 1)
        elif final == "D":
            self.x = max(self.x - n, 0)
        elif final == "H":
            self.y = min(n, ROWS) - 1
            self.x = min(max(nums[1], 1) if len(nums) > 1 else 1, COLS) - 1
        elif final == "K":
            mode = nums[0] if nums else 0
            row = self.cells[self.y]
            start, end = {0: (self.x, COLS), 1: (0, self.x + 1)}.get(mode, (0, COLS))
            row[start:end] = [" "] * (end - start)
        elif final == "J" and (nums[0] if nums else 0) in (2, 3):
            self.cells = [[" "] * COLS for _ in range(ROWS)]

    def text(self) -> str:
        return "\n".join("".join(row).replace("\xa0", " ").rstrip() for row in self.cells)


class Tui:
    """mock_claude on a PTY, with waits on what it draws."""

    def __init__(self, args: Sequence[str], cwd: Path, env: Dict[str, str]) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.proc = subprocess.Popen(
            [str(MOCK), *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=str(cwd),
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.screen = Screen()
        self.raw = b""
        self.last_output = time.monotonic()
        self.eof = False

    def pump(self, timeout: float) -> None:
        if self.eof:
            time.sleep(min(timeout, 0.01))
            return
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: the child is gone
            data = b""
        if not data:
            self.eof = True
            return
        self.raw += data
        self.screen.feed(data)
        self.last_output = time.monotonic()

    def wait_until(self, check: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {what}; screen:\n{self.screen.text()}")
            self.pump(0.05)

    def wait_for(self, text: str, timeout: float = TIMEOUT) -> None:
        self.wait_until(lambda: text in self.screen.text(), repr(text), timeout)

    def wait_quiet(self, quiet: float = 0.3) -> None:
        """No output for `quiet` seconds (since the last output or key sent): settled."""
        self.wait_until(lambda: time.monotonic() - self.last_output >= quiet, "quiet")

    def send(self, data: bytes) -> None:
        self.last_output = time.monotonic()  # so wait_quiet() also covers the reply
        while data:
            data = data[os.write(self.master, data) :]

    def wait_exit(self, timeout: float = TIMEOUT) -> int:
        self.wait_until(lambda: self.proc.poll() is not None, "exit", timeout)
        while not self.eof:
            self.pump(0.05)
        return self.proc.returncode

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.master >= 0:
            os.close(self.master)
            self.master = -1


class Env:
    """A throw-away HOME and project folder, with a hook that records what it gets."""

    def __init__(self, tmp: Path) -> None:
        self.home = tmp / "home"
        self.project = tmp / "project"
        self.events = tmp / "events"
        for path in (self.home, self.project, self.events):
            path.mkdir()
        self.hook = tmp / "hook.py"
        self.hook.write_text(HOOK_PY)
        self.settings = tmp / "settings.json"
        self.settings.write_text(json.dumps(self.hooks_for("")))
        self.prompt_log = tmp / "prompts.log"
        self.argv_log = tmp / "argv.json"
        self.tuis: List[Tui] = []

    def hooks_for(self, tag: str) -> Dict[str, Any]:
        def group(event: str) -> List[Dict[str, Any]]:
            cmd = " ".join(
                shlex.quote(str(a)) for a in (sys.executable, self.hook, tag + event, self.events)
            )
            return [{"matcher": "*", "hooks": [{"type": "command", "command": cmd}]}]

        return {"hooks": {e: group(e) for e in ("Stop", "StopFailure", "PermissionRequest")}}

    def trust(self) -> None:
        projects = {os.path.realpath(self.project): {"hasTrustDialogAccepted": True}}
        (self.home / ".claude.json").write_text(json.dumps({"projects": projects}))

    def env(self, **extra: str) -> Dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "MOCK_"))}
        env.update(
            HOME=str(self.home),
            MOCK_CLAUDE_PROMPT_LOG=str(self.prompt_log),
            MOCK_CLAUDE_ARGV_LOG=str(self.argv_log),
        )
        env.update(extra)
        return env

    def start(self, *args: str, **env: str) -> Tui:
        tui = Tui(["--settings", str(self.settings), *args], self.project, self.env(**env))
        self.tuis.append(tui)
        return tui

    def event(self, name: str, index: int = 0) -> Optional[Dict[str, Any]]:
        path = self.events / f"{name}.{index}.json"
        return json.loads(path.read_text()) if path.exists() else None

    def prompts(self) -> List[bytes]:
        if not self.prompt_log.exists():
            return []
        return [base64.b64decode(line) for line in self.prompt_log.read_text().split()]

    def transcript(self, session_id: str) -> List[Dict[str, Any]]:
        slug = re.sub(r"[^A-Za-z0-9]", "-", os.path.realpath(self.project))
        path = self.home / ".claude" / "projects" / slug / f"{session_id}.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Env]:
    env = Env(tmp_path)
    yield env
    for tui in env.tuis:
        tui.close()


def ack(prompt: bytes) -> str:
    text = prompt.decode()
    return f"ACK {len(text)} {hashlib.sha256(prompt).hexdigest()[:12]}"


def run_plain(args: Sequence[str], env: Dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MOCK), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT,
    )


def test_cli_surface(sandbox: Env) -> None:
    env = sandbox.env()
    version = run_plain(["--version"], env)
    assert (version.returncode, version.stdout) == (0, "2.1.197 (Claude Code)\n")
    assert run_plain(["--version"], sandbox.env(MOCK_CLAUDE_VERSION="9.9.9")).stdout.startswith(
        "9.9.9 "
    )
    for forbidden in (["-p", "hi"], ["--print"], ["--output-format", "json"]):
        result = run_plain(forbidden, env)
        assert result.returncode == 1 and "never pass" in result.stderr, forbidden
    unknown = run_plain(["--bogus"], env)
    assert (unknown.returncode, unknown.stderr) == (1, "error: unknown option '--bogus'\n")
    missing = run_plain(["--model"], env)
    assert "argument missing" in missing.stderr and missing.returncode == 1
    no_tty = run_plain(["hello"], env)
    assert no_tty.returncode == 1 and "not a terminal" in no_tty.stderr
    assert json.loads(sandbox.argv_log.read_text()) == ["hello"]


def test_trust_dialog_paste_answer_hooks_and_exit(sandbox: Env) -> None:
    sid = "11111111-2222-3333-4444-555555555555"
    tui = sandbox.start("--session-id", sid)
    tui.wait_for("2. No, exit")
    assert CARET + " 1. Yes, I trust this folder" in tui.screen.text()
    tui.wait_quiet()
    assert b"\x1b[>0q\x1b[c" in tui.raw and b"\x1b[?2004h" in tui.raw
    tui.send(b"\x1b[B")
    tui.wait_for(CARET + " 2. No, exit")
    tui.wait_quiet()
    tui.send(b"\x1b[A")
    tui.wait_for(CARET + " 1. Yes")
    tui.wait_quiet()
    tui.send(b"\r")
    tui.wait_for("? for shortcuts")
    # Ink-style output: the footer exists only on the rendered screen, not in the bytes
    assert b"? for shortcuts" not in tui.raw and b"for\x1b[" in tui.raw
    config = json.loads((sandbox.home / ".claude.json").read_text())
    assert config["projects"][os.path.realpath(sandbox.project)]["hasTrustDialogAccepted"]

    tui.wait_quiet()
    for chunk in (b"\x1b[200~line one\tx", b"\nline two ", b"\xc3\xa9\x1b[20", b"1~"):
        tui.send(chunk)  # a paste in pieces, one cut inside the end marker
    tui.wait_for("line two")
    tui.wait_quiet()
    tui.send(b"\r")
    sent = "line one    x\nline two é".encode()  # the input box turns tabs into 4 spaces
    tui.wait_for("● " + ack(sent))
    assert sandbox.prompts() == [sent]
    tui.wait_for("? for shortcuts")  # idle again: the turn is fully written
    stop = sandbox.event("Stop")
    assert stop is not None
    assert set(stop) == {
        "session_id", "transcript_path", "cwd", "prompt_id", "permission_mode", "effort",
        "hook_event_name", "stop_hook_active", "last_assistant_message", "background_tasks",
        "session_crons",
    }  # fmt: skip
    assert (stop["session_id"], stop["last_assistant_message"]) == (sid, ack(sent))
    records = sandbox.transcript(sid)
    user = next(r for r in records if r["type"] == "user")
    assert user["message"]["content"] == sent.decode()
    assert (user["promptSource"], user["entrypoint"], user["sessionId"]) == ("typed", "cli", sid)
    assistant = next(r for r in records if r["type"] == "assistant")
    assert assistant["parentUuid"] == user["uuid"]
    assert assistant["message"]["content"] == [{"type": "text", "text": ack(sent)}]
    assert assistant["message"]["stop_reason"] == "end_turn"
    assert any(r.get("subtype") == "turn_duration" for r in records)
    assert stop["transcript_path"].endswith(f"/{sid}.jsonl")

    tui.wait_quiet()
    tui.send(b"/exit")
    tui.wait_for(CARET + " /exit")
    tui.wait_quiet()
    tui.send(b"\r")
    assert tui.wait_exit() == 0
    assert f"Resume this session with:\nclaude --resume {sid}" in tui.screen.text()


def test_argv_prompt_is_submitted_byte_exact(sandbox: Env) -> None:
    sandbox.trust()
    prompt = "col1\tcol2\ttrailing  "
    tui = sandbox.start("--model", "m1", "--max-turns", "3", prompt, "ignored extra")
    tui.wait_for("● " + ack(prompt.encode()))
    assert sandbox.prompts() == [prompt.encode()]
    argv = json.loads(sandbox.argv_log.read_text())
    assert argv[2:] == ["--model", "m1", "--max-turns", "3", prompt, "ignored extra"]


def test_variadic_flags_swallow_the_prompt_like_the_real_one(sandbox: Env) -> None:
    sandbox.trust()
    tui = sandbox.start("--allowedTools", "Bash", "say hi")
    tui.wait_for("? for shortcuts")
    # "say hi" became a tool name: the first prompt to be submitted is the one typed now
    # (an argv prompt goes in as soon as the box is ready, so it would come before it).
    tui.wait_quiet()
    tui.send(b"typed")
    tui.wait_for(CARET + " typed")
    tui.wait_quiet()
    tui.send(b"\r")
    tui.wait_for("● " + ack(b"typed"))
    assert sandbox.prompts() == [b"typed"]
    tui.close()
    tui = sandbox.start("--allowedTools", "Bash", "--", "say hi")
    tui.wait_for("● " + ack(b"say hi"))


def test_keys_before_the_screen_settles_are_dropped(sandbox: Env) -> None:
    guard = 3.0
    tui = sandbox.start(
        MOCK_CLAUDE_KEY_GUARD_MS=str(int(guard * 1000)), MOCK_CLAUDE_SCENARIO="trust_no_default"
    )
    tui.wait_for(CARET + " 2. No, exit")
    seen = time.monotonic()  # the mock starts the guard before it draws the screen
    tui.send(b"\x1b[A")  # at once: dropped, so the caret stays on "No, exit"
    # Enter once the guard is surely over acts on the selection the arrow would have
    # moved: "No, exit" (exit 1) shows the arrow was read and dropped.
    tui.wait_until(lambda: time.monotonic() >= seen + guard, "the key guard to pass")
    tui.send(b"\r")
    assert tui.wait_exit() == 1
    assert not (sandbox.home / ".claude.json").exists()  # the folder was not trusted
    tui.close()
    tui = sandbox.start(MOCK_CLAUDE_SCENARIO="trust_no_default")
    tui.wait_for(CARET + " 2. No, exit")
    tui.wait_quiet()
    tui.send(b"\r")  # "No, exit"
    assert tui.wait_exit() == 1


def test_an_arrow_and_enter_in_one_write_act_on_the_old_selection(sandbox: Env) -> None:
    tui = sandbox.start()
    tui.wait_for("No, exit")
    tui.wait_quiet()
    tui.send(b"\x1b[B\r")  # measured on 2.1.197: this trusts the folder
    tui.wait_for("? for shortcuts")


def test_tool_turn_with_a_denying_permission_hook(sandbox: Env) -> None:
    sandbox.trust()
    sid = "11111111-2222-3333-4444-666666666666"
    tui = sandbox.start("--session-id", sid, "go", MOCK_CLAUDE_SCENARIO="tool")
    tui.wait_for("● Tool turn done.")
    tui.wait_for("? for shortcuts")
    request = sandbox.event("PermissionRequest")
    assert request is not None
    assert request["tool_name"] == "Bash"
    assert request["tool_input"]["command"] == "touch /tmp/x"
    records = sandbox.transcript(sid)
    tool_use = [b for r in records if r["type"] == "assistant" for b in r["message"]["content"]]
    assert [b["type"] for b in tool_use] == ["tool_use", "text"]
    result = next(
        r["message"]["content"][0]
        for r in records
        if r["type"] == "user" and isinstance(r["message"]["content"], list)
    )
    assert (result["is_error"], result["content"]) == (True, "denied by the test")
    assert result["tool_use_id"] == tool_use[0]["id"]
    assert sandbox.event("Stop") is not None


def test_api_error_fires_stop_failure_and_no_stop(sandbox: Env) -> None:
    sandbox.trust()
    sid = "11111111-2222-3333-4444-777777777777"
    tui = sandbox.start("--session-id", sid, "x", MOCK_CLAUDE_SCENARIO="api_error")
    tui.wait_until(lambda: sandbox.event("StopFailure") is not None, "StopFailure")
    failure = sandbox.event("StopFailure")
    assert failure is not None
    assert failure["last_assistant_message"] == "API Error: 400 fake 400 failure"
    assert "permission_mode" not in failure and failure["error"] == "unknown"
    tui.wait_for("? for shortcuts")
    assert sandbox.event("Stop") is None
    error = next(r for r in sandbox.transcript(sid) if r["type"] == "assistant")
    assert (error["isApiErrorMessage"], error["apiErrorStatus"]) == (True, 400)
    assert error["message"]["model"] == "<synthetic>"


def test_late_flush_stop_comes_before_the_final_record(sandbox: Env) -> None:
    sandbox.trust()
    sid = "11111111-2222-3333-4444-888888888888"
    tui = sandbox.start("--session-id", sid, "late", MOCK_CLAUDE_SCENARIO="late_flush")
    copy = sandbox.events / "Stop.0.transcript"
    tui.wait_until(lambda: sandbox.event("Stop") is not None, "the Stop hook")
    seen_by_hook = [json.loads(line) for line in copy.read_text().splitlines()]
    assert not any(r["type"] == "assistant" for r in seen_by_hook)
    tui.wait_for("? for shortcuts")
    assert any(r["type"] == "assistant" for r in sandbox.transcript(sid))


def test_setting_sources_empty_keeps_only_the_settings_file_hooks(sandbox: Env) -> None:
    sandbox.trust()
    (sandbox.home / ".claude").mkdir()
    user = sandbox.home / ".claude" / "settings.json"
    user.write_text(json.dumps(sandbox.hooks_for("user-")))
    tui = sandbox.start("--setting-sources=", "one")
    tui.wait_until(lambda: sandbox.event("Stop") is not None, "the Stop hook")
    tui.wait_for("? for shortcuts")
    assert sandbox.event("user-Stop") is None
    tui.close()
    tui = sandbox.start("two", MOCK_CLAUDE_SCENARIO="hook_twice")
    tui.wait_until(lambda: sandbox.event("Stop", 2) is not None, "Stop twice more")
    tui.wait_until(lambda: sandbox.event("user-Stop", 1) is not None, "user Stop twice")


def test_bypass_mode_warning_and_footer(sandbox: Env) -> None:
    sandbox.trust()
    tui = sandbox.start("--dangerously-skip-permissions", IS_SANDBOX="1")
    tui.wait_for("2. Yes, I accept")
    assert CARET + " 1. No, exit" in tui.screen.text()
    tui.wait_quiet()
    tui.send(b"\x1b[B")
    tui.wait_for(CARET + " 2. Yes, I accept")
    tui.wait_quiet()
    tui.send(b"\r")
    tui.wait_for("bypass permissions on")  # no "? for shortcuts" outside the default mode
    assert "? for shortcuts" not in tui.screen.text()
    user = json.loads((sandbox.home / ".claude" / "settings.json").read_text())
    assert user["skipDangerousModePermissionPrompt"] is True


@pytest.mark.parametrize(
    ("scenario", "expected"),
    [("die_early", "cannot be used with root/sudo"), ("crash_mid_turn", "crash_mid_turn")],
)
def test_dying_scenarios(sandbox: Env, scenario: str, expected: str) -> None:
    sandbox.trust()
    tui = sandbox.start("hello", MOCK_CLAUDE_SCENARIO=scenario)
    assert tui.wait_exit() == 1
    assert expected in tui.screen.text()
    assert sandbox.event("Stop") is None


def test_sigterm_exits_143_during_a_slow_turn(sandbox: Env) -> None:
    sandbox.trust()
    tui = sandbox.start("hello", MOCK_CLAUDE_SCENARIO="slow:30")
    tui.wait_for("esc to interrupt")
    tui.proc.terminate()
    assert tui.wait_exit() == 143
    assert tui.raw.endswith(b"\x1b[?2004l\x1b[?25h\x1b]0;\x07")
