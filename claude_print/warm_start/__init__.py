"""The warm start (--warm): a keeper boots a TUI ahead of time and hands it to the next
run with the same key. The run's side (warm, warm_link), the keeper's (keeper), the
socket between them (handover), and what a warm TUI must not have read too early
(fingerprint, whose git call is made as Claude Code makes its own: git_call).

May import: run, turns, sdk, printing, records, hooks, mcp, tui, ground.
"""
