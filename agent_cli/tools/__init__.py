"""The tools the model calls."""

from __future__ import annotations

from agent_cli.context.modes import READ_ONLY_TOOLS as READ_ONLY_TOOL_NAMES  # one table: the modes' own
from agent_cli.tools.apply_patch import ApplyPatchTool
from agent_cli.tools.background_tools import ShellKillTool, ShellOutputTool
from agent_cli.tools.base import Tool
from agent_cli.tools.grep import GrepTool
from agent_cli.tools.list_dir import ListDirTool
from agent_cli.tools.read_file import ReadFileTool
from agent_cli.tools.shell import ShellTool
from agent_cli.tools.update_plan import UpdatePlanTool
from agent_cli.tools.web_fetch import WebFetchTool

__all__ = ["READ_ONLY_TOOL_NAMES", "default_tools"]


def default_tools() -> list[Tool]:
    """One instance of each built-in tool, in the order the model sees them (the memory tools,
    built on these, are memory/tools.py's)."""
    return [
        ShellTool(),
        ReadFileTool(),
        GrepTool(),
        ListDirTool(),
        ApplyPatchTool(),
        UpdatePlanTool(),
        ShellOutputTool(),
        ShellKillTool(),
        WebFetchTool(),
    ]
