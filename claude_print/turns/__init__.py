"""One turn, from the prompt to its result: the turn's state (turn), its slash-command
rules (slash, with the per-release data slash_commands), which messages that came
together join one turn (batching), the wait for MCP servers before the first prompt
(mcp_wait), the watch from submission to verdict (turn_watch), hooks that wait for a
decision (asking), the transcript as read so far (transcript_feed), the stream-json
output during the turn (stream_out, with the subagents' own messages: subagent_stream),
the cost the TUI counted (tui_cost), and the end: the result object (turn_end) and its
printing (results).

May import: sdk, printing, records, hooks, mcp, tui, ground.
"""
