#!/usr/bin/env python3
"""Claude Agent SDK cases, run once with the real Claude Code and once with claude-print
as `cli_path`, so the e2e tests can compare what a program using the SDK sees.

    .venv/bin/python tests/support/sdk_cases.py --cli-path PATH --case NAME [--workdir DIR]

The environment is the caller's (HOME, ANTHROPIC_BASE_URL of tests/support/fake_api.py, ...).
Prints ONE JSON object on stdout: the messages the program saw, normalised (class,
subtype/type, assistant text, tool_use names, raw keys; results with subtype, is_error,
result, num_turns, session_id, errors) plus facts of the case. An exception (also a
timeout: every case is bounded by --timeout) is reported as {"exception": TYPE,
"message": STR, ...what was seen so far} and the exit status is still 0.
`--list` prints the case names.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import importlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, List, Optional

# Imported by name: mypy (python_version 3.8) cannot analyse the SDK and anyio sources.
sdk: Any = importlib.import_module("claude_agent_sdk")
AssistantMessage: Any = sdk.AssistantMessage
ClaudeAgentOptions: Any = sdk.ClaudeAgentOptions
ClaudeSDKClient: Any = sdk.ClaudeSDKClient
HookMatcher: Any = sdk.HookMatcher
PermissionResultAllow: Any = sdk.PermissionResultAllow
PermissionResultDeny: Any = sdk.PermissionResultDeny
ResultMessage: Any = sdk.ResultMessage
UserMessage: Any = sdk.UserMessage

CASE_TIMEOUT = 90.0


# --- raw data of every parsed message -------------------------------------------------


def _install_raw_capture(module_names: List[str], skipped: List[Dict[str, Any]]) -> None:
    """Wrap the SDK's parse_message so every message keeps its raw dict (`_raw`), and
    raw messages the SDK drops (parse_message -> None) are listed in `skipped`."""
    parser_mod = importlib.import_module(module_names[0])
    original = parser_mod.parse_message

    def parse_message(data: Dict[str, Any]) -> Any:
        message = original(data)
        if message is None:
            if isinstance(data, dict):
                skipped.append(
                    {"type": data.get("type"), "subtype": data.get("subtype"), "keys": sorted(data)}
                )
            return None
        with contextlib.suppress(Exception):
            object.__setattr__(message, "_raw", data)
        return message

    for name in module_names:
        mod: Any = importlib.import_module(name)
        if hasattr(mod, "parse_message"):
            mod.parse_message = parse_message


# --- normalisation -------------------------------------------------------------------


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for item in content:
            if isinstance(item, dict) and item.get("type") == "text":
                parts.append(str(item.get("text", "")))
            elif isinstance(item, str):
                parts.append(item)
        return "\n".join(parts)
    return "" if content is None else str(content)


def summarise(message: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {"class": type(message).__name__}
    raw = getattr(message, "_raw", None)
    if isinstance(raw, dict):
        out["type"] = raw.get("type")
        out["keys"] = sorted(raw)
    subtype = getattr(message, "subtype", None)
    if subtype is not None:
        out["subtype"] = subtype
    content = getattr(message, "content", None)
    if isinstance(message, AssistantMessage):
        texts = [b.text for b in content or [] if type(b).__name__ == "TextBlock"]
        out["text"] = "\n".join(texts)
        out["tool_uses"] = [b.name for b in content or [] if type(b).__name__ == "ToolUseBlock"]
        if getattr(message, "error", None):
            out["error"] = message.error
    elif isinstance(message, UserMessage):
        if isinstance(content, str):
            out["text"] = content
        else:
            out["text"] = "\n".join(
                b.text for b in content or [] if type(b).__name__ == "TextBlock"
            )
            results = [
                {"is_error": b.is_error, "content": _block_text(b.content)}
                for b in content or []
                if type(b).__name__ == "ToolResultBlock"
            ]
            if results:
                out["tool_results"] = results
    elif isinstance(message, ResultMessage):
        for name in ("is_error", "result", "num_turns", "session_id", "stop_reason"):
            out[name] = getattr(message, name, None)
        for name in ("errors", "terminal_reason", "api_error_status", "permission_denials"):
            value = getattr(message, name, None)
            if value is not None:
                out[name] = value
    elif type(message).__name__ == "SystemMessage" or hasattr(message, "data"):
        data = getattr(message, "data", None)
        if isinstance(data, dict) and "keys" not in out:
            out["keys"] = sorted(data)
        if isinstance(data, dict) and data.get("subtype") == "init":
            out["session_id"] = data.get("session_id")
    return out


class Seen:
    def __init__(self) -> None:
        self.messages: List[Dict[str, Any]] = []
        self.skipped: List[Dict[str, Any]] = []
        self.facts: Dict[str, Any] = {}
        self.raw: List[Any] = []  # raw dicts of `messages` (not reported)
        self.t0 = time.monotonic()

    def add(self, message: Any) -> None:
        entry = summarise(message)
        entry["t"] = round(time.monotonic() - self.t0, 3)
        self.messages.append(entry)
        self.raw.append(getattr(message, "_raw", None))

    def results(self) -> List[Dict[str, Any]]:
        return [m for m in self.messages if m["class"] == "ResultMessage"]

    def report(self) -> Dict[str, Any]:
        return {"messages": self.messages, "skipped": self.skipped, **self.facts}


# --- helpers -------------------------------------------------------------------------


async def one_prompt(text: str) -> AsyncIterator[Dict[str, Any]]:
    """A streaming-mode prompt of one user message (what can_use_tool needs)."""
    yield {
        "type": "user",
        "message": {"role": "user", "content": text},
        "parent_tool_use_id": None,
        "session_id": "default",
    }


async def run_query(seen: Seen, prompt: Any, options: ClaudeAgentOptions) -> None:
    async for message in sdk.query(prompt=prompt, options=options):
        seen.add(message)


def options_for(ctx: Ctx, **kw: Any) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(cli_path=ctx.cli_path, cwd=str(ctx.workdir), **kw)


@dataclasses.dataclass
class Ctx:
    cli_path: str
    workdir: Path
    seen: Seen


def tool_prompt(ctx: Ctx, name: str) -> str:
    return f"[[tool:Bash:touch {ctx.workdir / name}]]"


def exists(ctx: Ctx, name: str) -> bool:
    return (ctx.workdir / name).exists()


# --- cases ---------------------------------------------------------------------------


async def case_plain(ctx: Ctx) -> None:
    await run_query(ctx.seen, "What is 2+2?", options_for(ctx))


def _recording_can_use_tool(
    ctx: Ctx, decide: Callable[[str, Dict[str, Any]], Any]
) -> Callable[..., Awaitable[Any]]:
    calls: List[Dict[str, Any]] = []
    ctx.seen.facts["can_use_tool_calls"] = calls

    async def can_use_tool(tool_name: str, tool_input: Dict[str, Any], context: Any) -> Any:
        calls.append(
            {
                "tool_name": tool_name,
                "input": tool_input,
                "tool_use_id_set": bool(getattr(context, "tool_use_id", None)),
                "suggestions": len(getattr(context, "suggestions", None) or []),
            }
        )
        return decide(tool_name, tool_input)

    return can_use_tool


async def case_tool_allowed(ctx: Ctx) -> None:
    cb = _recording_can_use_tool(ctx, lambda n, i: PermissionResultAllow())
    await run_query(
        ctx.seen, one_prompt(tool_prompt(ctx, "allowed.txt")), options_for(ctx, can_use_tool=cb)
    )
    ctx.seen.facts["file_exists"] = {"allowed.txt": exists(ctx, "allowed.txt")}


async def case_tool_allowed_updated_input(ctx: Ctx) -> None:
    updated_command = f"touch {ctx.workdir / 'updated.txt'}"

    def decide(name: str, tool_input: Dict[str, Any]) -> Any:
        return PermissionResultAllow(updated_input={**tool_input, "command": updated_command})

    cb = _recording_can_use_tool(ctx, decide)
    await run_query(
        ctx.seen, one_prompt(tool_prompt(ctx, "original.txt")), options_for(ctx, can_use_tool=cb)
    )
    ctx.seen.facts["file_exists"] = {
        "original.txt": exists(ctx, "original.txt"),
        "updated.txt": exists(ctx, "updated.txt"),
    }


async def case_tool_denied(ctx: Ctx) -> None:
    cb = _recording_can_use_tool(ctx, lambda n, i: PermissionResultDeny(message="no thanks"))
    await run_query(
        ctx.seen, one_prompt(tool_prompt(ctx, "denied.txt")), options_for(ctx, can_use_tool=cb)
    )
    ctx.seen.facts["file_exists"] = {"denied.txt": exists(ctx, "denied.txt")}


def _hook_case(output: Dict[str, Any], filename: str) -> Callable[[Ctx], Awaitable[None]]:
    async def case(ctx: Ctx) -> None:
        inputs: List[Dict[str, Any]] = []
        ctx.seen.facts["hook_inputs"] = inputs

        async def hook(hook_input: Any, tool_use_id: Optional[str], context: Any) -> Any:
            data = dict(hook_input or {})
            inputs.append(
                {
                    "hook_event_name": data.get("hook_event_name"),
                    "tool_name": data.get("tool_name"),
                    "tool_input": data.get("tool_input"),
                    "tool_use_id_set": bool(tool_use_id),
                    "keys": sorted(data),
                }
            )
            return output

        options = options_for(
            ctx, hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[hook])]}
        )
        await run_query(ctx.seen, tool_prompt(ctx, filename), options)
        ctx.seen.facts["file_exists"] = {filename: exists(ctx, filename)}

    return case


case_hook_pretooluse = _hook_case({}, "hooked.txt")
case_hook_pretooluse_allow = _hook_case(
    {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "hook says yes",
        }
    },
    "hookallowed.txt",
)
case_hook_pretooluse_deny = _hook_case(
    {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "hook says no",
        }
    },
    "hookdenied.txt",
)


async def case_client_three_turns(ctx: Ctx) -> None:
    async with ClaudeSDKClient(options=options_for(ctx)) as client:
        info = await client.get_server_info()
        ctx.seen.facts["server_info_keys"] = sorted(info) if isinstance(info, dict) else None
        for word in ("ONE", "TWO", "THREE"):
            await client.query(f"turn {word.lower()} [[reply:{word}]]")
            async for message in client.receive_response():
                ctx.seen.add(message)
    results = ctx.seen.results()
    ids = [r.get("session_id") for r in results]
    ctx.seen.facts["result_texts"] = [r.get("result") for r in results]
    ctx.seen.facts["session_ids"] = ids
    ctx.seen.facts["session_ids_equal"] = len(ids) == 3 and len(set(ids)) == 1


BACKGROUND_CALL = {"command": "sleep 2; echo done > bg.txt", "run_in_background": True}


async def case_background_command(ctx: Ctx) -> None:
    """The model runs a command in the background and answers; the run goes on until the
    command ends and the model has answered its notification (a second result)."""
    call = json.dumps({**BACKGROUND_CALL, "description": "bg"})
    await run_query(
        ctx.seen, f"Run it [[tooljson:Bash:{call}]]", options_for(ctx, allowed_tools=["Bash"])
    )
    ctx.seen.facts["file_exists"] = exists(ctx, "bg.txt")
    ctx.seen.facts["result_texts"] = [r.get("result") for r in ctx.seen.results()]


async def case_subagent(ctx: Ctx) -> None:
    """The model delegates to a subagent (in the background by default from 2.1.198)."""
    call = json.dumps(
        {"description": "sub job", "prompt": "Say hello", "subagent_type": "general-purpose"}
    )
    await run_query(ctx.seen, f"Delegate [[tooljson:Agent:{call}]]", options_for(ctx))
    ctx.seen.facts["result_texts"] = [r.get("result") for r in ctx.seen.results()]


async def case_api_error(ctx: Ctx) -> None:
    await run_query(ctx.seen, "[[error:400]]", options_for(ctx))


async def case_max_turns_1(ctx: Ctx) -> None:
    options = options_for(ctx, max_turns=1, allowed_tools=["Bash"])
    await run_query(ctx.seen, tool_prompt(ctx, "maxturns.txt"), options)
    ctx.seen.facts["file_exists"] = {"maxturns.txt": exists(ctx, "maxturns.txt")}


async def case_interrupt(ctx: Ctx) -> None:
    seen = ctx.seen
    async with ClaudeSDKClient(options=options_for(ctx)) as client:
        await client.query("[[sleep:30]] slow")
        stream = client.receive_response().__aiter__()
        pending: asyncio.Future[Any] = asyncio.ensure_future(stream.__anext__())
        done, _ = await asyncio.wait({pending}, timeout=2.0)
        seen.facts["first_message_before_interrupt"] = bool(done)
        first: Optional[asyncio.Future[Any]] = pending
        if done:
            seen.add(pending.result())
            first = None
        started = time.monotonic()
        await client.interrupt()
        seen.facts["interrupt_ack_seconds"] = round(time.monotonic() - started, 3)
        while True:
            try:
                message = await (first if first is not None else stream.__anext__())
            except StopAsyncIteration:
                break
            first = None
            seen.add(message)
            if isinstance(message, ResultMessage):
                seen.facts["interrupt_to_result_seconds"] = round(time.monotonic() - started, 3)
                break


async def case_control_misc(ctx: Ctx) -> None:
    """Every other control request the SDK can send, between two turns of one client:
    what the CLI answers to each (response keys, or the error text)."""
    answers: Dict[str, Any] = {}
    ctx.seen.facts["control_answers"] = answers

    async def ask(name: str, call: Callable[[], Awaitable[Any]]) -> None:
        try:
            response = await asyncio.wait_for(call(), 15)
            answers[name] = {
                "ok": True,
                "keys": sorted(response) if isinstance(response, dict) else None,
                "value": response
                if not isinstance(response, dict) or len(json.dumps(response, default=str)) < 600
                else None,
            }
        except Exception as exc:
            answers[name] = {
                "ok": False,
                "exception": type(exc).__name__,
                "message": str(exc)[:500],
            }

    async with ClaudeSDKClient(options=options_for(ctx)) as client:
        await client.query("first [[reply:FIRST]]")
        async for message in client.receive_response():
            ctx.seen.add(message)
        user_ids = [
            r.get("user_message_uuid") or r.get("uuid")
            for r in ctx.seen.raw
            if isinstance(r, dict) and r.get("type") in ("result", "user")
        ]
        await ask("mcp_status", client.get_mcp_status)
        await ask("get_context_usage", client.get_context_usage)
        await ask("set_permission_mode", lambda: client.set_permission_mode("acceptEdits"))
        await ask("set_model", lambda: client.set_model("claude-sonnet-4-5-20250929"))
        await ask("set_model_default", lambda: client.set_model(None))
        await ask(
            "rewind_files",
            lambda: client.rewind_files(
                user_ids[0] if user_ids else "00000000-0000-0000-0000-000000000000"
            ),
        )
        await ask("mcp_reconnect", lambda: client.reconnect_mcp_server("nosuch"))
        await ask("mcp_toggle", lambda: client.toggle_mcp_server("nosuch", False))
        await ask("stop_task", lambda: client.stop_task("nosuch"))
        await ask("interrupt_idle", client.interrupt)
        await client.query("second [[reply:SECOND]]")
        async for message in client.receive_response():
            ctx.seen.add(message)


async def case_set_permission_mode(ctx: Ctx) -> None:
    """acceptEdits between two turns: the second turn's Write runs without asking (in the
    default mode it would be refused: no can_use_tool here)."""
    target = ctx.workdir / "edited.txt"
    write = json.dumps({"file_path": str(target), "content": "accepted"})
    async with ClaudeSDKClient(options=options_for(ctx)) as client:
        await client.query(f"before [[tooljson:Write:{write}]]")
        async for message in client.receive_response():
            ctx.seen.add(message)
        ctx.seen.facts["written_before"] = target.exists()
        await client.set_permission_mode("acceptEdits")
        await client.query(f"after [[tooljson:Write:{write}]]")
        async for message in client.receive_response():
            ctx.seen.add(message)
    ctx.seen.facts["written_after"] = target.exists()


async def case_eof_mid_turn(ctx: Ctx) -> None:
    """Close stdin while a turn is under way (the prompt sleeps 5 s): does the CLI
    finish the turn and print its result, or stop?"""
    seen = ctx.seen
    client = ClaudeSDKClient(options=options_for(ctx))
    await client.connect()
    try:
        await client.query("[[sleep:5]] eof mid turn")
        await asyncio.sleep(1.0)
        assert client._transport is not None
        await client._transport.end_input()
        started = time.monotonic()
        async for message in client.receive_messages():
            seen.add(message)
        seen.facts["stream_end_after_eof_seconds"] = round(time.monotonic() - started, 3)
    finally:
        await client.disconnect()


def _calc_server(calls: List[Dict[str, Any]]) -> Any:
    """An in-process MCP server: `add` sums, `fail` raises (the SDK turns the exception
    into an error result)."""

    async def add(args: Dict[str, Any]) -> Dict[str, Any]:
        calls.append({"tool": "add", **args})
        return {"content": [{"type": "text", "text": f"sum={args['a'] + args['b']}"}]}

    async def fail(args: Dict[str, Any]) -> Dict[str, Any]:
        calls.append({"tool": "fail", **args})
        raise ValueError(f"refused: {args.get('why')}")

    tools = [
        sdk.tool("add", "Add two integers", {"a": int, "b": int})(add),
        sdk.tool("fail", "Always fails", {"why": str})(fail),
    ]
    return sdk.create_sdk_mcp_server(name="calc", version="1.0.0", tools=tools)


async def _sdk_mcp_case(ctx: Ctx, tool: str, tool_input: str) -> None:
    calls: List[Dict[str, Any]] = []
    options = options_for(
        ctx,
        mcp_servers={"calc": _calc_server(calls)},
        allowed_tools=["mcp__calc__add", "mcp__calc__fail"],
    )
    prompt = f"[[tooljson:mcp__calc__{tool}:{tool_input}]]"
    await run_query(ctx.seen, prompt, options)
    ctx.seen.facts["tool_calls"] = calls


async def case_sdk_mcp_tool(ctx: Ctx) -> None:
    """The model calls a tool of the caller's own process: the call reaches the Python
    function and its result reaches the model."""
    await _sdk_mcp_case(ctx, "add", '{"a": 2, "b": 40}')


async def case_sdk_mcp_tool_error(ctx: Ctx) -> None:
    await _sdk_mcp_case(ctx, "fail", '{"why": "no"}')


async def case_old_sdk_plain(ctx: Ctx) -> None:
    old: Any = importlib.import_module("claude_code_sdk")
    _install_raw_capture(
        ["claude_code_sdk._internal.message_parser", "claude_code_sdk._internal.client"],
        ctx.seen.skipped,
    )
    transports = importlib.import_module("claude_code_sdk._internal.transport.subprocess_cli")
    SubprocessCLITransport = transports.SubprocessCLITransport

    # ClaudeCodeOptions (0.0.25) has no cli_path: the package finds `claude` on PATH, or
    # takes a transport made with cli_path= (the same argv either way).
    prompt = "What is 2+2?"
    options = old.ClaudeCodeOptions(cwd=str(ctx.workdir))
    transport = SubprocessCLITransport(prompt=prompt, options=options, cli_path=ctx.cli_path)
    async for message in old.query(prompt=prompt, options=options, transport=transport):
        ctx.seen.add(message)


CASES: Dict[str, Callable[[Ctx], Awaitable[None]]] = {
    "plain": case_plain,
    "background_command": case_background_command,
    "subagent": case_subagent,
    "tool_allowed": case_tool_allowed,
    "tool_allowed_updated_input": case_tool_allowed_updated_input,
    "tool_denied": case_tool_denied,
    "hook_pretooluse": case_hook_pretooluse,
    "hook_pretooluse_allow": case_hook_pretooluse_allow,
    "hook_pretooluse_deny": case_hook_pretooluse_deny,
    "client_three_turns": case_client_three_turns,
    "api_error": case_api_error,
    "max_turns_1": case_max_turns_1,
    "interrupt": case_interrupt,
    "eof_mid_turn": case_eof_mid_turn,
    "control_misc": case_control_misc,
    "old_sdk_plain": case_old_sdk_plain,
    "sdk_mcp_tool": case_sdk_mcp_tool,
    "set_permission_mode": case_set_permission_mode,
    "sdk_mcp_tool_error": case_sdk_mcp_tool_error,
}


# In the summary, Result classes of both packages are named ResultMessage etc.; the old
# package's classes are not the new one's, so isinstance above covers only the new SDK.
def _patch_old_sdk_summaries() -> None:
    try:
        old: Any = importlib.import_module("claude_code_sdk")
    except ImportError:
        return
    global AssistantMessage, UserMessage, ResultMessage
    AssistantMessage = (sdk.AssistantMessage, old.AssistantMessage)
    UserMessage = (sdk.UserMessage, old.UserMessage)
    ResultMessage = (sdk.ResultMessage, old.ResultMessage)


async def run_case(name: str, ctx: Ctx, timeout: float) -> Dict[str, Any]:
    started = time.monotonic()
    report: Dict[str, Any] = {"case": name}
    try:
        await asyncio.wait_for(CASES[name](ctx), timeout)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        if isinstance(exc, asyncio.TimeoutError):
            report["exception"] = "TimeoutError"
            report["message"] = f"case did not finish within {timeout:g} s"
        else:
            report["exception"] = type(exc).__name__
            report["message"] = str(exc)
            data = getattr(exc, "data", None)
            if isinstance(data, dict):
                report["exception_data"] = {
                    k: data.get(k) for k in ("subtype", "is_error", "result", "errors")
                }
            exit_code = getattr(exc, "exit_code", None)
            if exit_code is not None:
                report["exit_code"] = exit_code
    report.update(ctx.seen.report())
    report["seconds"] = round(time.monotonic() - started, 3)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli-path")
    parser.add_argument("--case", choices=sorted(CASES))
    parser.add_argument("--workdir", help="cwd of the CLI and where tool files go")
    parser.add_argument("--timeout", type=float, default=CASE_TIMEOUT)
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    if args.list:
        print("\n".join(CASES))
        return 0
    if not args.cli_path or not args.case:
        parser.error("--cli-path and --case are required")
    _patch_old_sdk_summaries()
    seen = Seen()
    _install_raw_capture(
        ["claude_agent_sdk._internal.message_parser", "claude_agent_sdk._internal.client"],
        seen.skipped,
    )
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="sdk-case-")).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    ctx = Ctx(cli_path=args.cli_path, workdir=workdir, seen=seen)
    report = asyncio.run(run_case(args.case, ctx, args.timeout))
    sys.stdout.write(json.dumps(report, default=str) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
