"""Fault injection (issue 4): unattended runs never hang and never leak. The prompt on its
way into the TUI: byte for byte as argv, as the input box leaves it by the editor or a
paste, at 300 KB and at the argv limit, never in the child's argv when it came on stdin
or from a file; a lost prompt, a lost Enter or a paste that never shows fails or is
retried instead of hanging; prompts the input box would take as a command (a leading
`!`, a paste-end marker, control characters only) are refused before the start.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Dict

import pytest
from harness import Sandbox
from mock_runs import ack, check, child_argv, err, run_mock, submitted

from claude_print import contract

PROMPTS: Dict[str, str] = {
    "tabs": "col1\tcol2\t\tcol3\n\tindented\tline\nend",
    "trailing-spaces": "line with trailing spaces   \nand a tab after \t\nend",
    "quotes": "'single' \"double\" \"unbalanced 'mixed\" it's",
    "shell": "$(touch /tmp/pwned-by-prompt) `id` ${HOME} $HOME; rm -rf nothing && echo | cat",
    "backslashes": "C:\\path\\to\\file \\n is not a newline \\\\ \\t \\x00 \\u2713 \\",
    "emoji": "emoji 🦀 👨\u200d👩\u200d👧 ✓ 日本語 e\u0301 nbsp\u00a0here «guillemets» \U0001d518",
    "leading-dash": "-p --output-format json --help",
    "multiline": "first\n\n\nafter blank lines\n  indented\n",
}


def paste_transform(prompt: str) -> str:
    """What the TUI's input box does to a pasted prompt (tabs are the only loss)."""
    return prompt.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")


def editor_transform(prompt: str) -> str:
    """What the input box of 2.1.197 (mock_claude's release) does to a prompt loaded with
    Ctrl+G from claude-print's $EDITOR script (the default for stdin and file prompts):
    trailing whitespace is trimmed as JavaScript's trimEnd() does and combining characters
    are composed (NFC); all else stays."""
    return re.sub(
        "[\t\n\v\f\r \u00a0\u2028\u2029\ufeff]+$", "", unicodedata.normalize("NFC", prompt)
    )


@pytest.mark.parametrize("name", sorted(PROMPTS))
def test_argv_prompt_is_byte_exact(sandbox: Sandbox, name: str) -> None:
    prompt = PROMPTS[name]
    proc = run_mock(sandbox, ["--", prompt])
    check(sandbox, proc, 0)
    assert submitted(sandbox) == [prompt.encode("utf-8")]
    assert proc.stdout.decode() == ack(prompt) + "\n"
    argv = child_argv(sandbox)
    assert argv is not None
    assert argv[-2:] == ["--", prompt]


@pytest.mark.parametrize("via", ["editor", "paste"])
@pytest.mark.parametrize("name", sorted(PROMPTS))
def test_stdin_prompt_arrives_as_the_input_box_leaves_it(
    sandbox: Sandbox, name: str, via: str
) -> None:
    """editor (the default): exact but for trailing whitespace; paste: tabs become spaces."""
    prompt = PROMPTS[name]
    proc = run_mock(sandbox, ["--prompt-via", via], stdin=prompt.encode("utf-8"))
    check(sandbox, proc, 0)
    arrived = editor_transform(prompt) if via == "editor" else paste_transform(prompt)
    assert submitted(sandbox) == [arrived.encode("utf-8")]
    assert proc.stdout.decode() == ack(arrived) + "\n"
    argv = child_argv(sandbox)
    assert argv is not None
    assert not any(prompt in arg or arrived in arg for arg in argv)
    assert "--" not in argv


def big_prompt(size: int) -> str:
    line = "tab\tseparated\tcolumns ✓ 🦀 $(x) `y` \\z 'q' \"qq\"  trailing  \n"
    text = line * (size // len(line.encode()) + 1)
    return text.encode()[:size].decode("utf-8", "ignore").rstrip("\n") + "END"


@pytest.mark.parametrize("via", ["editor", "paste"])
def test_300kb_stdin_prompt(sandbox: Sandbox, via: str) -> None:
    prompt = big_prompt(300 * 1024)
    proc = run_mock(
        sandbox, ["--trace", "--timeout", "60", "--prompt-via", via], stdin=prompt.encode()
    )
    check(sandbox, proc, 0)
    arrived = editor_transform(prompt) if via == "editor" else paste_transform(prompt)
    assert submitted(sandbox) == [arrived.encode("utf-8")]
    assert proc.stdout.decode() == ack(arrived) + "\n"


def test_largest_argv_prompt_is_exact(sandbox: Sandbox) -> None:
    prompt = big_prompt(contract.MAX_ARGV_PROMPT_BYTES - 8)
    prompt += "x" * (contract.MAX_ARGV_PROMPT_BYTES - len(prompt.encode()))
    assert len(prompt.encode()) == contract.MAX_ARGV_PROMPT_BYTES
    proc = run_mock(sandbox, ["--", prompt])
    check(sandbox, proc, 0)
    assert submitted(sandbox) == [prompt.encode("utf-8")]
    assert proc.stdout.decode() == ack(prompt) + "\n"


def test_300kb_with_prompt_via_argv_is_refused(sandbox: Sandbox) -> None:
    prompt = big_prompt(300 * 1024)
    proc = run_mock(sandbox, ["--prompt-via", "argv"], stdin=prompt.encode("utf-8"))
    check(sandbox, proc, 2, "one argument may hold at most", "--prompt-via paste")
    assert submitted(sandbox) == []


def test_stdin_prompt_with_prompt_via_argv_is_exact(sandbox: Sandbox) -> None:
    prompt = PROMPTS["tabs"]
    proc = run_mock(sandbox, ["--prompt-via", "argv"], stdin=prompt.encode())
    check(sandbox, proc, 0)
    assert submitted(sandbox) == [prompt.encode()]


def test_argument_plus_stdin_goes_by_editor(sandbox: Sandbox) -> None:
    """Part of it came on stdin, so none of it may show in the process list."""
    proc = run_mock(sandbox, ["summarise"], stdin=b"secret piped text\n")
    check(sandbox, proc, 0)
    assert submitted(sandbox) == [b"summarise\nsecret piped text"]  # the box trims the end
    argv = child_argv(sandbox)
    assert argv is not None
    assert not any("secret" in arg or "summarise" in arg for arg in argv)


def test_input_file_prompt_goes_by_editor(sandbox: Sandbox) -> None:
    path = sandbox.home / "prompt.txt"
    path.write_text("secret file prompt")
    proc = run_mock(sandbox, ["--input-file", str(path)])
    check(sandbox, proc, 0)
    assert submitted(sandbox) == [b"secret file prompt"]
    argv = child_argv(sandbox)
    assert argv is not None
    assert not any("secret" in arg for arg in argv)


def test_child_argv_never_has_print_mode_flags(sandbox: Sandbox) -> None:
    proc = run_mock(
        sandbox,
        [
            "-p",
            "--output-format",
            "json",
            "--timeout",
            "50",
            "--max-turns",
            "3",
            "--verbose",
            "--model",
            "claude-test-model",
            "--allowedTools",
            "Read",
            "Grep",
            "--",
            "hi",
        ],
    )
    check(sandbox, proc, 0)
    argv = child_argv(sandbox)
    assert argv is not None
    for flag in ("-p", "--print", "--output-format", "--timeout", "--max-turns", "--verbose"):
        assert flag not in argv
    assert argv[argv.index("--model") + 1] == "claude-test-model"
    assert argv[argv.index("--allowedTools") + 1 : argv.index("--allowedTools") + 3] == [
        "Read",
        "Grep",
    ]
    assert argv[-2:] == ["--", "hi"]
    events = json.loads(proc.stdout)  # json --verbose: every event in one array
    assert events[-1]["result"] == ack("hi")


PASTE_END_PROMPT = "first part \x1b[201~\rsecond part"


def test_paste_end_marker_in_a_stdin_prompt_goes_by_editor(sandbox: Sandbox) -> None:
    # A stdin prompt goes by the editor (Ctrl+G), where the marker is no marker: the whole
    # prompt arrives as one submission, as the input box leaves it (ESC dropped, CR -> LF).
    proc = run_mock(sandbox, [], stdin=PASTE_END_PROMPT.encode())
    check(sandbox, proc, 0)
    arrived = editor_transform(PASTE_END_PROMPT)
    assert submitted(sandbox) == [arrived.encode()]
    assert proc.stdout.decode() == ack(arrived) + "\n"


def test_paste_end_marker_with_prompt_via_paste_is_refused(sandbox: Sandbox) -> None:
    # Pasted, the marker would end the paste early and the rest would be typed as keys.
    proc = run_mock(sandbox, ["--prompt-via", "paste"], stdin=PASTE_END_PROMPT.encode())
    check(sandbox, proc, 2, "control character '\\x1b' at character 11", "--prompt-via editor")
    assert child_argv(sandbox) is None  # refused before anything started


@pytest.mark.parametrize("via", ["argv", "paste"])
def test_a_lost_prompt_fails_instead_of_hanging(sandbox: Sandbox, via: str) -> None:
    proc = run_mock(
        sandbox,
        ["--prompt-via", via, "hi"],
        "lose_prompt",
        env={"CLAUDE_PRINT_PROMPT_TIMEOUT": "3"},
    )
    check(sandbox, proc, 2)
    lost = {
        "argv": "the prompt did not reach Claude Code within 3s",
        "paste": "Claude Code did not submit the prompt within 3s of Enter",
    }
    assert lost[via] in err(proc)


@pytest.mark.parametrize("size", [40, 5000], ids=["short-paste", "long-paste"])
def test_a_lost_enter_after_a_paste_is_pressed_again(sandbox: Sandbox, size: int) -> None:
    # The real TUI under CPU load once kept a 200 KB paste in its input box and lost
    # the Enter that followed it; the prompt must still go in, exactly once.
    prompt = ("lost enter " * size)[:size]
    proc = run_mock(sandbox, ["--trace", "--prompt-via", "paste", prompt], "drop_enter")
    check(sandbox, proc, 0, "pressing Enter again")
    assert proc.stdout.decode() == ack(prompt) + "\n"
    assert submitted(sandbox) == [prompt.encode()]


def test_a_paste_that_never_shows_fails_instead_of_hanging(sandbox: Sandbox) -> None:
    proc = run_mock(
        sandbox,
        ["--prompt-via", "paste", "hi"],
        "ignore_paste",
        env={"CLAUDE_PRINT_PROMPT_TIMEOUT": "3"},
    )
    check(sandbox, proc, 2, "Claude Code did not submit the prompt within 3s of Enter")
    assert submitted(sandbox) == []


def test_a_pasted_prompt_starting_with_a_bang_is_refused(sandbox: Sandbox) -> None:
    # Pasted, "!..." switches the TUI's input box to shell mode and Enter runs it here.
    proc = run_mock(
        sandbox, ["--prompt-via", "paste"], stdin=b"!touch /tmp/claude-print-must-not-run"
    )
    check(sandbox, proc, 2, "takes as a shell command", "--prompt-via editor")
    assert child_argv(sandbox) is None  # refused before anything started


def test_a_stdin_prompt_starting_with_a_bang_is_plain_text(sandbox: Sandbox) -> None:
    # Loaded with Ctrl+G, "!..." stays text (measured on 2.1.197 and 2.1.330).
    proc = run_mock(sandbox, [], stdin=b"!not a shell command")
    check(sandbox, proc, 0)
    assert submitted(sandbox) == [b"!not a shell command"]


@pytest.mark.parametrize("prompt", [" !leading space", "# hash", "&amp", "a ! later"])
def test_other_leading_characters_are_pasted(sandbox: Sandbox, prompt: str) -> None:
    proc = run_mock(sandbox, [], stdin=prompt.encode())
    check(sandbox, proc, 0)
    assert submitted(sandbox) == [prompt.encode()]


def test_a_bang_prompt_in_argv_goes_as_argv(sandbox: Sandbox) -> None:
    proc = run_mock(sandbox, ["!not a shell command"])
    check(sandbox, proc, 0)
    assert submitted(sandbox) == [b"!not a shell command"]


@pytest.mark.parametrize("via", ["argv", "editor"])
@pytest.mark.parametrize("prompt", ["\x03", "\x1b\x1b", "\x01 \x02\t"])
def test_a_prompt_of_control_characters_only_fails_at_once_where_they_are_dropped(
    sandbox: Sandbox, via: str, prompt: str
) -> None:
    """From 2.1.277 the TUI drops control characters from every prompt: nothing would be
    left to send, so the run fails before starting it, not after a 20 s wait."""
    proc = run_mock(
        sandbox, ["--prompt-via", via, "--", prompt], env={"MOCK_CLAUDE_VERSION": "2.1.331"}
    )
    check(sandbox, proc, 2, "the prompt is empty once Claude Code", "has dropped its control")
    assert child_argv(sandbox) is None  # nothing was started
