"""The `claude -p` command line as argparse sees it: one argument per row of flags.FLAGS,
the forwarded flags kept in order for the TUI, the refused ones refused, the values of
claude-print's own checked, and usage errors worded as `claude -p` words them."""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any, Dict, NoReturn, Optional

from claude_print import flags
from claude_print.errors import ClaudePrintError

OUTPUT_FORMATS = ("text", "json", "stream-json")
PROMPT_VIA = ("auto", "argv", "editor", "paste")
INPUT_FORMATS = ("text", "stream-json")


GROUP_TITLES = {
    flags.OWN: "claude-print's own, and print mode's",
    flags.FORWARDED: "forwarded to Claude Code (it does there what it does in claude -p)",
    flags.EMULATED: "emulated (claude -p only; claude-print does the same)",
    flags.REFUSED: "refused (exit 2, nothing started)",
}


HELP_EPILOG = """\
examples:
  claude-print "What is 2+2?"
  git diff | claude-print "Review this diff"
  claude-print --input-file task.md --output-format json --timeout 600 > result.json
  claude-print --output-format stream-json --verbose "Fix the tests" | jq -c .type
  claude-print --check

Defaults can be set under [defaults] in $XDG_CONFIG_HOME/claude-print/config.toml
(else ~/.config/claude-print/config.toml); its keys: model, max_turns, timeout_secs,
inherit_hooks, claude_binary, warm, warm_idle_secs, warm_pool (README, "Config file").

Exit codes: 0 ok, 1 assistant/API error, 2 usage or internal error, 124 timeout,
130 interrupted."""


def build_parser() -> argparse.ArgumentParser:
    """The `claude -p` command line, one argument per row of flags.FLAGS."""
    p = _Parser(
        prog="claude-print",
        description=(
            "Drop-in replacement for `claude -p`: runs Claude Code's interactive TUI in a "
            "pseudo-terminal and prints the answer like print mode does."
        ),
        epilog=HELP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("prompt", nargs="?", help="the prompt (stdin, if piped, is appended)")
    groups = {kind: p.add_argument_group(title) for kind, title in GROUP_TITLES.items()}
    own = _own_arguments()
    for flag in flags.FLAGS:
        kwargs: Dict[str, Any] = {"dest": flag.attribute, "help": flag.note or None}
        if flag.metavar:
            kwargs["metavar"] = flag.metavar
        if flag.kind == flags.FORWARDED:
            kwargs.update(action=_Forward, nargs=_NARGS[flag.takes])
        elif flag.kind == flags.REFUSED:
            kwargs.update(action=_Refuse, nargs=_NARGS[flag.takes])
        else:
            kwargs.update(own.get(flag.name, {"action": "store_true"}))
            if "nargs" not in kwargs and kwargs.get("action") != "store_true":
                kwargs["nargs"] = _NARGS[flag.takes]
        groups[flag.kind].add_argument(*flag.names, **kwargs)
    return p


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line, worded as `claude -p` words them (commander.js), not
    argparse's usage dump; exit 2 (claude-print's usage code)."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"claude-print: error: {usage_message(message)}\n")
        sys.exit(2)


def usage_message(message: str) -> str:
    """argparse's message in `claude -p`'s words."""
    unknown = re.match(r"unrecognized arguments: (\S+)", message)
    if unknown and unknown.group(1).startswith("-"):
        return f"unknown option '{unknown.group(1)}' (claude-print --help lists the flags)"
    if unknown:
        return f"too many arguments: '{unknown.group(1)}' (quote a prompt with spaces)"
    choice = re.match(r"argument (\S+): invalid choice: '(.*)' \(choose from (.*)\)", message)
    if choice:
        allowed = ", ".join(c.strip("'") for c in choice.group(3).split(", "))
        return (
            f"option '{choice.group(1)}' argument '{choice.group(2)}' is invalid. "
            f"Allowed choices are {allowed}."
        )
    value = re.match(r"argument ([^:/\s]+)(?:/\S+)?: ('.*)", message)
    if value:
        return f"option '{value.group(1)}' argument {value.group(2)}"
    typed = re.match(r"argument ([^:/\s]+)(?:/\S+)?: invalid \w+ value: '(.*)'", message)
    if typed:
        return f"option '{typed.group(1)}' argument '{typed.group(2)}' is invalid"
    return message


_NARGS: Dict[str, Any] = {flags.SWITCH: 0, flags.ONE: None, flags.OPTIONAL: "?", flags.SOME: "+"}


class _Forward(argparse.Action):
    """Keeps the flag for the TUI, in command-line order, and its value for claude-print."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: Optional[str] = None,
    ) -> None:
        flag = flags.BY_NAME[option_string or self.option_strings[0]]
        if flag.takes == flags.SWITCH:
            setattr(namespace, self.dest, True)
            words = [flag.name]
        elif flag.takes == flags.SOME:
            setattr(namespace, self.dest, [*(getattr(namespace, self.dest) or []), *values])
            words = [flag.name, *values]
        elif values is None:  # an optional value, not given
            setattr(namespace, self.dest, True)
            words = [flag.name]
        else:
            setattr(namespace, self.dest, values)
            # `--flag=value` when the value could pass for a flag or is empty.
            odd = values == "" or values.startswith("-")
            words = [f"{flag.name}={values}"] if odd else [flag.name, values]
        namespace.forwarded = [*getattr(namespace, "forwarded", []), tuple(words)]


class _Refuse(argparse.Action):
    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: Optional[str] = None,
    ) -> None:
        raise ClaudePrintError(flags.refusal(flags.BY_NAME[option_string or self.dest]))


def _own_arguments() -> Dict[str, Dict[str, Any]]:
    return {
        "--output-format": {"choices": OUTPUT_FORMATS, "default": None},
        "--input-file": {},
        "--timeout": {"type": _positive_float, "default": None},
        "--claude-binary": {},
        "--prompt-via": {"choices": PROMPT_VIA, "default": "auto"},
        "--max-turns": {"type": _positive_int},
        "--max-budget-usd": {"type": _budget},
        "--settings": {"action": "append"},
        "--json-schema": {},
        "--resume": {"nargs": "?", "const": ""},
        "--input-format": {"choices": INPUT_FORMATS},
        "--permission-prompt-tool": {},
        "--permission-prompts": {"choices": ("host", "none")},
        "--betas": {"action": "extend", "default": []},
        "--mcp-config": {"action": "extend", "default": []},
        "--file": {"action": "extend", "default": []},
        "--warm-pool": {"type": _positive_int},
    }


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is invalid. must be a number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is invalid. must be a positive integer")
    return value


def _budget(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("must be a number greater than 0 (US dollars)")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value
