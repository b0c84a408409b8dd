"""Whether hooks of the user's own could send a finished turn on.

After claude-print's Stop hook the turn is over unless another Stop hook blocks; waiting
for the transcript to close the turn costs about 0.1 s (the TUI flushes it every 100 ms),
so the wait is only made where such a hook may exist: in a settings file the TUI reads,
in --settings, in a managed settings file, or in an enabled plugin (not looked into).
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from claude_print.hooks import permissions
from claude_print.jsonfile import read_object

# Claude Code's managed (policy) settings on Linux.
MANAGED_SETTINGS = "/etc/claude-code/managed-settings.json"


def may_continue_turns(settings: Sequence[Optional[Dict[str, Any]]], event: str) -> bool:
    """Some document defines a hook for `event`, or enables plugins (which may)."""
    for document in settings:
        if not document:
            continue
        hooks = document.get("hooks")
        if isinstance(hooks, dict) and hooks.get(event):
            return True
        plugins = document.get("enabledPlugins")
        if isinstance(plugins, dict) and any(plugins.values()):
            return True
    return False


def stop_hooks_possible(
    sources: Sequence[str],
    cwd: str,
    environ: Mapping[str, str],
    flag_settings: Optional[Dict[str, Any]],
    managed: str = MANAGED_SETTINGS,
) -> bool:
    """A Stop hook of someone else's may run beside claude-print's."""
    return hooks_possible(("Stop",), sources, cwd, environ, flag_settings, managed)


def hooks_possible(
    events: Sequence[str],
    sources: Sequence[str],
    cwd: str,
    environ: Mapping[str, str],
    flag_settings: Optional[Dict[str, Any]],
    managed: str = MANAGED_SETTINGS,
) -> bool:
    """A hook of the user's for one of `events` may run (or a plugin's, which may)."""
    documents: List[Optional[Dict[str, Any]]] = [
        read_object(path) for path in permissions.settings_files(cwd, environ, sources)
    ]
    documents += [flag_settings, read_object(managed)]
    return any(may_continue_turns(documents, event) for event in events)
