"""claude_print.sdk.answers: the caller's hooks read from `initialize`, and its answers
(`can_use_tool`, `hook_callback`) as the relayed hooks' outputs. The whole round trip
through the relay: tests/sdk/test_stream_input.py and tests/e2e/test_e2e_sdk.py."""

from __future__ import annotations

from claude_print.sdk import answers


def test_sdk_hooks_are_read_from_initialize() -> None:
    hooks = answers.sdk_hooks(
        {
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hookCallbackIds": ["hook_0", "hook_1"], "timeout": 7},
                    {"matcher": None, "hookCallbackIds": []},  # nothing to call: dropped
                ],
                "Stop": [{"hookCallbackIds": ["hook_2"]}],
            }
        }
    )
    assert hooks == [
        answers.SdkHook("PreToolUse", "Bash", ("hook_0", "hook_1"), 7.0),
        answers.SdkHook("Stop", None, ("hook_2",), None),
    ]
    assert answers.sdk_hooks({"hooks": None}) == []


def test_can_use_tool_answers_become_permission_request_decisions() -> None:
    tool_input = {"command": "ls"}
    allow = answers.permission_decision(
        {"behavior": "allow", "updatedInput": tool_input}, tool_input
    )
    assert allow["hookSpecificOutput"] == {
        "hookEventName": "PermissionRequest",
        "decision": {"behavior": "allow"},  # unchanged input: nothing to update
    }
    changed = answers.permission_decision(
        {"behavior": "allow", "updatedInput": {"command": "pwd"}}, tool_input
    )
    assert changed["hookSpecificOutput"]["decision"]["updatedInput"] == {"command": "pwd"}
    deny = answers.permission_decision(
        {"behavior": "deny", "message": "no thanks", "interrupt": True}, tool_input
    )
    assert deny["hookSpecificOutput"]["decision"] == {
        "behavior": "deny",
        "message": "no thanks",
        "interrupt": True,
    }


def test_hook_outputs_merge_and_a_stop_stands() -> None:
    merged = answers.merge_hook_outputs(
        [
            {"continue": False, "hookSpecificOutput": {"hookEventName": "PreToolUse"}},
            {"continue": True, "hookSpecificOutput": {"permissionDecision": "deny"}},
        ]
    )
    assert merged == {
        "continue": False,
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"},
    }
    assert answers.denies_tool("PreToolUse", merged)
    assert not answers.denies_tool("Stop", merged)
    assert not answers.denies_tool("PreToolUse", {})
