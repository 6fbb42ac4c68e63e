"""MCP client: server manager, tool adapter, prompts and resources (issue 11)."""
