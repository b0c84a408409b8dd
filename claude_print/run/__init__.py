"""The run's orchestrator: `runner.Session` drives the phases (boot, turns, shutdown) that
the packages below it provide, over the one event loop of `pump.Pump` (the I/O owner:
the child, the relay, the signal pipe, the keys), which hands what it reads to
`routes.Routes`, which changes the run's state (`run_state.RunState`). Before the spawn: the
relay, the TUI's command line and environment (launch), --file downloads
(file_downloads); signals as an event the loop selects on (signals).

Its face to the packages above it: the command line starts a run through `entry`, warm
start holds one through `held_run` (a run booted before its prompt), and both use
`signals`; the `Session` behind the face is the run package's own.

May import: turns, sdk, printing, records, hooks, mcp, tui, ground.
Face: entry, held_run, signals.
"""
