"""A fake Anthropic Messages API on 127.0.0.1, for tests, the demo and the benchmark.

Both the real Claude Code TUI and `claude -p` talk to it through
ANTHROPIC_BASE_URL. What it answers is steered by directives inside the user
prompt, so one server serves every scenario at once (and parallel runs):

- default: a text answer ``ACK <chars> <sha256-12>`` of the prompt, so the
  answer itself proves which bytes arrived (``The answer is 4.`` for a
  prompt that contains ``2+2``);
- ``[[error:400]]``: HTTP 400 invalid_request_error ("fake 400 failure");
- ``[[tool:Bash:<command>]]``: a tool_use turn; after the tool_result the
  model answers ``Tool turn done.``;
- ``[[sleep:SECS]]``: wait before answering (timeouts, signals);
- ``[[tailsleep:SECS]]``: send a message's end (usage, stop reason) SECS after its
  blocks, as a real network may: the TUI starts a tool call before the message ends;
- ``[[reply:TEXT]]``: answer TEXT verbatim;
- a background task's notification (``<task-notification>`` in the last user
  message): ``Noted <status>: <summary>``;
- ``[[texts:A|B]]``: one message with several text blocks (A, then B);
- ``[[texttool:TEXT|Bash:<command>]]``: one message with a text block and a
  tool_use block; after the tool_result the model answers ``Tool turn done.``;
- ``[[structured:JSON]]``, when the request offers a tool whose name ends with
  ``StructuredOutput`` (``claude -p --json-schema``'s own tool, or an MCP server's
  ``mcp__<server>__StructuredOutput``): a tool_use of that tool whose input is JSON,
  verbatim (so it may even be malformed; a JSON array ending in ``]]`` ends the
  directive early); after a successful tool_result the model answers
  ``Structured output provided.``. Without such a tool the directive is ignored (the
  default answer follows);
- ``[[structured_bad:JSON]]``: the same, but the model sends JSON on every call, also
  after an error tool_result (to reach the retry limit); with ``[[structured:GOOD]]``
  too, it sends JSON first and GOOD once a tool_result said it was wrong;
- ``[[usage_limit:CLAIM]]`` or ``[[usage_limit:CLAIM:EPOCH]]``: a subscription's usage
  limit: HTTP 429 rate_limit_error with ``anthropic-ratelimit-unified-status: rejected``,
  ``...-representative-claim: CLAIM`` (``five_hour``, ``seven_day``, ...) and
  ``...-reset: EPOCH`` (default: the next full hour plus one), and ``retry-after``.

Subscription (OAuth) logins send ``Authorization: Bearer <token>`` instead of
``x-api-key`` (both are accepted; neither is checked), a start-up quota check
(``max_tokens: 1``, prompt ``quota``: answered with one token, recorded as a side
request) and ``HEAD /api/hello`` (2.1.330) or ``HEAD /`` (2.1.197). Every request,
HEAD and GET included, is also counted in ``hits`` (method, path, kind, auth, session).

Every prompt received is appended to ``--log`` (one JSON object a line) so a
test can compare it byte for byte. Run ``python3 tests/support/fake_api.py --port 0``;
it prints ``listening on http://127.0.0.1:PORT`` once ready.
"""

from __future__ import annotations

import argparse
import hashlib
import http.server
import io
import json
import os
import re
import socketserver
import sys
import threading
import time
import uuid
import weakref
import zipfile
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

MODEL_DEFAULT = "claude-sonnet-4-5-20250929"
# What every offline run of the real Claude Code needs (tests, demo, benchmark).
PINNED_CLAUDE_CODE = "2.1.197"
PINNED_BINARY = (
    Path.home()
    / ".cache"
    / "claude-print-test"
    / f"cc-{PINNED_CLAUDE_CODE}"
    / "node_modules"
    / "@anthropic-ai"
    / "claude-code-linux-x64"
    / "claude"
)  # where scripts/install-claude-code puts it
FAKE_KEY = "sk-ant-fake-key-0123456789abcdefghij"
# A subscription login's token (CLAUDE_CODE_OAUTH_TOKEN): sent as `Authorization: Bearer`.
FAKE_OAUTH_TOKEN = "sk-ant-oat01-fake-oauth-token-0123456789abcdefghij"
OAUTH_EXPIRED_MESSAGE = (
    "OAuth token has expired. Please obtain a new token or refresh your existing token."
)
USAGE_LIMIT_MESSAGE = "This request would exceed your account's rate limit. Please try again later."


def subscription_env(env: Dict[str, str]) -> Dict[str, str]:
    """`env` as a subscription (OAuth) user has it: CLAUDE_CODE_OAUTH_TOKEN and no
    ANTHROPIC_API_KEY, with Claude Code's non-essential traffic on (so the TUI makes its
    quota check and title request, as for real users). Other hosts go through a closed
    loopback proxy port and fail at once, so a machine with internet sends nothing out
    (with a proxy set, Claude Code also skips its `HEAD` pre-connect to the base URL)."""
    out = {
        k: v
        for k, v in env.items()
        if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
        and k != "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"
        and k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
    }
    dead = "http://127.0.0.1:9"  # discard port: nothing listens, connections are refused
    out.update(
        CLAUDE_CODE_OAUTH_TOKEN=FAKE_OAUTH_TOKEN,
        HTTPS_PROXY=dead,
        HTTP_PROXY=dead,
        NO_PROXY="127.0.0.1,localhost",
    )
    return out


def seed_home(home: Path, trusted: Sequence[Path] = ()) -> None:
    """A throw-away HOME where the TUI skips onboarding and the API-key question."""
    seed: Dict[str, Any] = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [FAKE_KEY[-20:]], "rejected": []},
    }
    if trusted:
        seed["projects"] = {os.path.realpath(p): {"hasTrustDialogAccepted": True} for p in trusted}
    (home / ".claude.json").write_text(json.dumps(seed))


_DIRECTIVE = re.compile(r"\[\[(\w+):(.*?)\]\]", re.S)


def last_user_text(body: Dict[str, Any]) -> str:
    """The prompt as Claude Code sends it: last text block of the last user message."""
    for message in reversed(body.get("messages", [])):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        texts = [b.get("text", "") for b in content if b.get("type") == "text"]
        return texts[-1] if texts else ""
    return ""


def user_texts(body: Dict[str, Any]) -> List[str]:
    """Every text block of the user messages, oldest first (the conversation so far)."""
    out = []
    for message in body.get("messages", []):
        content = message.get("content") if message.get("role") == "user" else None
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks if isinstance(blocks, list) else []:
            if isinstance(block, dict) and block.get("type") == "text":
                out.append(str(block.get("text", "")))
    return out


def announced_mcp_tools(body: Dict[str, Any]) -> List[str]:
    """The MCP tool names a request tells the model of: in its tool list, its system
    prompt or a reminder (2.1.331 defers MCP tools and lists their names in a message),
    the prompts' own directives aside."""
    parts = [json.dumps({k: v for k, v in body.items() if k != "messages"})]
    for message in body.get("messages", []):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks if isinstance(blocks, list) else []:
            text = json.dumps(block)
            if "[[tool" not in text:
                parts.append(text)
    return sorted(set(re.findall(r"mcp__[A-Za-z0-9_-]+__[A-Za-z0-9_-]+", "".join(parts))))


def task_notification(prompt: str) -> Optional[str]:
    """The answer to a background task's notification (the prompt Claude Code sends
    when a command run in the background or a subagent ends): `Noted <status>:
    <summary>`, the same for the TUI and `claude -p` (task ids and paths differ)."""
    if "<task-notification>" not in prompt:
        return None
    fields = {}
    for tag in ("status", "summary"):
        match = re.search(rf"<{tag}>(.*?)</{tag}>", prompt, re.S)
        fields[tag] = match.group(1) if match else "?"
    return f"Noted {fields['status']}: {fields['summary']}"


REQUEST_PARAMS = ("thinking", "output_config", "max_tokens", "context_management", "temperature")


def system_text(body: Dict[str, Any]) -> str:
    """The system prompt, its text blocks joined by newlines."""
    system = body.get("system")
    if isinstance(system, str):
        return system
    blocks = system if isinstance(system, list) else []
    return "\n".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))


def has_tool_result(body: Dict[str, Any]) -> bool:
    """Whether the last user message carries a tool result (2.1.280 to 2.1.310 may send a
    `system` message after it, with a token count)."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    content = users[-1].get("content") if users else None
    return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)


def first_user_prompt_with_directive(body: Dict[str, Any]) -> str:
    """After a tool_result the directive lives in an earlier user message."""
    for message in body.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks:
            if block.get("type") == "text" and "[[" in block.get("text", ""):
                return str(block["text"])
    return ""


STRUCTURED_SUFFIX = "StructuredOutput"
STRUCTURED_DONE = "Structured output provided."


def structured_tool(body: Dict[str, Any]) -> Optional[str]:
    """The offered tool whose name ends with ``StructuredOutput``, if any."""
    for tool in body.get("tools") or []:
        name = tool.get("name") if isinstance(tool, dict) else None
        if isinstance(name, str) and name.endswith(STRUCTURED_SUFFIX):
            return name
    return None


def tool_results(body: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Every tool_result block of the conversation, oldest first."""
    found = []
    for message in body.get("messages", []):
        content = message.get("content") if message.get("role") == "user" else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found.append(block)
    return found


def plan_structured(body: Dict[str, Any], source: str) -> Optional[Tuple[str, Any]]:
    """The structured-output directives: a tool_use of the offered StructuredOutput
    tool, or the closing text once it succeeded; None when they do not apply."""
    directives = dict(_DIRECTIVE.findall(source))
    name = structured_tool(body)
    if name is None or not ({"structured", "structured_bad"} & set(directives)):
        return None
    results = tool_results(body)
    if has_tool_result(body) and results and not results[-1].get("is_error"):
        return ("text", STRUCTURED_DONE)
    failed = any(r.get("is_error") for r in results)
    if "structured_bad" in directives and not ("structured" in directives and failed):
        return ("tool_json", (name, directives["structured_bad"].strip()))
    return ("tool_json", (name, directives["structured"].strip()))


def is_side_request(prompt: str) -> bool:
    """Title/summary requests the TUI makes besides the turn itself."""
    return "Write the title" in prompt


def is_quota_request(body: Dict[str, Any]) -> bool:
    """The start-up quota check of a subscription (OAuth) login: `max_tokens: 1`, "quota"."""
    return body.get("max_tokens") == 1 and last_user_text(body).strip() == "quota"


def usage_limit_reset(spec: str, now: Optional[float] = None) -> Tuple[str, int]:
    """`CLAIM[:EPOCH]` of a usage_limit directive -> (claim, reset epoch seconds)."""
    claim, _, epoch = spec.partition(":")
    if epoch.strip().isdigit():
        return claim or "five_hour", int(epoch)
    hour = int((time.time() if now is None else now) // 3600) * 3600
    return claim or "five_hour", hour + 2 * 3600


def usage_limit_headers(claim: str, reset: int, now: Optional[float] = None) -> Dict[str, str]:
    """The headers of a subscription's usage-limit refusal (HTTP 429)."""
    left = max(0, reset - int(time.time() if now is None else now))
    return {
        "anthropic-ratelimit-unified-status": "rejected",
        "anthropic-ratelimit-unified-representative-claim": claim,
        "anthropic-ratelimit-unified-reset": str(reset),
        "retry-after": str(left),
    }


def request_kind(body: Dict[str, Any]) -> str:
    """The request's kind: quota, title or turn (a tool-result follow-up is a turn too)."""
    if is_quota_request(body):
        return "quota"
    return "title" if is_side_request(last_user_text(body)) else "turn"


def plan_reply(body: Dict[str, Any]) -> Tuple[str, Any]:
    """Decide the answer: ("error", status) | ("tool", (name, command)) |
    ("tool_json", (name, raw input JSON)) | ("text", text) | ("blocks", [...]).
    `[[tooljson:Name:{...}]]` calls any tool with that input."""
    prompt = last_user_text(body)
    notice = task_notification(prompt)
    if notice is not None:
        return ("text", notice)
    source = first_user_prompt_with_directive(body) if has_tool_result(body) else prompt
    structured = plan_structured(body, source)
    if structured is not None:
        return structured
    if has_tool_result(body) and any(f"[[{d}:" in source for d in ("tool", "texttool", "tooljson")):
        return ("text", "Tool turn done.")
    directives = dict(_DIRECTIVE.findall(prompt))
    if "error" in directives:
        return ("error", int(directives["error"]))
    if "usage_limit" in directives:
        return ("usage_limit", usage_limit_reset(directives["usage_limit"]))
    if "sleep" in directives:
        time.sleep(float(directives["sleep"]))
    if "tool" in directives and not has_tool_result(body):
        name, _, command = directives["tool"].partition(":")
        return ("tool", (name, command))
    if "tooljson" in directives and not has_tool_result(body):
        name, _, raw = directives["tooljson"].partition(":")
        return ("tool_json", (name, raw))
    if "texttool" in directives and not has_tool_result(body):
        text, _, tool = directives["texttool"].partition("|")
        name, _, command = tool.partition(":")
        return ("blocks", [("text", text), ("tool", (name, command))])
    if "texts" in directives:
        return ("blocks", [("text", part) for part in directives["texts"].split("|")])
    if "reply" in directives:
        return ("text", directives["reply"])
    if "2+2" in prompt:
        return ("text", "The answer is 4.")
    digest = hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return ("text", f"ACK {len(prompt)} {digest}")


MISSING_FILE_ID = "file_missing"  # the Files API answers 404 for it


def file_content(file_id: str) -> bytes:
    """What the Files API serves for a file id (--file)."""
    return f"content of {file_id}\n".encode()


PLUGIN_ZIP_PATH = "/plugins/zebra.zip"
PLUGIN_COMMAND_TEXT = "Count the stripes QX8."


def plugin_zip() -> bytes:
    """A plugin named zebra with one slash command, /zebra:stripes, as a .zip."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(".claude-plugin/plugin.json", json.dumps({"name": "zebra", "version": "1.0.0"}))
        command = f"---\ndescription: stripes\n---\n{PLUGIN_COMMAND_TEXT}\n"
        z.writestr("commands/stripes.md", command)
    return out.getvalue()


def usage(input_tokens: int, output_tokens: int) -> Dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }


_DIRECTIVE_TAIL = re.compile(r"\[\[tailsleep:([0-9.]+)\]\]")


def sse(event: str, data: Dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def stream_events(model: str, kind: str, payload: Any, in_tokens: int) -> Iterator[bytes]:
    msg_id = "msg_" + uuid.uuid4().hex[:24]
    start = {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage(in_tokens, 1),
    }
    yield sse("message_start", {"type": "message_start", "message": start})
    blocks = payload if kind == "blocks" else [(kind, payload)]
    stop_reason, out_tokens = "end_turn", 0
    for index, (block_kind, block_payload) in enumerate(blocks):
        if block_kind in ("tool", "tool_json"):
            yield from tool_block_events(index, block_payload, raw=block_kind == "tool_json")
            stop_reason, out_tokens = "tool_use", out_tokens + 12
        else:
            text = str(block_payload)
            yield from text_block_events(index, text)
            out_tokens += max(1, len(text) // 4)
    yield sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": out_tokens},
        },
    )
    yield sse("message_stop", {"type": "message_stop"})


def tool_block_events(index: int, payload: Tuple[str, str], raw: bool = False) -> Iterator[bytes]:
    """A tool_use block: a Bash-style input for `command`, or with `raw` the input JSON as is."""
    name, command = payload
    tool_id = "toolu_" + uuid.uuid4().hex[:24]
    block = {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
    yield sse(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": block},
    )
    args = (
        command
        if raw
        else json.dumps({"command": command, "description": "Run the requested command"})
    )
    delta = {"type": "input_json_delta", "partial_json": args}
    yield sse(
        "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    )
    yield sse("content_block_stop", {"type": "content_block_stop", "index": index})


def text_block_events(index: int, text: str) -> Iterator[bytes]:
    block = {"type": "text", "text": ""}
    yield sse(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": block},
    )
    for i in range(0, max(len(text), 1), 40):
        delta = {"type": "text_delta", "text": text[i : i + 40]}
        yield sse(
            "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        )
    yield sse("content_block_stop", {"type": "content_block_stop", "index": index})


def whole_message(model: str, kind: str, payload: Any, in_tokens: int) -> Dict[str, Any]:
    text = str(payload) if kind == "text" else "Fake title"
    return {
        "id": "msg_" + uuid.uuid4().hex[:24],
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": usage(in_tokens, 3),
    }


def quota_message(model: str) -> Dict[str, Any]:
    """The answer to the quota check: one token, cut off by `max_tokens`."""
    return {
        "id": "msg_" + uuid.uuid4().hex[:24],
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "max_tokens",
        "stop_sequence": None,
        "usage": usage(8, 1),
    }


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FakeApiServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _json(
        self, status: int, obj: Dict[str, Any], headers: Optional[Dict[str, str]] = None
    ) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_fake")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _hit(self, kind: str) -> None:
        auth = self.headers.get("authorization", "")
        self.server.count(
            {
                "method": self.command,
                "path": self.path.split("?")[0],
                "kind": kind,
                "auth": "bearer"
                if auth.lower().startswith("bearer ")
                else ("api-key" if self.headers.get("x-api-key") else None),
                "session": self.headers.get("x-claude-code-session-id"),
                "at": time.time(),
            }
        )

    def _authorized(self) -> bool:
        """With an OAuth authority (tests/support/fake_oauth.py) attached, a bearer token it did not
        issue, or one that has expired, gets the real API's 401."""
        authority = self.server.authority
        auth = self.headers.get("authorization", "")
        if authority is None or not auth.lower().startswith("bearer "):
            return True
        if authority.access_ok(auth[len("bearer ") :].strip()):
            return True
        error = {"type": "authentication_error", "message": OAUTH_EXPIRED_MESSAGE}
        self._json(401, {"type": "error", "error": error})
        return False

    def _usage_limit(self, claim: str, reset: int) -> None:
        error = {"type": "rate_limit_error", "message": USAGE_LIMIT_MESSAGE}
        self._json(429, {"type": "error", "error": error}, usage_limit_headers(claim, reset))

    def do_GET(self) -> None:
        self._hit("get")
        path = self.path.split("?")[0]
        match = re.fullmatch(r"/v1/files/([^/]+)/content", path)
        if match:  # the Files API, for --file
            if match.group(1) == MISSING_FILE_ID:
                error = {"type": "not_found_error", "message": "File not found"}
                self._json(404, {"type": "error", "error": error})
                return
            self._bytes(200, file_content(match.group(1)), "application/octet-stream")
            return
        if path == PLUGIN_ZIP_PATH:  # for --plugin-url
            self._bytes(200, plugin_zip(), "application/zip")
            return
        self._json(200, {"data": [], "has_more": False})

    def _bytes(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_HEAD(self) -> None:
        # Connectivity checks: `HEAD /` (2.1.197) and `HEAD /api/hello` (2.1.330).
        self._hit("head")
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        path = self.path.split("?")[0]
        is_messages = path.endswith("/v1/messages")
        self._hit(request_kind(body) if is_messages else "other")
        if is_messages and not self._authorized():
            return
        if path.endswith("/count_tokens"):
            self._json(200, {"input_tokens": 42})
            return
        if not path.endswith("/v1/messages"):
            self._json(
                404, {"type": "error", "error": {"type": "not_found_error", "message": path}}
            )
            return
        prompt = last_user_text(body)
        model = str(body.get("model") or MODEL_DEFAULT)
        quota = is_quota_request(body)
        side = is_side_request(prompt) or quota
        self.server.record(
            {
                "prompt": prompt,
                "model": model,
                "side": side,
                "stream": bool(body.get("stream")),
                "tool_result": has_tool_result(body),
                # What flags such as --system-prompt, --tools, --betas change:
                "system": system_text(body),
                "tools": sorted(str(t.get("name")) for t in body.get("tools") or []),
                "betas": sorted(filter(None, self.headers.get("anthropic-beta", "").split(","))),
                "messages": len(body.get("messages") or []),
                "user_texts": user_texts(body),
                "tool_text": json.dumps(body.get("tools") or []),
                "mcp_tools": announced_mcp_tools(body),
                # Request parameters that flags such as --effort and --thinking set.
                "params": {k: body[k] for k in REQUEST_PARAMS if k in body},
                "body": body,  # whole, for tests that compare two requests field by field
            }
        )
        if quota:
            self._json(200, quota_message(model))
            return
        payload: Any
        if side:
            kind, payload = "text", '{"title": "Fake title"}'
        else:
            kind, payload = plan_reply(body)
        if kind == "usage_limit":
            self._usage_limit(*payload)
            return
        if kind == "error":
            self._json(
                int(payload),
                {
                    "type": "error",
                    "error": {
                        "type": "invalid_request_error",
                        "message": f"fake {payload} failure",
                    },
                },
            )
            return
        in_tokens = 42
        if not body.get("stream"):
            self._json(200, whole_message(model, kind, payload, in_tokens))
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        # The whole message in one write, so the TUI reads it whole, however loaded the
        # machine: split reads let the TUI start a tool call before the message's end,
        # which changes what it records when (tests pick that with [[tailsleep:SECS]]:
        # the end, usage and stop reason, comes SECS after the last block).
        events = b"".join(stream_events(model, kind, payload, in_tokens))
        tail = _DIRECTIVE_TAIL.search(last_user_text(body))
        if tail:
            head, end = events.split(b"event: message_delta", 1)
            self.wfile.write(head)
            self.wfile.flush()
            time.sleep(float(tail.group(1)))
            events = b"event: message_delta" + end
        self.wfile.write(events)
        self.wfile.flush()
        self.close_connection = True


# url -> the server there, while it lives (recorded_claude_p adds a replayed run's
# requests to the server the live run would have sent them to).
SERVERS: weakref.WeakValueDictionary[str, FakeApiServer] = weakref.WeakValueDictionary()


class FakeApiServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int = 0, log_path: Optional[str] = None) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.log_path = log_path
        self.requests: List[Dict[str, Any]] = []
        self.hits: List[Dict[str, Any]] = []  # every request: method, path, kind, auth, session
        # tests/support/fake_oauth.py's TokenAuthority: when set, only its live access tokens pass.
        self.authority: Optional[Any] = None
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        SERVERS[self.url] = self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-answer (a run stopped with Ctrl+C in the demo's
        sandbox) is normal here: no traceback, which would read as claude-print's crash."""
        if isinstance(sys.exc_info()[1], ConnectionError):  # BrokenPipe, ConnectionReset...
            return
        super().handle_error(request, client_address)

    def record(self, entry: Dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(entry)
            self._arrived.notify_all()
            if self.log_path:
                with open(self.log_path, "a", encoding="utf-8") as log:
                    log.write(json.dumps(entry) + "\n")

    def count(self, hit: Dict[str, Any]) -> None:
        with self._lock:
            self.hits.append(hit)

    def hits_since(self, start: int) -> List[Dict[str, Any]]:
        """The requests after the first `start` ones (`len(server.hits)` taken earlier)."""
        with self._lock:
            return list(self.hits[start:])

    def wait_for_prompt(self, needle: str, timeout: float) -> bool:
        """Block until a turn request whose prompt contains `needle` has arrived."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while not self.last_prompt_with(needle, locked=True):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._arrived.wait(left)
        return True

    def last_prompt_with(self, needle: str, locked: bool = False) -> str:
        """The latest turn prompt (not a side request) containing `needle`."""
        if not locked:
            with self._lock:
                return self.last_prompt_with(needle, locked=True)
        for entry in reversed(self.requests):
            if not entry["side"] and needle in entry["prompt"]:
                return str(entry["prompt"])
        return ""

    def start(self) -> FakeApiServer:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log")
    args = parser.parse_args()
    server = FakeApiServer(args.port, args.log)
    print(f"listening on {server.url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
