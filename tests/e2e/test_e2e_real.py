"""End to end against the real, pinned Claude Code and the local fake Messages API.

Each case runs claude-print and `claude -p` on the same prompt and the same
fake API, and compares what a script would see: stdout, exit code, json
field sets and types. It also checks the reason claude-print exists (the
transcript says "entrypoint": "cli") and that nothing is left behind.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Dict, List, Tuple

import pytest
from checks import (
    TOOL_PROMPT,
    assert_clean,
    assert_exit,
    assert_interactive,
    assert_same_shape,
    assert_text_like_claude_p,
    check_api_error_like_claude_p,
    check_tool_denied_like_claude_p,
)
from fake_api import FakeApiServer
from harness import (
    RUN_TIMEOUT,
    Sandbox,
    claude_release,
    run_claude_p,
    run_claude_print,
    run_pair,
)

pytestmark = pytest.mark.e2e


def type_names(obj: Dict[str, Any]) -> Dict[str, str]:
    return {k: type(v).__name__ for k, v in obj.items()}


def assert_same_cost(ours: Dict[str, Any], theirs: Dict[str, Any]) -> None:
    """total_cost_usd within 1% of claude -p's, and a cost for every model it priced."""
    assert ours["total_cost_usd"] == pytest.approx(theirs["total_cost_usd"], rel=0.01)
    for model, entry in theirs["modelUsage"].items():
        mine = [e for m, e in ours["modelUsage"].items() if m.split("[")[0] == model.split("[")[0]]
        assert mine, (model, list(ours["modelUsage"]))
        assert mine[0]["costUSD"] == pytest.approx(entry["costUSD"], rel=0.01), model


@pytest.mark.matrix
def test_cost_with_another_model_matches_claude_p(real_claude: str, sandbox: Sandbox) -> None:
    args = ["--output-format", "json", "--model", "claude-sonnet-4-5", "What is 2+2?"]
    ours = run_claude_print(sandbox, args, binary=real_claude)
    theirs = run_claude_p(sandbox, real_claude, args)
    assert_exit(ours, 0)
    assert_exit(theirs, 0)
    a, b = json.loads(ours.stdout), json.loads(theirs.stdout)
    assert isinstance(b["total_cost_usd"], float) and b["total_cost_usd"] > 0
    assert_same_cost(a, b)
    assert_clean(sandbox)


@pytest.mark.parametrize(
    "prompt",
    [
        pytest.param("What is 2+2?", marks=[pytest.mark.matrix, pytest.mark.between]),
        "Zeile eins: «Grüße» 🦀\n  second line, trailing spaces   \n$HOME `id` \\n 'q' \"qq\"\nend",
    ],
    ids=["one-line", "multiline-unicode"],
)
def test_argv_prompt_matches_claude_p(real_claude: str, sandbox: Sandbox, prompt: str) -> None:
    ours = run_claude_print(sandbox, ["--output-format", "json", prompt], binary=real_claude)
    theirs = run_claude_p(sandbox, real_claude, ["--output-format", "json", prompt])
    assert_exit(ours, 0)
    assert_exit(theirs, 0)
    a, b = json.loads(ours.stdout), json.loads(theirs.stdout)
    assert a["result"] == b["result"]
    assert a["num_turns"] == b["num_turns"]
    assert a["usage"]["input_tokens"] == b["usage"]["input_tokens"]
    assert a["usage"]["output_tokens"] == b["usage"]["output_tokens"]
    assert_same_cost(a, b)
    assert_same_shape(a, b)
    assert a["claude_version"] == claude_release(real_claude)
    assert_interactive(sandbox, a["session_id"])
    assert_clean(sandbox)

    assert_text_like_claude_p(sandbox, real_claude, [prompt])


@pytest.mark.matrix
def test_large_stdin_prompt_matches_claude_p(real_claude: str, sandbox: Sandbox) -> None:
    line = "The quick brown fox jumps over the lazy dog; ünïcödé ✓ 0123456789.\n"
    # Ends without whitespace: the paste path trims trailing whitespace (pinned below).
    data = (line * (200_000 // len(line) + 1)).encode() + b"end"
    assert len(data) > 200_000
    ours = run_claude_print(sandbox, [], stdin=data, binary=real_claude)
    theirs = run_claude_p(sandbox, real_claude, [], stdin=data)
    assert_exit(ours, 0)
    assert_exit(theirs, 0)
    assert ours.stdout == theirs.stdout
    assert ours.stdout.startswith(b"ACK ")
    assert_clean(sandbox)


@pytest.mark.matrix
def test_stdin_appended_to_argument(
    real_claude: str, sandbox: Sandbox, fake_api: FakeApiServer
) -> None:
    ours = run_claude_print(sandbox, ["summarise"], stdin=b"piped\ttext", binary=real_claude)
    assert_exit(ours, 0)
    assert fake_api.last_prompt_with("summarise") == "summarise\npiped\ttext"
    theirs = run_claude_p(sandbox, real_claude, ["summarise"], stdin=b"piped\ttext")
    assert_exit(theirs, 0)
    assert ours.stdout == theirs.stdout
    assert_clean(sandbox)


@pytest.mark.matrix
def test_tool_use_is_denied_and_reported(real_claude: str, sandbox: Sandbox) -> None:
    check_tool_denied_like_claude_p(sandbox, real_claude)


@pytest.mark.matrix
def test_api_error_exits_1_like_claude_p(real_claude: str, sandbox: Sandbox) -> None:
    check_api_error_like_claude_p(sandbox, real_claude)


@pytest.mark.slow  # nine runs one after the other
def test_delivery_paths_are_pinned(
    real_claude: str, sandbox: Sandbox, fake_api: FakeApiServer
) -> None:
    """What each way into the TUI hands the model (docs/contract.md, prompt delivery):
    editor (Ctrl+G, the default for stdin), a bracketed paste, and the byte-exact argv."""
    cases = {
        # prompt: (via editor, via paste)
        "col1\tcol2\nend": ("col1\tcol2\nend", "col1    col2\nend"),  # tabs kept
        "one line  \n": ("one line", "one line"),  # trailing whitespace trimmed
        "   leading spaces": ("   leading spaces", "   leading spaces"),
    }
    for prompt, (via_editor, via_paste) in cases.items():
        key = prompt.strip()[:4]
        for via, arrived in (("editor", via_editor), ("paste", via_paste), ("argv", prompt)):
            if arrived is None:
                continue
            proc = run_claude_print(
                sandbox, ["--prompt-via", via], stdin=prompt.encode(), binary=real_claude
            )
            assert_exit(proc, 0)
            assert fake_api.last_prompt_with(key) == arrived, (via, prompt)
    assert_clean(sandbox)


@pytest.mark.matrix  # the contract's per-release rule
@pytest.mark.between
def test_large_paste_is_wrapped_only_where_the_contract_says(
    real_claude: str, sandbox: Sandbox, fake_api: FakeApiServer
) -> None:
    """A paste of 4+ lines reaches the model in <pasted_content> tags where the release's
    facts say so (2.1.330 with non-essential traffic off); the editor path never is."""
    from claude_print import contract

    prompt = "wrap check\nline two\nline three\nline four\nline five"
    wraps = contract.facts_for(claude_release(real_claude)).paste_wraps
    pasted = run_claude_print(
        sandbox, ["--prompt-via", "paste"], stdin=prompt.encode(), binary=real_claude
    )
    assert_exit(pasted, 0)
    received = fake_api.last_prompt_with("wrap check")
    assert ("<pasted_content id=" in received) == wraps, received
    assert (received == prompt) == (not wraps)
    loaded = run_claude_print(sandbox, [], stdin=prompt.encode(), binary=real_claude)
    assert_exit(loaded, 0)
    assert fake_api.last_prompt_with("wrap check") == prompt
    assert_clean(sandbox)


def stream_events(stdout: bytes) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def read_stream(proc: subprocess.Popen[bytes], timeout: float) -> Tuple[List[bytes], bool, bytes]:
    """stdout's lines as they come, whether the run was still going when the first
    assistant event came, and stderr. Fails (and kills the run) when the output has not
    ended within `timeout`: a hang is a failure with what was read, never a stuck suite."""
    stdout, stderr = proc.stdout, proc.stderr
    assert stdout is not None and stderr is not None
    lines: List[bytes] = []
    live_at_first_assistant: List[bool] = []
    errors: List[bytes] = []

    def read_stdout() -> None:
        for line in stdout:
            lines.append(line)
            if not live_at_first_assistant and b'"type":"assistant"' in line:
                live_at_first_assistant.append(proc.poll() is None)

    readers = [
        threading.Thread(target=read_stdout, daemon=True),
        threading.Thread(target=lambda: errors.append(stderr.read()), daemon=True),
    ]
    for reader in readers:
        reader.start()
    deadline = time.monotonic() + timeout
    for reader in readers:
        reader.join(max(0.0, deadline - time.monotonic()))
    if any(reader.is_alive() for reader in readers):
        proc.kill()
        proc.wait()
        for reader in readers:
            reader.join(5)
        tail = b"".join(lines[-5:]).decode("utf-8", "replace")
        pytest.fail(
            f"the stream-json output did not end within {timeout:g}s; "
            f"{len(lines)} line(s), the last:\n{tail}\n"
            f"stderr:\n{b''.join(errors).decode('utf-8', 'replace')}"
        )
    proc.wait(timeout=RUN_TIMEOUT)
    return lines, bool(live_at_first_assistant and live_at_first_assistant[0]), errors[0]


@pytest.mark.matrix
@pytest.mark.parametrize(
    "prompt",
    ["What is 2+2?", pytest.param(TOOL_PROMPT, marks=pytest.mark.between)],
    ids=["plain", "tool"],
)
def test_stream_json_matches_claude_p(real_claude: str, sandbox: Sandbox, prompt: str) -> None:
    args = ["--output-format", "stream-json", "--verbose", prompt]
    proc = subprocess.Popen(
        [sys.executable, "-m", "claude_print", "--claude-binary", real_claude, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        cwd=sandbox.project,
        env=sandbox.env(),
    )
    lines, live_at_first_assistant, stderr = read_stream(proc, RUN_TIMEOUT)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{stderr.decode('utf-8', 'replace')}"
    assert any(b'"type":"assistant"' in line for line in lines), b"".join(lines)
    assert live_at_first_assistant, "the assistant event must arrive while the run goes on"
    ours = stream_events(b"".join(lines))
    theirs = stream_events(run_claude_p(sandbox, real_claude, args).stdout)
    from claude_print import contract

    if contract.facts_for(claude_release(real_claude)).print_default_mode == "auto":
        # claude -p runs in auto mode here, claude-print's TUI in default (docs/contract.md)
        theirs = [e for e in theirs if e.get("subtype") != "informational"]
        for event in theirs:  # an auto-mode denial says why; a default-mode one does not
            if event.get("subtype") == "permission_denied":
                event.pop("decision_reason", None)
                event.pop("decision_reason_type", None)
    assert [(e["type"], e.get("subtype")) for e in ours] == [
        (e["type"], e.get("subtype")) for e in theirs
    ]
    for a, b in zip(ours, theirs):
        assert set(b) <= set(a), (b["type"], sorted(set(b) - set(a)))
        for key in b:
            if a[key] is not None and b[key] is not None:
                assert type(a[key]) is type(b[key]), (b["type"], key)
        if b["type"] in ("assistant", "user"):
            assert a["session_id"] == ours[0]["session_id"]
            assert set(b["message"]) <= set(a["message"]), sorted(
                set(b["message"]) - set(a["message"])
            )
    assert ours[-1]["result"] == theirs[-1]["result"]
    assert_clean(sandbox)


@pytest.mark.matrix
def test_max_turns_reported_like_claude_p(real_claude: str, sandbox: Sandbox) -> None:
    args = ["--output-format", "json", "--max-turns", "1", TOOL_PROMPT]
    ours = run_claude_print(sandbox, args, binary=real_claude)
    theirs = run_claude_p(sandbox, real_claude, args)
    assert_exit(ours, 1)
    assert_exit(theirs, 1)
    a, b = json.loads(ours.stdout), json.loads(theirs.stdout)
    # Stopped before the API call claude -p does not make: the same usage and cost.
    keys = ("subtype", "is_error", "num_turns", "errors", "terminal_reason", "stop_reason")
    view = [
        (
            *(o[k] for k in keys),
            o["usage"]["input_tokens"],
            o["usage"]["output_tokens"],
            o["total_cost_usd"],
        )
        for o in (a, b)
    ]
    assert view[0] == view[1], f"ours {ours.stdout!r}\nclaude -p {theirs.stdout!r}"
    assert_same_shape(a, b)
    assert_text_like_claude_p(sandbox, real_claude, args[2:])


def test_timeout_ends_the_run(real_claude: str, sandbox: Sandbox) -> None:
    args = ["--output-format", "json", "--timeout", "4", "Slow [[sleep:60]]"]
    started = time.monotonic()
    proc = run_claude_print(sandbox, args, binary=real_claude)
    assert time.monotonic() - started < 30
    assert_exit(proc, 124)
    obj = json.loads(proc.stdout)
    assert (obj["subtype"], obj["is_error"]) == ("error_timeout", True)
    assert b"timed out after 4s" in proc.stderr
    assert_clean(sandbox)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_mid_answer(
    real_claude: str, sandbox: Sandbox, fake_api: FakeApiServer, signum: int
) -> None:
    # Unique per run: the fake API outlives the test, and the matrix runs it per release.
    marker = f"Slow {signum} {sandbox.home.parent.name} [[sleep:60]]"
    proc = subprocess.Popen(
        [sys.executable, "-m", "claude_print", "--claude-binary", real_claude, marker],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        cwd=sandbox.project,
        env=sandbox.env(),
    )
    assert fake_api.wait_for_prompt(marker, timeout=60), "the turn never reached the API"
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert b"interrupted" in err
    assert b"Traceback" not in err
    assert_clean(sandbox)


def test_json_verbose_is_an_event_array_like_claude_p(real_claude: str, sandbox: Sandbox) -> None:
    args = ["--output-format", "json", "--verbose", "What is 2+2?"]
    ours = run_claude_print(sandbox, args, binary=real_claude)
    theirs = run_claude_p(sandbox, real_claude, args)
    assert_exit(ours, 0)
    assert_exit(theirs, 0)
    a, b = json.loads(ours.stdout), json.loads(theirs.stdout)
    assert [e["type"] for e in a] == [e["type"] for e in b] == ["system", "assistant", "result"]
    assert a[-1]["result"] == b[-1]["result"]
    # --verbose means what it means to claude -p: claude-print's own lines are --trace.
    assert b"[claude-print +" not in ours.stderr, ours.stderr.decode()
    assert_clean(sandbox)


def test_long_answer_matches_claude_p(real_claude: str, sandbox: Sandbox) -> None:
    """A 30 KB answer fills the PTY while claude-print waits for the transcript: the
    loop must keep reading it, or the TUI blocks and the turn never reaches disk."""
    words = " ".join(f"word{i}" for i in range(4000))
    prompt = f"Say [[reply:{words}  \n  tail line  ]]"
    ours = run_claude_print(sandbox, ["--output-format", "json", prompt], binary=real_claude)
    theirs = run_claude_p(sandbox, real_claude, ["--output-format", "json", prompt])
    assert_exit(ours, 0)
    assert_exit(theirs, 0)
    a, b = json.loads(ours.stdout), json.loads(theirs.stdout)
    assert a["result"] == b["result"]
    assert len(a["result"]) > 30_000
    assert a["usage"]["output_tokens"] == b["usage"]["output_tokens"]
    assert_clean(sandbox)


def test_a_bang_prompt_never_runs_a_shell_command(real_claude: str, sandbox: Sandbox) -> None:
    # As the TUI's argument or loaded with Ctrl+G (stdin), "!..." is a plain prompt, as
    # in claude -p; pasted, it would be a shell command, so --prompt-via paste refuses it.
    marker = sandbox.tmp / "bang-ran"
    prompt = f"!touch {marker}"
    theirs = run_claude_p(sandbox, real_claude, [prompt])
    assert_exit(theirs, 0)
    for args, stdin in (([prompt], None), ([], prompt.encode())):
        ours = run_claude_print(sandbox, args, stdin=stdin, binary=real_claude)
        assert_exit(ours, 0)
        assert ours.stdout == theirs.stdout
    refused = run_claude_print(
        sandbox, ["--prompt-via", "paste"], stdin=prompt.encode(), binary=real_claude
    )
    assert_exit(refused, 2)
    assert b"takes as a shell command" in refused.stderr
    assert not marker.exists()
    assert_clean(sandbox)


def test_max_turns_stream_matches_claude_p(real_claude: str, sandbox: Sandbox) -> None:
    args = ["--output-format", "stream-json", "--verbose", "--max-turns", "1", TOOL_PROMPT]
    ours = run_claude_print(sandbox, args, binary=real_claude)
    theirs = run_claude_p(sandbox, real_claude, args)
    assert_exit(ours, 1)
    assert_exit(theirs, 1)
    a = [json.loads(line) for line in ours.stdout.splitlines()]
    b = [json.loads(line) for line in theirs.stdout.splitlines()]
    assert [(e["type"], e.get("subtype")) for e in a] == [(e["type"], e.get("subtype")) for e in b]
    assert a[-1]["usage"]["input_tokens"] == b[-1]["usage"]["input_tokens"]
    assert_clean(sandbox)


@pytest.mark.matrix
@pytest.mark.between  # a screen
def test_api_key_question_fails_with_advice(real_claude: str, sandbox: Sandbox) -> None:
    """The TUI asks whether to use ANTHROPIC_API_KEY (a billing decision): never answered."""
    seed = json.loads((sandbox.home / ".claude.json").read_text())
    del seed["customApiKeyResponses"]
    (sandbox.home / ".claude.json").write_text(json.dumps(seed))
    proc = run_claude_print(sandbox, ["What is 2+2?"], binary=real_claude)
    assert_exit(proc, 2)
    assert b"asks whether to use the API key in ANTHROPIC_API_KEY" in proc.stderr, proc.stderr
    assert proc.stdout == b""
    assert "customApiKeyResponses" not in json.loads((sandbox.home / ".claude.json").read_text())
    assert_clean(sandbox)


def test_an_interrupt_before_the_prompt_went_in_interrupts_its_turn(
    real_claude: str, sandbox: Sandbox
) -> None:
    """stream-json input: the prompt and an `interrupt` at once, while the TUI still
    boots (the Python SDK's interrupt case does this when boot takes over 2 s). The CLI
    has the turn under way and interrupts it (docs/agent-sdk-protocol.md, section 7:
    error_during_execution, num_turns 2); so does claude-print once the prompt is in,
    and the next prompt is answered (the box the interrupted prompt was put back in is
    replaced)."""
    streams = ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "claude_print", "--claude-binary", real_claude, *streams],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=sandbox.project,
        env=sandbox.env(),
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None

    def send(message: Dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    def user(text: str) -> Dict[str, Any]:
        return {"type": "user", "message": {"role": "user", "content": text}}

    send(user("[[sleep:30]] slow"))
    send({"type": "control_request", "request_id": "r1", "request": {"subtype": "interrupt"}})
    results: List[Dict[str, Any]] = []
    timer = threading.Timer(RUN_TIMEOUT, proc.kill)
    timer.start()
    try:
        for line in proc.stdout:
            message = json.loads(line)
            if message.get("type") != "result":
                continue
            results.append(message)
            if len(results) == 1:
                send(user("after [[reply:AFTER]]"))
            else:
                proc.stdin.close()
        proc.wait(RUN_TIMEOUT)
    finally:
        timer.cancel()
    stderr = proc.stderr.read().decode("utf-8", "replace")
    proc.stderr.close()
    proc.stdout.close()
    assert proc.returncode == 0, f"exit {proc.returncode}; stderr:\n{stderr}"
    assert [(r["subtype"], r["num_turns"]) for r in results] == [
        ("error_during_execution", 2),
        ("success", 1),
    ]
    assert results[1]["result"] == "AFTER"
    # The interrupted turn is recorded, as the CLI's is (an Esc before the TUI wrote the
    # prompt dropped the turn unrecorded: 1 run in 4 on 2.1.332).
    [path] = [p for p in sandbox.transcripts() if p.stem == results[0]["session_id"]]
    assert "[[sleep:30]] slow" in path.read_text(), stderr
    assert_clean(sandbox)


@pytest.mark.matrix
@pytest.mark.between
def test_messages_written_together_are_answered_as_claude_p_answers_them(
    real_claude: str, sandbox: Sandbox, fake_api: FakeApiServer, oracle_api: FakeApiServer
) -> None:
    """Four stream-json messages written at once: `claude -p` answers the first alone and
    the three that came during its turn as one prompt, their texts joined by a line
    break (measured on 2.1.197, 2.1.270 and 2.1.332); so does claude-print."""
    lines = [
        json.dumps({"type": "user", "message": {"role": "user", "content": f"message {n}"}})
        for n in range(1, 5)
    ]
    args = ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    stdin = ("\n".join(lines) + "\n").encode()
    pair = run_pair(sandbox, real_claude, fake_api, oracle_api, args, args, stdin=stdin)
    assert_exit(pair.ours, pair.theirs.returncode)
    joined = ["message 1", "message 2\nmessage 3\nmessage 4"]
    assert [r["prompt"] for r in pair.their_requests] == joined
    assert [r["prompt"] for r in pair.our_requests] == joined
    assert results_of(pair.ours.stdout) == results_of(pair.theirs.stdout)


def results_of(stdout: bytes) -> List[Tuple[int, str]]:
    events = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return [(e["num_turns"], e["result"]) for e in events if e["type"] == "result"]
