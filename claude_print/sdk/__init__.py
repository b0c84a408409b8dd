"""The Agent SDK's input side: `--input-format stream-json` on stdin, its control
requests, and claude-print's own requests back to the caller (stream_input).

May import: printing, hooks, tui, ground.
"""
