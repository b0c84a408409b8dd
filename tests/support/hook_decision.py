"""A user hook for the e2e tests: `hook_decision.py EVENT DECISION` answers EVENT with
DECISION's output (see DECISIONS) and logs the run to $HOOK_MARKS/<session>.<event>.
A decision marked once answers only the first time in a session (a Stop hook that always
blocked would never let the turn end); later runs say nothing."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, Tuple

ONCE = ("block-once", "exit2-once")


def output(event: str, decision: str) -> Tuple[int, str, str]:
    """(exit code, stdout, stderr) of the hook."""
    specific: Dict[str, Any] = {"hookEventName": event}
    if decision == "exit2-once":
        return 2, "", "Please also say BANANA"
    body: Dict[str, Any]
    if decision == "block-once" or decision == "block":
        body = {"decision": "block", "reason": "Please also say BANANA"}
    elif decision == "continue-false":
        body = {"continue": False, "stopReason": "halted by the zebra hook"}
    elif decision == "context":
        specific["additionalContext"] = "ZEBRA CONTEXT 7731"
        body = {"hookSpecificOutput": specific}
    elif event == "PreToolUse":
        specific["permissionDecision"] = decision
        specific["permissionDecisionReason"] = f"zebra says {decision}"
        body = {"hookSpecificOutput": specific}
    elif event == "PermissionRequest":
        specific["decision"] = {"behavior": decision, "message": f"zebra says {decision}"}
        body = {"hookSpecificOutput": specific}
    else:
        raise SystemExit(f"hook_decision.py: no decision {decision!r} for {event}")
    return 0, json.dumps(body), ""


def main() -> int:
    event, decision = sys.argv[1], sys.argv[2]
    payload = json.load(sys.stdin)
    log = os.path.join(os.environ["HOOK_MARKS"], f"{payload.get('session_id')}.{event}")
    with open(log, "a", encoding="utf-8") as f:
        f.write(decision + "\n")
    with open(log, encoding="utf-8") as f:
        runs = len(f.read().splitlines())
    if decision in ONCE and runs > 1:
        return 0
    code, out, err = output(event, decision)
    sys.stdout.write(out)
    sys.stderr.write(err)
    return code


if __name__ == "__main__":
    sys.exit(main())
