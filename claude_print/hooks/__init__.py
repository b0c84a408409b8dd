"""The hook relay side: how claude-print hears from Claude Code while it runs.

The relay (a private dir, a FIFO, the $EDITOR script), the `--settings` document and
hook script it writes there (hook_settings), the asking hooks' reply FIFOs (replies),
and the sweep of relay dirs killed runs left behind (leftovers); the stream-json events
of the user's own hook runs (hook_events); and what the settings the TUI reads decide
about hooks and the permission mode (user_hooks, permissions).

May import: mcp, ground.
"""
