"""--input-format stream-json: the input side's pieces, and whole sessions against
mock_claude (several turns in one TUI, the control protocol, bad input). The real TUI
and the real Agent SDK: tests/e2e/test_e2e_sdk.py."""

from __future__ import annotations

import base64
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from harness import ROOT, Sandbox, entrypoints
from image_bytes import GIF_1X1, image_block

from claude_print import contract
from claude_print.hooks.hook_settings import ExtraHook, hook_settings
from claude_print.printing.emit import Emitter, Trace
from claude_print.sdk import answers, stream_input
from claude_print.tui.images import Image
from claude_print.turns.turn_state import ResultOut, Stopped, advance

MOCK = str(ROOT / "mock_claude" / "claude")
STREAMED = ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
DEADLINE = 30.0


def user(content: Any) -> Dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content}}


def request(request_id: str, subtype: str, **fields: Any) -> Dict[str, Any]:
    return {
        "type": "control_request",
        "request_id": request_id,
        "request": {"subtype": subtype, **fields},
    }


# --- pieces ---------------------------------------------------------------------------


def test_user_text_takes_a_string_or_text_blocks() -> None:
    assert stream_input.user_text(user("hi\tthere ")) == ("hi\tthere ", "", ())
    blocks = [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]
    assert stream_input.user_text(user(blocks)) == ("one\n\ntwo", "", ())


PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de"
    "0000000c4944415478da63f8cfc0000003010100c9fe92ef0000000049454e44ae426082"
)


def test_user_text_takes_images_after_the_text_in_their_order() -> None:
    blocks = [image_block(PNG), {"type": "text", "text": "look"}, image_block(GIF_1X1, "image/png")]
    text, problem, images = stream_input.user_text(user(blocks))
    assert (text, problem) == ("look", "")
    # The media type is the bytes' (as the TUI and claude -p tell it), not the label's.
    assert images == (Image("image/png", PNG), Image("image/gif", GIF_1X1))


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ([{"type": "image", "source": {}}], "an image block with a missing source"),
        (
            [{"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}],
            "an image block with a url source cannot be sent",
        ),
        (
            [{"type": "image", "source": {"type": "file", "file_id": "file_1"}}],
            "an image block with a file source cannot be sent",
        ),
        ([image_block(b"")], "not a PNG, JPEG, GIF or WebP"),
        ([image_block(b"%PDF-1.4 not an image")], "not a PNG, JPEG, GIF or WebP"),
        ([image_block(b"RIFF\0\0\0\0WAVEfmt ")], "not a PNG, JPEG, GIF or WebP"),
        ([image_block(PNG[:-12])], "not a whole image/png image (cut short or damaged)"),
        ([image_block(b"\x89PNG\r\n\x1a\n" + b"x" * 70)], "not a whole image/png image"),
        (
            [{"type": "image", "source": {"type": "base64", "data": "iVBOR*w0"}}],
            "not valid base64",
        ),
        ([{"type": "text", "text": "x"}, {"type": "document"}], "a document content block"),
        (
            [{"type": "text", "text": "see [Image #1]"}, image_block(PNG)],
            "text like '[Image #1]'",
        ),
        (None, "needs message.content"),
    ],
)
def test_user_text_refuses_what_the_input_box_cannot_take(content: Any, words: str) -> None:
    text, problem, images = stream_input.user_text(user(content))
    assert (text, images) == ("", ()) and words in problem


def test_sdk_hooks_become_asking_relay_entries_with_their_matcher() -> None:
    settings = hook_settings(
        "/tmp/it's here/hook.sh",
        extra_hooks=[
            ExtraHook("PreToolUse", "Bash|Edit", "sdk:0", 7),
            ExtraHook("Stop", None, "sdk:1"),
        ],
    )
    [pre] = settings["hooks"]["PreToolUse"]
    assert pre["matcher"] == "Bash|Edit"
    assert pre["hooks"][0] == {
        "type": "command",
        "command": "/bin/sh '/tmp/it'\"'\"'s here/hook.sh' PreToolUse ask sdk:0",
        "timeout": 7,
    }
    relay_stop, sdk_stop = settings["hooks"]["Stop"]  # claude-print's own Stop hook stays
    assert "matcher" not in sdk_stop
    assert sdk_stop["hooks"][0]["command"].endswith("Stop ask sdk:1")
    assert sdk_stop["hooks"][0]["timeout"] == contract.ASK_TIMEOUT_SECS
    assert relay_stop["hooks"][0]["command"].endswith(" Stop")


class Channel:
    """A ControlChannel reading a pipe, writing to a captured stdout."""

    def __init__(self, capsys: pytest.CaptureFixture[str], version: str = "2.1.330") -> None:
        self.capsys = capsys
        self.read_fd, self.write_fd = os.pipe()
        emitter = Emitter("stream-json")
        facts = contract.facts_for(version)
        self.channel = stream_input.ControlChannel(
            emitter, Trace(False, 0.0), facts, fd=self.read_fd
        )

    def send(self, *messages: Any) -> None:
        os.write(self.write_fd, b"".join(json.dumps(m).encode() + b"\n" for m in messages))

    def take_all(self, busy: bool = False) -> None:
        while select.select([self.read_fd], [], [], 0)[0]:
            for message in self.channel.read():
                self.channel.take(message, 0.0, busy)
            if not self.channel.reading:
                break

    def printed(self) -> List[Dict[str, Any]]:
        return [json.loads(line) for line in self.capsys.readouterr().out.splitlines()]


def test_initialize_is_answered_in_the_release_s_keys(capsys: pytest.CaptureFixture[str]) -> None:
    for version, extra in (("2.1.197", False), ("2.1.330", True)):
        c = Channel(capsys, version)
        c.send(request("req_1", "initialize", hooks={"Stop": [{"hookCallbackIds": ["h"]}]}))
        c.take_all()
        [answer] = c.printed()
        assert answer["response"]["subtype"] == "success"
        assert answer["response"]["request_id"] == "req_1"
        keys = list(answer["response"]["response"])
        assert keys[:4] == ["commands", "agents", "output_style", "available_output_styles"]
        assert ("claude_code_version" in keys, "hooks_applied" in keys) == (extra, extra)
        assert c.channel.hooks == [answers.SdkHook("Stop", None, ("h",), None)]


def test_requests_it_cannot_honour_get_an_error_naming_why(
    capsys: pytest.CaptureFixture[str],
) -> None:
    c = Channel(capsys)
    c.send(request("a", "set_model", model="x"), request("b", "brand_new_thing"))
    c.take_all()
    first, second = c.printed()
    assert first["response"] == {
        "subtype": "error",
        "request_id": "a",
        "error": "claude-print: 'set_model' is not supported: the TUI's /model also saves the "
        "model as your default for new sessions (~/.claude/settings.json); pass model in the "
        "options instead",
    }
    assert "'brand_new_thing' is not supported" in second["response"]["error"]


def test_interrupt_is_answered_at_once_and_kept_only_while_busy(
    capsys: pytest.CaptureFixture[str],
) -> None:
    c = Channel(capsys, "2.1.197")
    c.send(request("idle", "interrupt"))
    c.take_all(busy=False)
    c.send(request("busy", "interrupt"))
    c.take_all(busy=True)
    answers = [m["response"] for m in c.printed()]
    assert answers == [
        {"subtype": "success", "request_id": "idle"},
        {"subtype": "success", "request_id": "busy"},
    ]
    assert c.channel.interrupts == ["busy"]


def test_an_interrupt_behind_a_queued_prompt_is_kept_for_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The Python SDK's interrupt case on a loaded machine: the prompt waits while the TUI
    boots (no turn under way yet) and the interrupt comes 2 s after it. The CLI would
    have that turn running: the interrupt is kept, for when the prompt has gone in."""
    c = Channel(capsys, "2.1.197")
    c.send({"type": "user", "message": {"role": "user", "content": "[[sleep:30]] slow"}})
    c.send(request("early", "interrupt"))
    c.take_all(busy=False)
    assert c.channel.interrupts == ["early"]


def test_our_requests_get_their_answers(capsys: pytest.CaptureFixture[str]) -> None:
    c = Channel(capsys)
    got: List[Dict[str, Any]] = []
    c.channel.request("can_use_tool", {"tool_name": "Bash"}, got.append)
    [sent] = c.printed()
    assert sent["request"] == {"subtype": "can_use_tool", "tool_name": "Bash"}
    rid = sent["request_id"]
    c.send(
        {
            "type": "control_response",
            "response": {"subtype": "error", "request_id": rid, "error": "boom"},
        }
    )
    c.take_all()
    assert got == [{"error": "boom"}]
    c.send({"type": "control_response", "response": {"subtype": "success", "request_id": rid}})
    c.take_all()
    assert got == [{"error": "boom"}]  # answered once only


def test_end_of_stdin_and_a_last_line_without_newline(capsys: pytest.CaptureFixture[str]) -> None:
    c = Channel(capsys)
    os.write(c.write_fd, json.dumps(user("last")).encode())
    os.close(c.write_fd)
    c.take_all()
    assert [p.text for p in c.channel.prompts] == ["last"]
    assert not c.channel.reading


def test_a_caller_gone_is_stdin_ended_and_stdout_unread(capsys: pytest.CaptureFixture[str]) -> None:
    out_r, out_w = os.pipe()

    class PipeEmitter(Emitter):
        @property
        def fd(self) -> int:
            return out_w

    c = Channel(capsys)
    c.channel.emitter = PipeEmitter("stream-json")
    assert not c.channel.caller_gone()  # stdin still open
    os.close(c.write_fd)
    c.take_all()
    assert not c.channel.caller_gone()  # a plain end of stdin: stdout is still read
    os.close(out_r)
    assert c.channel.caller_gone()
    os.close(out_w)


def test_a_line_that_is_not_json_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    c = Channel(capsys)
    os.write(c.write_fd, b"hello\n")
    with pytest.raises(Exception, match="not a JSON line"):
        c.take_all()


# --- sessions against mock_claude --------------------------------------------------------


class Session:
    """claude-print with stream-json input, driven line by line like the Agent SDK does."""

    def __init__(self, sandbox: Sandbox, *args: str, env: Optional[Dict[str, str]] = None) -> None:
        self.sandbox = sandbox
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "claude_print", "--claude-binary", MOCK, *STREAMED, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=sandbox.project,
            env=sandbox.env(CLAUDE_PRINT_TRACE="1", **(env or {})),
        )
        self.buffer = b""

    def send(self, *messages: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        self.proc.stdin.flush()

    def lines(self) -> Iterator[Dict[str, Any]]:
        """stdout's JSON lines as they come; fails with stderr when none comes in time."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + DEADLINE
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                yield json.loads(line)
            left = deadline - time.monotonic()
            ready = select.select([fd], [], [], max(0.0, left))[0]
            chunk = os.read(fd, 65536) if ready else b""
            if not chunk:
                self.proc.kill()
                _, err = self.proc.communicate()
                pytest.fail(
                    f"no more output (exit {self.proc.returncode}); stderr:\n{err.decode()}"
                )
            self.buffer += chunk

    def until(self, kind: str) -> List[Dict[str, Any]]:
        seen = []
        for message in self.lines():
            seen.append(message)
            if message.get("type") == kind:
                return seen
        return seen

    def finish(self) -> Tuple[int, str]:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.stdin = None  # communicate() must not flush it
        _, err = self.proc.communicate(timeout=DEADLINE)
        return self.proc.returncode, err.decode()


def test_three_messages_are_three_turns_of_one_tui(sandbox: Sandbox) -> None:
    s = Session(sandbox)
    s.send(request("req_1", "initialize", hooks=None))
    [answer] = s.until("control_response")
    assert answer["response"]["subtype"] == "success"
    results = []
    for text in ("What is 2+2?", "second", "third"):
        s.send(user(text))
        events = s.until("result")
        assert [e["type"] for e in events] == ["system", "assistant", "result"], events
        results.append(events[-1])
    code, err = s.finish()
    assert code == 0, err
    assert err.count("spawned ") == 1, err  # one TUI for every turn
    assert results[0]["result"] == "The answer is 4."
    assert len({r["session_id"] for r in results}) == 1
    # (result_index counts them from 2.1.310 on; mock_claude is 2.1.197: test_e2e_sdk.py)
    costs = [r["total_cost_usd"] for r in results]
    assert costs[0] > 0 and costs == sorted(costs) and costs[2] > costs[1]  # the session's so far
    assert [set(entrypoints(t)) for t in sandbox.transcripts()] == [{"cli"}]
    assert sandbox.leftovers() == []


def test_messages_sent_at_once_and_stdin_closed_all_get_their_turn(sandbox: Sandbox) -> None:
    """`query(prompt=str)` closes stdin right after its message: the turn still runs."""
    s = Session(sandbox)
    s.send(user("first"), user("What is 2+2?"))
    code, err = s.finish()
    assert code == 0, err
    assert err.count("result printed (success") == 2, err
    assert sandbox.leftovers() == []


def test_a_document_is_refused_and_the_session_goes_on(sandbox: Sandbox) -> None:
    """The TUI takes a PDF neither from the clipboard nor as a pasted path (images only)."""
    pdf = base64.b64encode(b"%PDF-1.4\n%%EOF\n").decode()
    document = {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": pdf},
    }
    s = Session(sandbox)
    s.send(user([{"type": "text", "text": "Summarise this"}, document]))
    [refused] = s.until("result")
    assert (refused["subtype"], refused["is_error"]) == ("error_during_execution", True)
    assert "a document content block cannot be sent" in refused["errors"][0]
    s.send(user("What is 2+2?"))
    events = s.until("result")
    assert events[-1]["result"] == "The answer is 4."
    code, err = s.finish()
    assert code == 0, err  # the last result was not an error
    assert sandbox.leftovers() == []


def test_the_exit_code_follows_the_last_result(sandbox: Sandbox) -> None:
    s = Session(sandbox, env={"MOCK_CLAUDE_SCENARIO": "api_error"})
    s.send(user("hi"))
    [*_, result] = s.until("result")
    assert result["is_error"] is True
    code, err = s.finish()
    assert code == 1, err
    assert sandbox.leftovers() == []


def test_can_use_tool_asks_the_caller_and_its_answer_decides(sandbox: Sandbox) -> None:
    s = Session(sandbox, "--permission-prompt-tool", "stdio", env={"MOCK_CLAUDE_SCENARIO": "tool"})
    s.send(user("run it"))
    [*_, ask] = s.until("control_request")
    req = ask["request"]
    assert (req["subtype"], req["tool_name"]) == ("can_use_tool", "Bash")
    assert req["input"]["command"] == "touch /tmp/x"
    assert req["tool_use_id"].startswith("toolu_")
    s.send(
        {
            "type": "control_response",
            "response": {
                "subtype": "success",
                "request_id": ask["request_id"],
                "response": {"behavior": "deny", "message": "not today"},
            },
        }
    )
    [*_, result] = s.until("result")
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Bash"]
    code, err = s.finish()
    assert code == 0, err
    assert sandbox.leftovers() == []


@pytest.mark.parametrize(
    ("stdin", "words"),
    [
        (b"not json\n", "not a JSON line"),
        (b"[1, 2]\n", "each line must be a JSON object"),
    ],
)
def test_bad_input_is_exit_2_naming_it_and_leaves_nothing(
    sandbox: Sandbox, stdin: bytes, words: str
) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "claude_print", "--claude-binary", MOCK, *STREAMED],
        input=stdin,
        capture_output=True,
        cwd=sandbox.project,
        env=sandbox.env(),
        timeout=DEADLINE,
    )
    assert proc.returncode == 2, proc.stderr.decode()
    assert words in proc.stderr.decode()
    assert sandbox.leftovers() == []


def test_empty_stdin_ends_the_session_without_a_turn(sandbox: Sandbox) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "claude_print", "--claude-binary", MOCK, *STREAMED],
        input=b"",
        capture_output=True,
        cwd=sandbox.project,
        env=sandbox.env(),
        timeout=DEADLINE,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout == b""
    assert sandbox.leftovers() == []


def test_the_parent_session_s_entrypoint_does_not_reach_the_tui(sandbox: Sandbox) -> None:
    s = Session(
        sandbox, env={"CLAUDE_CODE_ENTRYPOINT": "sdk-py", "CLAUDE_AGENT_SDK_VERSION": "0.2.187"}
    )
    s.send(user("What is 2+2?"))
    s.until("result")
    code, err = s.finish()
    assert code == 0, err
    assert [set(entrypoints(t)) for t in sandbox.transcripts()] == [{"cli"}]


def test_subagents_defined_at_initialize_reach_the_tui_as_agents(sandbox: Sandbox) -> None:
    """The SDK sends `agents` in `initialize`, not as a flag; the TUI takes --agents JSON."""
    log = sandbox.tmp / "argv.json"
    agents = {"reviewer": {"description": "Reviews code", "prompt": "You review code."}}
    s = Session(sandbox, env={"MOCK_CLAUDE_ARGV_LOG": str(log)})
    s.send(request("req_1", "initialize", hooks=None, agents=agents))
    s.until("control_response")
    s.send(user("What is 2+2?"))
    s.until("result")
    code, err = s.finish()
    assert code == 0, err
    argv = json.loads(log.read_text())
    [given] = [a for a in argv if a.startswith("--agents=")]
    assert json.loads(given[len("--agents=") :]) == agents


@pytest.mark.parametrize(
    ("fields", "flags"),
    [
        ({"systemPrompt": [""]}, []),  # the TS SDK's default: the TUI keeps its own prompt
        ({"systemPrompt": ["You are ", "terse."]}, ["--system-prompt=You are terse."]),
        ({"systemPrompt": "-starts with a dash"}, ["--system-prompt=-starts with a dash"]),
        ({"appendSystemPrompt": "Also: be kind."}, ["--append-system-prompt=Also: be kind."]),
        ({"excludeDynamicSections": True, "skills": ["x"]}, []),
    ],
)
def test_the_ts_sdk_s_system_prompt_at_initialize_becomes_tui_flags(
    fields: Dict[str, Any], flags: List[str]
) -> None:
    assert stream_input.initialize_flags({"subtype": "initialize", **fields}) == flags


def test_between_turns_the_loop_sleeps_until_something_happens(tmp_path: Path) -> None:
    """A finished turn's Stop and its stale transcript poll time must not wake the loop
    (they made it spin at 100 % of a core between turns); stdin, hooks and the child do."""
    from claude_print.hooks.relay import HookEvent
    from claude_print.options import Options
    from claude_print.run.runner import Session

    started = time.monotonic()
    options = Options(prompt="", prompt_source="stdin", input_format="stream-json")
    session = Session(options, Trace(False, started), Emitter("stream-json", True), started)
    state, pump = session.state, session.pump
    state.transcript.open(str(tmp_path / "t.jsonl"))
    pump.rendering = False
    state.watch = watch = session._watch(state.turn)
    advance(state.turn, Stopped(HookEvent(contract.HOOK_STOP, {}), started))
    watch.next_tail = started - 10  # last advanced by the finished turn
    now = time.monotonic()
    assert pump._wait_time(now) < 0.05  # the turn is live: poll its transcript
    advance(state.turn, ResultOut())
    assert pump._wait_time(now) >= 0.5  # between turns: only the child's liveness


def test_requests_the_cli_answers_alike_without_the_tui(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real CLI's answers (tests/data/sdk/*/control_misc.json): stop_task succeeds
    for any id, rewinding is off unless the SDK enabled checkpoints, an unknown MCP
    server is not found; mcp_status lists --mcp-config's servers."""
    monkeypatch.delenv(stream_input.CHECKPOINTING_VAR, raising=False)
    c = Channel(capsys)
    c.channel.mcp_servers = ["files"]
    c.send(request("a", "stop_task", task_id="nosuch"))
    c.send(request("b", "rewind_files", user_message_id="u"))
    c.send(request("c", "mcp_reconnect", serverName="nosuch"))
    c.send(request("d", "mcp_toggle", serverName="nosuch", enabled=False))
    c.send(request("e", "mcp_status"))
    c.send(request("f", "mcp_reconnect", serverName="files"))
    c.take_all()
    answers = {m["response"]["request_id"]: m["response"] for m in c.printed()}
    assert answers["a"] == {"subtype": "success", "request_id": "a", "response": {}}
    assert answers["b"]["error"] == "File rewinding is not enabled."
    assert answers["c"]["error"] == "Server not found: nosuch"
    assert answers["d"]["error"] == "Server not found: nosuch"
    assert answers["e"]["response"] == {"mcpServers": [{"name": "files", "status": "connected"}]}
    assert "'mcp_reconnect' is not supported" in answers["f"]["error"]  # the TUI's own panel


def test_set_permission_mode_is_answered_at_once_and_kept_for_the_tui(
    capsys: pytest.CaptureFixture[str],
) -> None:
    c = Channel(capsys)
    c.channel.session_id = "s1"
    c.send(request("a", "set_permission_mode", mode="acceptEdits"))
    c.send(request("b", "set_permission_mode", mode="bypassPermissions"))
    c.send(request("c", "set_permission_mode", mode="dontAsk"))
    c.take_all()
    first, status, bypass, unknown = c.printed()
    assert first["response"] == {
        "subtype": "success",
        "request_id": "a",
        "response": {"mode": "acceptEdits"},
    }
    assert (status["type"], status["subtype"], status["permissionMode"], status["session_id"]) == (
        "system",
        "status",
        "acceptEdits",
        "s1",
    )
    assert "bypass mode allowed" in bypass["response"]["error"]
    assert "Shift+Tab cycle" in unknown["response"]["error"]
    assert (c.channel.pending_mode, c.channel.permission_mode) == ("acceptEdits", "acceptEdits")


def test_messages_that_came_together_fold_into_one_prompt_where_joinable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`claude -p` answers the messages that came during a turn as one prompt, joined by
    line breaks (measured); a message that may not join keeps its own turn, and so does
    each after it (they stay in order)."""
    c = Channel(capsys)
    for text in ("one", "two", "three", "/cost", "four"):
        c.send(user(text))
    c.take_all()

    def plain(prompt: stream_input.Prompt) -> bool:
        return prompt.text is not None and not prompt.text.startswith("/")

    c.channel.joinable = plain
    texts = []
    for _ in range(4):
        prompt = c.channel.next_prompt(0.0)
        assert prompt is not None
        texts.append(prompt.text)
    # The session's first message goes alone, as claude -p takes it at once.
    assert texts == ["one", "two\nthree", "/cost", "four"]


def test_without_a_rule_each_message_is_a_turn(capsys: pytest.CaptureFixture[str]) -> None:
    """--replay-user-messages: no rule is given, every message keeps its turn."""
    c = Channel(capsys)
    for text in ("one", "two", "three"):
        c.send(user(text))
    c.take_all()
    texts = [getattr(c.channel.next_prompt(0.0), "text", None) for _ in range(3)]
    assert texts == ["one", "two", "three"]
