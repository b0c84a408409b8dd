"""NEEDLE, the fleet runner claude-print was made for: how it reads its config and
adapters, and whether it would use ours (view, for `--check` and install.sh).

May import: nothing of claude_print.
"""
