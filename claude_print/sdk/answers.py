"""The caller's side of the hooks claude-print relays for it (`--input-format stream-json`):
the hooks an `initialize` request registers (sdk_hooks), the outputs of a firing's
callbacks as one hook output (merge_hook_outputs) and whether it refuses the tool
(denies_tool), and a `can_use_tool` answer as the PermissionRequest hook's output
(permission_decision). The asking hooks (turns/asking.py) send them back to Claude Code.
"""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from claude_print import contract


class SdkHook(NamedTuple):
    """One matcher the caller registered at `initialize` for a hook event."""

    event: str
    matcher: Optional[str]
    callback_ids: Tuple[str, ...]
    timeout: Optional[float]


def sdk_hooks(request: Dict[str, Any]) -> List[SdkHook]:
    """The hooks an `initialize` request registers, in order."""
    hooks = request.get("hooks")
    out: List[SdkHook] = []
    if not isinstance(hooks, dict):
        return out
    for event, matchers in hooks.items():
        for entry in matchers if isinstance(matchers, list) else []:
            if not isinstance(entry, dict):
                continue
            ids = tuple(str(i) for i in entry.get("hookCallbackIds") or [])
            timeout = entry.get("timeout")
            matcher = entry.get("matcher")
            out.append(
                SdkHook(
                    str(event),
                    matcher if isinstance(matcher, str) else None,
                    ids,
                    float(timeout) if isinstance(timeout, (int, float)) else None,
                )
            )
    return [hook for hook in out if hook.callback_ids]


def merge_hook_outputs(outputs: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """Several callbacks of one hook firing, as one hook output: later keys win, but
    `hookSpecificOutput` merges and any `continue: false` stands."""
    merged: Dict[str, Any] = {}
    for output in outputs:
        for key, value in output.items():
            if key == "hookSpecificOutput" and isinstance(value, dict):
                merged[key] = {**merged.get(key, {}), **value}
            elif key == "continue" and merged.get("continue") is False:
                continue
            else:
                merged[key] = value
    return merged


def denies_tool(event: str, output: Dict[str, Any]) -> bool:
    """A PreToolUse hook output that refuses the tool (`permissionDecision: deny`, or the
    older `decision: block`)."""
    if event != contract.HOOK_PRE_TOOL_USE:
        return False
    specific = output.get("hookSpecificOutput")
    decision = specific.get("permissionDecision") if isinstance(specific, dict) else None
    return decision == "deny" or output.get("decision") == "block"


def permission_decision(answer: Dict[str, Any], tool_input: Any) -> Dict[str, Any]:
    """A `can_use_tool` answer (`PermissionResult`) as the PermissionRequest hook's output."""
    behavior = answer.get("behavior")
    decision: Dict[str, Any]
    if behavior == "allow":
        updated = answer.get("updatedInput")
        decision = {"behavior": "allow"}
        if isinstance(updated, dict) and updated != tool_input:
            decision["updatedInput"] = updated
        permissions = answer.get("updatedPermissions")
        if isinstance(permissions, list) and permissions:
            decision["updatedPermissions"] = permissions
    else:
        message = answer.get("message")
        decision = {"behavior": "deny", "message": message if isinstance(message, str) else ""}
        if answer.get("interrupt"):
            decision["interrupt"] = True
    return {
        "hookSpecificOutput": {
            "hookEventName": contract.HOOK_PERMISSION_REQUEST,
            "decision": decision,
        }
    }
