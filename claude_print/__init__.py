"""claude-print: `claude -p` through Claude Code's interactive TUI."""

__version__ = "0.1.0"
