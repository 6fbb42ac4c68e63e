"""Subagents: agent definitions, the task tool, child sessions (issue 12)."""
