"""Real MCP servers for the tests, written with the SDK's server API (run as subprocesses or in a thread)."""
