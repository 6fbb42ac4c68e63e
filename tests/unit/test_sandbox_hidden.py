"""The names sandbox/hidden.py covers are the ones the agent writes its secrets under."""

from __future__ import annotations

from agent_cli.auth import keys
from agent_cli.mcp import token_store
from agent_cli.sandbox import hidden


def test_the_covered_names_are_where_the_secrets_are_written():
    assert hidden.AUTH_FILE == keys.AUTH_FILE
    assert hidden.MCP_AUTH_DIR == token_store.AUTH_DIR
