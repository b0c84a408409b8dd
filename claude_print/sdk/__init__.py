"""The Agent SDK's input side: `--input-format stream-json` on stdin, its control
requests, and claude-print's own requests back to the caller (stream_input); the
caller's hooks and its answers, as the relayed hooks' outputs (answers); the stream-json
`user` lines about the caller's messages: replayed, or their turn interrupted (user_events).

May import: printing, hooks, tui, ground.
"""
