"""The MCP servers claude-print puts between Claude Code and a tool: the gate the user's
stdio servers start behind (mcp_gate), the --json-schema server with `claude -p`'s
StructuredOutput tool (mcp_structured; its validator schema_check, with schema_meta, the
schema's own check, and schema_keywords, what both share) and the bridge to the
Agent SDK's in-process servers (sdk_mcp). Each runs as a small program of its own
(`boot_program`), so what it imports is kept to the standard library and this package.

May import: ground.
"""
