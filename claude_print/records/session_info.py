"""What the session offers, read from its transcript: system/init's lists.

`claude -p` lists the session's tools, agents and skills in `system/init`. The TUI tells
claude-print nothing directly, but its transcript records them before the first answer
(measured on 2.1.197, 2.1.270 and 2.1.331):

- `agent_listing_delta` attachments: the agent types added (and removed); the TUI also
  offers `claude-code-guide`, which `claude -p` never lists (its interactive-only guide);
- a `skill_listing` attachment: one `- name: description` line per skill;
- `api-request-shape` records (2.1.330 on): the request's `tools`, where the main agent
  tool is named `Agent` (`claude -p` lists it as `Task`, first) and a placeholder stands
  for the deferred ones; `deferred_tools_delta` attachments name those. Older releases
  record neither: their tool list stays empty.

`claude -p` lists the tools with `Task` first and the rest sorted; so does this.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List

INTERACTIVE_ONLY_AGENTS = ("claude-code-guide",)
PLACEHOLDER_TOOLS = ("DeferredToolPlaceholder",)
AGENT_TOOL = "Agent"  # the request's name for what `claude -p` lists as Task
LISTED_AGENT_TOOL = "Task"


def _apply(names: List[str], added: Any, removed: Any) -> None:
    for name in removed if isinstance(removed, list) else []:
        if name in names:
            names.remove(name)
    for name in added if isinstance(added, list) else []:
        if isinstance(name, str) and name not in names:
            names.append(name)


def session_lists(records: Iterable[Dict[str, Any]]) -> Dict[str, List[str]]:
    """`tools`, `agents` and `skills` as the records so far tell them."""
    requested: List[str] = []
    deferred: List[str] = []
    agents: List[str] = []
    skills: List[str] = []
    for record in records:
        if record.get("type") == "api-request-shape":
            shape = record.get("shape")
            tools = shape.get("tools") if isinstance(shape, dict) else None
            if isinstance(tools, list):
                requested = [
                    t["name"]
                    for t in tools
                    if isinstance(t, dict) and isinstance(t.get("name"), str)
                ]
            continue
        attachment = record.get("attachment")
        if record.get("type") != "attachment" or not isinstance(attachment, dict):
            continue
        kind = attachment.get("type")
        if kind == "deferred_tools_delta":
            _apply(deferred, attachment.get("addedNames"), attachment.get("removedNames"))
        elif kind == "agent_listing_delta":
            _apply(agents, attachment.get("addedTypes"), attachment.get("removedTypes"))
        elif kind == "skill_listing" and isinstance(attachment.get("content"), str):
            skills = [
                line[2:].split(":", 1)[0].strip()
                for line in attachment["content"].splitlines()
                if line.startswith("- ") and ":" in line
            ]
    return {
        "tools": listed_tools(requested, deferred) if requested else [],
        "agents": [a for a in agents if a not in INTERACTIVE_ONLY_AGENTS],
        "skills": skills,
    }


def listed_tools(requested: List[str], deferred: List[str]) -> List[str]:
    names = {LISTED_AGENT_TOOL if n == AGENT_TOOL else n for n in requested + deferred}
    names -= set(PLACEHOLDER_TOOLS)
    rest = sorted(names - {LISTED_AGENT_TOOL})
    return [LISTED_AGENT_TOOL, *rest] if LISTED_AGENT_TOOL in names else rest
