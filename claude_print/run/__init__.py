"""The run's orchestrator: `runner.Session` owns the one event loop and drives the phases
(boot, turns, shutdown) that the packages below it provide. Before the spawn: the
relay, the TUI's command line and environment (launch), --file downloads
(file_downloads); signals as an event the loop selects on (signals).

Its face to the packages above it: the command line starts a run through `entry`, warm
start holds one through `held_run` (a run booted before its prompt), and both use
`signals`; the `Session` behind the face is the run package's own.

May import: turns, sdk, printing, records, hooks, mcp, tui, ground.
Face: entry, held_run, signals.
"""
