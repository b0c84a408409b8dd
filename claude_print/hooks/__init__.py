"""The hook relay side: how claude-print hears from Claude Code while it runs.

The relay (a private dir, a settings file, a hook script, a FIFO) and the sweep of
relay dirs killed runs left behind (leftovers); the stream-json events of the user's
own hook runs (hook_events); and what the settings the TUI reads decide about hooks and
the permission mode (user_hooks, permissions).

May import: mcp, ground.
"""
