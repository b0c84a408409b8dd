"""The command line: `claude -p`'s flags parsed (parser) and the prompt built as it does (cli),
the user's defaults (config), the prompt read from stdin or a file (prompt_input), and
`--check`, the credential-free self-test (doctor, with login_check).

May import: warm_start, run, turns, sdk, printing, records, hooks, mcp, tui, needle, ground.
"""
