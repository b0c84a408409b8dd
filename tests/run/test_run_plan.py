"""The run's plan: the decisions made from the options once (run/run_plan.py)."""

from __future__ import annotations

from typing import Any

import pytest

from claude_print.errors import ClaudePrintError
from claude_print.options import Options
from claude_print.run.run_plan import plan_run, wants_bypass


def opts(**kw: Any) -> Options:
    base = Options(prompt="What is 2+2?", prompt_source="argv")
    return base._replace(**kw)


def test_a_plain_argv_prompt_goes_on_the_command_line() -> None:
    plan = plan_run(opts())
    assert (plan.multi_turn, plan.delivery, plan.argv_prompt) == (False, "argv", "What is 2+2?")
    assert (plan.permission_mode, plan.wants_bypass, plan.can_use_tool) == (
        "default",
        False,
        False,
    )
    assert plan.session_id  # claude-print chooses it


def test_a_prompt_from_stdin_goes_in_by_the_editor() -> None:
    plan = plan_run(opts(prompt_source="stdin"))
    assert (plan.delivery, plan.argv_prompt) == ("editor", None)


def test_stream_json_input_is_many_turns_typed_in() -> None:
    plan = plan_run(opts(prompt="", prompt_source="stdin", input_format="stream-json"))
    assert (plan.multi_turn, plan.delivery, plan.argv_prompt) == (True, "editor", None)
    paste = plan_run(opts(input_format="stream-json", prompt_via="paste"))
    assert paste.delivery == "paste"


def test_the_permission_mode_and_bypass() -> None:
    assert plan_run(opts(skip_permissions=True)).permission_mode == "bypassPermissions"
    assert plan_run(opts(skip_permissions=True)).wants_bypass
    assert plan_run(opts(permission_mode="plan")).permission_mode == "plan"
    assert not plan_run(opts(permission_mode="plan")).wants_bypass
    assert wants_bypass(opts(permission_mode="bypassPermissions"))
    assert wants_bypass(opts(forwarded=("--allow-dangerously-skip-permissions",)))


def test_the_caller_answers_tool_asks_with_stdio() -> None:
    assert plan_run(opts(permission_prompt_tool="stdio")).can_use_tool
    assert not plan_run(opts(permission_prompt_tool="mcp__x__y")).can_use_tool


def test_the_session_id_is_the_callers_or_the_tuis_on_resume() -> None:
    assert plan_run(opts(session_id="abc")).session_id == "abc"
    assert plan_run(opts(resume=True)).session_id is None


def test_a_prompt_that_cannot_be_delivered_fails_the_plan() -> None:
    with pytest.raises(ClaudePrintError):
        plan_run(opts(prompt="x" * 200_000, prompt_via="argv"))
