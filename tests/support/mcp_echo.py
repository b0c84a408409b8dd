"""A stdio MCP server for the tests: one tool, `say`, which answers "echo: TEXT".

Usage: python3 mcp_echo.py [LOG [DELAY]]. Each call appends TEXT and a newline to LOG,
so a test can see that the tool really ran; DELAY seconds pass before the server reads
its first message, as for a server that is slow to start (npx, a container). JSON-RPC
2.0, one message a line, as Claude Code speaks it to stdio servers.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, Dict, Optional

TOOL = {
    "name": "say",
    "description": "Echo the text back.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}


def answer(request: Dict[str, Any], log: Optional[str]) -> Optional[Dict[str, Any]]:
    method = request.get("method")
    if "id" not in request:
        return None  # a notification
    result: Dict[str, Any]
    if method == "initialize":
        version = request.get("params", {}).get("protocolVersion", "2025-06-18")
        result = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "echo", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        text = str(request.get("params", {}).get("arguments", {}).get("text", ""))
        if log:
            with open(log, "a") as f:
                f.write(text + "\n")
        result = {"content": [{"type": "text", "text": f"echo: {text}"}]}
    elif method == "ping":
        result = {}
    else:
        error = {"code": -32601, "message": f"no method {method}"}
        return {"jsonrpc": "2.0", "id": request["id"], "error": error}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def main() -> None:
    log = sys.argv[1] if len(sys.argv) > 1 else None
    if len(sys.argv) > 2:
        time.sleep(float(sys.argv[2]))
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = answer(json.loads(line), log)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
