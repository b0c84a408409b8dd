"""The run's orchestrator: `runner.Session` owns the one event loop and drives the phases
(boot, turns, shutdown) that the packages below it provide. Before the spawn: the
relay, the TUI's command line and environment (launch), --file downloads
(file_downloads); signals as an event the loop selects on (signals).

May import: turns, sdk, printing, records, hooks, mcp, tui, ground.
"""
