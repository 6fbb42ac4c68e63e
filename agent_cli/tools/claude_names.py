"""Claude Code's tool names and ours, so its command, agent and plugin files work unchanged."""

from __future__ import annotations

# Claude Code tool name (lower-cased) -> our tool.
CLAUDE_TO_OURS = {
    "bash": "shell", "read": "read_file", "grep": "grep", "glob": "grep", "ls": "list_dir",
    "edit": "apply_patch", "multiedit": "apply_patch", "write": "apply_patch", "todowrite": "update_plan",
}


def our_tool_name(claude_name: str) -> str | None:
    """Our tool for a Claude Code name (any case), or None when there is no equivalent."""
    return CLAUDE_TO_OURS.get(claude_name.strip().lower())
