"""claude-print: `claude -p` through Claude Code's interactive TUI.

The modules beside this file are the ground every package may import, and they import
only each other: contract (what claude-print assumes about Claude Code, per release),
flags (every `claude -p` flag and what claude-print does with it), options (one run's
options), errors (exit codes), ids, jsjson and jsonfile.

The packages, each importing only the ones below it (its __init__ says which):

    command         the command line and --check
    warm_start      --warm: a TUI booted ahead for the next run
    run             the orchestrator (runner.Session) and what comes before the spawn
    turns           one turn, from the prompt to its result
    sdk             the Agent SDK's input side (stream-json on stdin)
    printing        what the caller sees: claude -p's output
    hooks           the hook relay and what the settings decide about hooks
    records         Claude Code's transcript, read
    mcp             the MCP servers claude-print runs
    tui             the terminal side: the TUI on a PTY, its screens and keys
    needle          NEEDLE's view of claude-print (beside the rest, for --check)
"""

__version__ = "0.1.0"
