"""`--json-schema` for the TUI: a stdio MCP server offering `claude -p`'s StructuredOutput tool.

`claude -p --json-schema SCHEMA` gives the model one more tool, ``StructuredOutput``,
whose input schema is SCHEMA, and returns the tool's validated input as the result's
``structured_output``. The interactive TUI accepts ``--json-schema`` but ignores it, so
claude-print serves the same tool itself: this module is a Model Context Protocol
server (JSON-RPC 2.0, one message a line on stdin/stdout) that Claude Code starts from
the ``--mcp-config`` document `mcp_config` builds. The model sees it as
``mcp__claude-print__StructuredOutput``.

What `claude -p` does, measured on 2.1.197 and 2.1.330 against tests/support/fake_api.py:

- the tool: name ``StructuredOutput``, description `DESCRIPTION`, ``input_schema`` the
  schema exactly as given; nothing is added to the system prompt;
- a valid call ends the turn at once (no further API call): ``result`` is
  ``JSON.stringify(input)``, ``structured_output`` the input, ``stop_reason``
  ``tool_use``, ``num_turns`` 2 (one more per failed attempt before it);
- an invalid call gets the tool_result ``Output does not match required schema: ...``
  (`schema_check.mismatch`, ``is_error: true``) and the model tries again; after
  `MAX_ATTEMPTS` failed calls (``MAX_STRUCTURED_OUTPUT_RETRIES`` overrides it) the run
  ends with ``error_max_structured_output_retries`` (`retries_message`), exit 1;
- a model that answers without calling the tool gets one more user message,
  `ENFORCE_MESSAGE`, and one more API call; if it still does not call the tool, the
  result is a plain success without ``structured_output``.

Wiring it into a TUI run (measured on 2.1.197 and 2.1.330 with a scratch driver):

- argv: ``--mcp-config <file holding mcp_config(...)>`` and ``--allowedTools
  mcp__claude-print__StructuredOutput`` (else PermissionRequest, which claude-print
  denies); claude-print's own ``--settings`` must carry the hooks below (a second
  ``--settings`` replaces the first);
- the TUI connects MCP servers in the background and its first request goes out
  without the tool ("servers are still connecting"), even 0.26 s after the server
  answered tools/list: a UserPromptSubmit hook that waits for the ready file (second
  argument) and then 0.3 s more made the tool appear (0.3, 0.6, 1.0 s: all passed) on
  a quiet machine. Under load 0.3 s of wall time is not 0.3 s of the TUI's time: in 1
  run of 16 on a loaded 2-core machine (2.1.197) the request went out without the tool
  and the model's text became the result. So the ready file no longer means "the
  server answered tools/list" but "the TUI has run on `READY_SETTLE` past it": after
  the tools/list answer the server pings the TUI (the answer to that ping comes from
  the TUI's event loop once it has read the tools/list answer, the same pipe, in
  order), waits `READY_SETTLE`, pings again, and creates the ready file when the TUI
  answers the second ping, which it can only do on a turn of its event loop that
  started after that wait (a TUI starved of CPU answers late: the wait stretches with
  it). A client that answers a ping with an error still answers;
- a PostToolUse hook (matcher `QUALIFIED_NAME`) answering ``{"continue": false}`` ends
  the turn after the accepted call with no further API call, as `claude -p` does; no
  Stop hook fires then (end the run from the transcript, as for --max-turns). It does
  not fire for a rejected call;
- a rejected call fires PostToolUseFailure (``error`` holds the tool's text), whose
  ``{"continue": false}`` does NOT stop the turn: without a limit of claude-print's
  own the TUI retries forever (353 API calls in 40 s).

Run it as ``python3 -S -c <BOOT> <package parent> <schema file>`` (`server_command`):
that works from a checkout, from shiv's extracted cache and straight from the
``.pyz`` (zipimport), with the interpreter claude-print runs on. It imports json, re
and math only: about 15 ms to its first answer.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from typing import IO, Any, Dict, List, Optional, Tuple

from claude_print.mcp import schema_check

SERVER_NAME = "claude-print"
# The TUI must run this long past its reading of the tools/list answer before the ready
# file: contract.MCP_SETTLE_SECS (measured; not imported: this server loads json, re and
# math only).
READY_SETTLE = 0.3
READY_PING = "claude-print-ready-"  # ids of the two pings, then "1" and "2"
TOOL_NAME = "StructuredOutput"
# How the TUI names the tool (and the transcript records it): mcp__<server>__<tool>.
QUALIFIED_NAME = f"mcp__{SERVER_NAME}__{TOOL_NAME}"
DESCRIPTION = (
    "Use this tool to return your final response in the requested structured format. "
    "You MUST call this tool exactly once at the end of your response to provide the "
    "structured output."
)
SUCCESS_TEXT = "Structured output provided successfully"
# `claude -p`'s user message after an answer that did not call the tool (sent once).
ENFORCE_MESSAGE = (
    "[structured-output-enforce] You MUST call the StructuredOutput tool to complete this "
    "request. Call this tool now."
)
MAX_ATTEMPTS = 5  # failed calls before error_max_structured_output_retries
RETRIES_ENV = "MAX_STRUCTURED_OUTPUT_RETRIES"
# From this release `claude -p` adds the last tool error to the retries message (and
# details to each schema error); 2.1.248 was the last measured release without.
DETAILED_FROM = (2, 1, 260)
PROTOCOL_VERSION = "2025-06-18"  # answered when the client asks for none
SERVER_VERSION = "1"


def boot_program(module: str) -> str:
    """`python -c` text that runs `module`'s main(argv[2:]): the package parent (argv[1])
    goes first on sys.path so the package is found in a checkout, shiv's cache or the
    .pyz itself."""
    return (
        "import sys;sys.path.insert(0,sys.argv[1]);"
        f"from {module} import main;sys.exit(main(sys.argv[2:]))"
    )


BOOT = boot_program("claude_print.mcp.mcp_structured")  # the server's whole program


def package_parent() -> str:
    """The directory (or archive path) that holds the claude_print package."""
    import os

    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # claude_print/
    return os.path.dirname(package_dir)


def server_command(
    schema_path: str,
    ready_path: Optional[str] = None,
    python: Optional[str] = None,
    stop_path: Optional[str] = None,
    max_failures: int = MAX_ATTEMPTS,
) -> List[str]:
    """argv that runs this server for the schema in `schema_path`: it creates
    `ready_path` once Claude Code has listed the tool, and `stop_path` once the turn
    should end (an accepted call, or the `max_failures`-th rejected one)."""
    argv = [python or sys.executable, "-S", "-c", BOOT, package_parent(), schema_path]
    if stop_path:
        return [*argv, ready_path or "", stop_path, str(max_failures)]
    return argv + ([ready_path] if ready_path else [])


def mcp_config(
    schema_path: str,
    ready_path: Optional[str] = None,
    python: Optional[str] = None,
    stop_path: Optional[str] = None,
    max_failures: int = MAX_ATTEMPTS,
) -> Dict[str, Any]:
    """The `--mcp-config` JSON that makes the TUI start this server. `alwaysLoad` keeps
    the tool out of tool search (2.1.330 defers MCP tools by default)."""
    argv = server_command(schema_path, ready_path, python, stop_path, max_failures)
    return {
        "mcpServers": {
            SERVER_NAME: {
                "type": "stdio",
                "command": argv[0],
                "args": argv[1:],
                "alwaysLoad": True,
            }
        }
    }


def parse_schema_argument(text: str, strict: bool = True) -> Optional[Dict[str, Any]]:
    """The `--json-schema` argument as `claude -p` takes it: None for an empty one (no
    structured output), else a JSON object. Raises SchemaError with `claude -p`'s
    message (it prints ``Error: <message>`` on stderr and exits 1, nothing on stdout).
    `strict` (2.1.330): the schema must be usable too. 2.1.197 checks only JSON and
    object; with an unusable schema it runs without the tool (`usable_schema`)."""
    if not text:
        return None
    try:
        schema = json.loads(text)
    except ValueError as exc:
        raise schema_check.SchemaError(f"--json-schema is not valid JSON: {exc}") from None
    if not isinstance(schema, dict):
        raise schema_check.SchemaError("--json-schema must be a JSON object")
    problem = schema_check.check_schema(schema) if strict else None
    if problem is not None:
        raise schema_check.SchemaError(f"--json-schema is not a valid JSON Schema: {problem}")
    return schema


def usable_schema(schema: Dict[str, Any], formats_checked: bool = False) -> bool:
    """Whether `claude -p` offers the tool for `schema` at all. 2.1.197 compiles it with
    Ajv's format checks on (`formats_checked`), so any `format` makes it unusable there."""
    if schema_check.check_schema(schema) is not None:
        return False
    return not (formats_checked and '"format"' in json.dumps(schema))


# Where `claude -p` puts `structured_output` in its result object (measured on all 14
# captured releases): after `permission_denials` up to 2.1.205, after `result` from 2.1.221.
STRUCTURED_AFTER_RESULT_FROM = (2, 1, 221)
# error_max_structured_output_retries has `terminal_reason`
# "structured_output_retry_exhausted" from 2.1.221 (none before).
RETRY_TERMINAL_REASON = "structured_output_retry_exhausted"


def with_structured_output(
    obj: Dict[str, Any], value: Any, version: Tuple[int, ...]
) -> Dict[str, Any]:
    """`obj` (a release-shaped success result) with `structured_output` where that
    release's `claude -p` prints it, and `result` the value's JSON text, as there."""
    anchor = "result" if version >= STRUCTURED_AFTER_RESULT_FROM else "permission_denials"
    out: Dict[str, Any] = {}
    for key, item in obj.items():
        out[key] = schema_check.js_json(value) if key == "result" else item
        if key == anchor:
            out["structured_output"] = value
    if "structured_output" not in out:
        out["structured_output"] = value
    return out


def max_attempts(environ: Optional[Dict[str, str]] = None) -> int:
    """Failed calls allowed: MAX_STRUCTURED_OUTPUT_RETRIES when it is a number, else 5."""
    import os

    value = (environ if environ is not None else os.environ).get(RETRIES_ENV, "")
    try:
        return int(value)
    except ValueError:
        return MAX_ATTEMPTS


def retries_message(attempts: int, last_error: Optional[str], detailed: bool = True) -> str:
    """`errors[0]` of error_max_structured_output_retries (text mode prints
    ``Error: `` and this, without a newline). `detailed`: 2.1.260 on."""
    message = f"Failed to provide valid structured output after {attempts} attempts"
    if detailed and last_error:
        message += f" \u2014 last StructuredOutput error: {last_error}"
    return message


def structured_result(
    tool_uses: List[Dict[str, Any]], tool_results: List[Dict[str, Any]]
) -> Optional[Dict[str, Any]]:
    """The accepted StructuredOutput input of a turn (`TurnSummary.tool_uses` and
    `.tool_results`): the last call whose result is not an error; None without one.
    Either tool name counts (the MCP one, or `claude -p`'s own in a resumed session)."""
    failed = {r.get("tool_use_id") for r in tool_results if r.get("is_error")}
    answered = {r.get("tool_use_id") for r in tool_results}
    for use in reversed(tool_uses):
        if use.get("name") not in (QUALIFIED_NAME, TOOL_NAME):
            continue
        if use.get("id") in answered and use.get("id") not in failed:
            value = use.get("input")
            return value if isinstance(value, dict) else None
    return None


def failed_attempts(tool_uses: List[Dict[str, Any]], tool_results: List[Dict[str, Any]]) -> int:
    """How many StructuredOutput calls of the turn got an error result."""
    ids = {u.get("id") for u in tool_uses if u.get("name") in (QUALIFIED_NAME, TOOL_NAME)}
    return sum(1 for r in tool_results if r.get("is_error") and r.get("tool_use_id") in ids)


def last_failure(records: List[Dict[str, Any]]) -> Optional[str]:
    """The text of the last rejected StructuredOutput call in transcript `records` (for
    the retries message); other tools' errors do not count."""
    ours = set()
    failure = None
    for record in records:
        content = record.get("message", {}).get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("name") in (QUALIFIED_NAME, TOOL_NAME):
                ours.add(block.get("id"))
            elif (
                block.get("type") == "tool_result"
                and block.get("is_error")
                and block.get("tool_use_id") in ours
            ):
                text = block.get("content")
                if isinstance(text, list):
                    text = "".join(str(b.get("text", "")) for b in text if isinstance(b, dict))
                failure = str(text)
    return failure


# --- the server ------------------------------------------------------------------------


class Server:
    """One MCP session over line-delimited JSON-RPC; `handle` answers one message."""

    def __init__(
        self,
        schema: Dict[str, Any],
        ready_path: Optional[str] = None,
        stop_path: Optional[str] = None,
        max_failures: int = MAX_ATTEMPTS,
    ) -> None:
        self.schema = schema
        self.ready_path = ready_path  # created once the tool has been listed
        # Created before the answer that ends the turn goes out, so the PostToolBatch
        # hook that follows it sees it (claude-print's relay stops the turn there).
        self.stop_path = stop_path
        self.max_failures = max_failures
        self.failures = 0
        # Messages of our own to send after the current answer: (pause before, message).
        self.outbox: List[Tuple[float, Dict[str, Any]]] = []
        self._pinged = False

    def tool(self) -> Dict[str, Any]:
        return {
            "name": TOOL_NAME,
            "description": DESCRIPTION,
            "inputSchema": self.schema,
            # Never deferred behind tool search, whatever the server config says.
            "_meta": {"anthropic/alwaysLoad": True},
        }

    def call(self, name: Any, arguments: Any) -> Dict[str, Any]:
        """A tools/call result: the tool's answer, as `claude -p`'s tool gives it."""
        if name != TOOL_NAME:
            return _text_result(f"Unknown tool: {name}", error=True)
        value = arguments if arguments is not None else {}
        try:
            problem = schema_check.mismatch(self.schema, value)
        except schema_check.SchemaError as exc:  # checked at start; kept for safety
            return _text_result(str(exc), error=True)
        if problem is not None:
            self.failures += 1
            if self.failures >= self.max_failures:
                self._touch_stop()
            return _text_result(problem, error=True)
        self._touch_stop()
        return _text_result(SUCCESS_TEXT, error=False)

    def _touch_stop(self) -> None:
        if self.stop_path:
            with contextlib.suppress(OSError):
                open(self.stop_path, "a").close()

    def handle(self, message: Any) -> Optional[Dict[str, Any]]:
        """The response to one JSON-RPC message (None for a notification or a response)."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return _error(None, -32600, "Invalid Request")
        if "method" not in message:
            self._answered(message.get("id"))
            return None  # a response to a request of ours: we send none
        method = message.get("method")
        has_id = "id" in message
        request_id = message.get("id")
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if not has_id:
            return None  # notifications/initialized, notifications/cancelled, ...
        if method == "initialize":
            asked = params.get("protocolVersion")
            result: Dict[str, Any] = {
                "protocolVersion": asked if isinstance(asked, str) else PROTOCOL_VERSION,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": SERVER_NAME, "version": SERVER_VERSION},
            }
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": [self.tool()]}
            if self.ready_path and not self._pinged:
                self._pinged = True
                self.outbox.append((0.0, ready_ping(1)))
        elif method == "tools/call":
            result = self.call(params.get("name"), params.get("arguments"))
        elif method in ("resources/list", "prompts/list"):
            result = {method.split("/")[0]: []}
        else:
            return _error(request_id, -32601, f"Method not found: {method}")
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _answered(self, request_id: Any) -> None:
        """The TUI answered one of our pings (a result or an error alike)."""
        answered = ready_ping_answered({"id": request_id})
        if answered == 1:
            self.outbox.append((READY_SETTLE, ready_ping(2)))
        elif answered == 2:
            self._ready()

    def take_outbox(self) -> List[Tuple[float, Dict[str, Any]]]:
        out, self.outbox = self.outbox, []
        return out

    def _ready(self) -> None:
        if self.ready_path:
            with contextlib.suppress(OSError):
                open(self.ready_path, "a").close()
            self.ready_path = None


def _text_result(text: str, error: bool) -> Dict[str, Any]:
    result: Dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if error:
        result["isError"] = True
    return result


def ready_ping(n: int) -> Dict[str, Any]:
    """Ping `n` (1 or 2) of the ready handshake (module doc), which the TUI answers."""
    return {"jsonrpc": "2.0", "id": f"{READY_PING}{n}", "method": "ping"}


def ready_ping_answered(message: Any) -> Optional[int]:
    """1 or 2: `message` is the TUI's answer to that ready ping (a result or an error
    alike: either way it has read everything sent before the ping)."""
    if not isinstance(message, dict) or "method" in message:
        return None
    pings = [ready_ping(n)["id"] for n in (1, 2)]
    return pings.index(message["id"]) + 1 if message.get("id") in pings else None


def _error(request_id: Any, code: int, message: str) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def serve(server: Server, stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """Answer messages until stdin closes."""
    for line in iter(stdin.readline, b""):
        if not line.strip():
            continue
        try:
            message = json.loads(line.decode("utf-8"))
        except ValueError:
            response: Optional[Dict[str, Any]] = _error(None, -32700, "Parse error")
        else:
            if isinstance(message, list):  # a batch (2025-03-26 allowed them)
                answers = [a for a in (server.handle(m) for m in message) if a is not None]
                if answers:
                    _write(stdout, answers)
                response = None
            else:
                response = server.handle(message)
        if response is not None:
            _write(stdout, response)
        for pause, own in server.take_outbox():
            if pause:
                time.sleep(pause)  # nothing else to answer meanwhile: the prompt waits
            _write(stdout, own)


def _write(stdout: IO[bytes], obj: Any) -> None:
    stdout.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
    stdout.flush()


def main(argv: List[str]) -> int:
    """``<schema file> [<ready file> [<stop file> <max failures>]]``: serve the
    StructuredOutput tool for that schema on stdin/stdout; create the ready file (if
    given) once the TUI has listed the tool, the stop file once the turn should end."""
    if len(argv) not in (1, 2, 4):
        sys.stderr.write("usage: mcp_structured SCHEMA_FILE [READY_FILE [STOP_FILE MAX]]\n")
        return 2
    try:
        with open(argv[0], encoding="utf-8") as f:
            schema = json.load(f)
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"claude-print StructuredOutput server: cannot read {argv[0]}: {exc}\n")
        return 2
    if not isinstance(schema, dict):
        sys.stderr.write("claude-print StructuredOutput server: the schema is not an object\n")
        return 2
    ready = argv[1] if len(argv) > 1 and argv[1] else None
    if len(argv) == 4:
        server = Server(schema, ready, argv[2], int(argv[3]) if argv[3].isdigit() else MAX_ATTEMPTS)
    else:
        server = Server(schema, ready)
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        serve(server, sys.stdin.buffer, sys.stdout.buffer)
    return 0


__all__ = [
    "DESCRIPTION",
    "ENFORCE_MESSAGE",
    "MAX_ATTEMPTS",
    "QUALIFIED_NAME",
    "SERVER_NAME",
    "Server",
    "failed_attempts",
    "last_failure",
    "max_attempts",
    "mcp_config",
    "parse_schema_argument",
    "retries_message",
    "server_command",
    "structured_result",
    "usable_schema",
    "with_structured_output",
]
