"""Modes: ``agent`` (all tools), ``ask`` (read-only tools) and ``plan`` (read-only plus update_plan).

The mode's guidance (``prompts/mode_<mode>.md``) is part of the system prompt at session start; a
change mid-session is appended as a developer fragment so earlier requests stay a prefix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from agent_cli.context.fragments import MODE
from agent_cli.context.prompts import PromptLibrary, prompt_library
from agent_cli.items import Message

MODES = ("agent", "ask", "plan")
READ_ONLY_TOOLS = frozenset({"read_file", "grep", "list_dir", "memory_search"})
_MODE_TOOLS: dict[str, frozenset[str] | None] = {
    "agent": None,  # every tool
    "ask": READ_ONLY_TOOLS | {"task"},  # a subagent gets the same mode, so it only reads too
    "plan": READ_ONLY_TOOLS | {"update_plan", "task"},
}


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of: {', '.join(MODES)}")
    return mode


def tools_for_mode(
    mode: str, all_tool_names: Iterable[str], read_only: Callable[[str], bool] = lambda name: False
) -> list[str]:
    """The tools ``mode`` allows, in the order given; ``read_only`` tools (an MCP tool with
    ``readOnlyHint``) are allowed wherever the read-only built-ins are."""
    allowed = _MODE_TOOLS[check_mode(mode)]
    return [name for name in all_tool_names if allowed is None or name in allowed or read_only(name)]


def mode_guidance(mode: str, library: PromptLibrary | None = None) -> str:
    return (library or prompt_library()).render(f"mode_{check_mode(mode)}.md").strip()


def mode_change_fragment(mode: str, library: PromptLibrary | None = None) -> Message:
    """The developer message to append when the user switches mode mid-session."""
    library = library or prompt_library()
    text = library.render("mode_change.md", mode=mode, mode_guidance=mode_guidance(mode, library)).strip()
    return Message("developer", MODE.wrap(text))
