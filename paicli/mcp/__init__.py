"""MCP servers as tools: their tools are offered as `mcp__SERVER__TOOL` and pass the same gate.

config.py      [mcp_servers.NAME] and .mcp.json, ${VAR} expansion (pure)
schema.py      tool names and JSON schemas made valid for OpenAI function calling (pure)
tool.py        an MCP tool as a paicli Tool, and what its results become for the model
manager.py     the servers of a session: one owner task each, status, restart, stop (no SDK import)
connection.py  the SDK: transports, ClientSession, initialize, tools/list, calls (imported in a thread)
stdio.py       the stdio transport: the server's process, its stderr tail, its process group
sdk.py         whether the SDK is installed (the extra paicli[mcp]), without importing it

May import: paicli.tools, paicli.common, paicli (its version). Never policy or above.
"""
