"""The lean profile: what a small context window (<= 8k, or ``context_profile = "lean"``) sees.

A short system prompt written for it (``prompts/lean/system.md``), terse descriptions of the four
tools that earn their place (``prompts/lean/tool_<name>.md``), and every other tool (memory,
``task``, MCP servers' tools) behind one ``tool_search`` / ``tool_call`` pair (the door's lean
face, tools/door.py), so the tool list stays small and never changes. The choice of tools is the three tables below and nothing else:
a new tool is behind the pair unless it is named here.
"""

from __future__ import annotations

from agent_cli.context.prompts import PromptError, PromptLibrary
from agent_cli.models.base import ToolSpec

LEAN_WINDOW_MAX = 8_192  # "auto" is lean up to this window
PROFILES = ("auto", "lean", "full")
TOOL_SEARCH, TOOL_CALL = "tool_search", "tool_call"
# Offered directly, with terse descriptions and only these parameters.
LEAN_TOOLS: dict[str, tuple[str, ...]] = {
    "shell": ("command", "workdir", "timeout_ms", "sandbox_permissions"),
    "read_file": ("path", "offset", "limit"),
    "apply_patch": ("patch",),
    "grep": ("pattern", "path", "include"),
}
# Not offered at all: the direct tools do their job (list_dir; shell_output and shell_kill serve
# background commands, which the lean shell does not start), they cost more than they give in a
# small window (update_plan, web_fetch, web_search: pages do not fit), or the pair replaces them (the
# door's MCP face, mcp_search / mcp_call, is never shown beside it: tool_search finds the MCP tools).
LEAN_LEFT_OUT = frozenset(
    {"list_dir", "update_plan", "shell_output", "shell_kill", "web_fetch", "web_search", "mcp_search", "mcp_call"}
)


def is_lean(profile: str, context_window: int) -> bool:
    return profile == "lean" or (profile == "auto" and context_window <= LEAN_WINDOW_MAX)


# Offered directly in one mode only: plan mode's whole job is its plan.
LEAN_MODE_TOOLS: dict[str, frozenset[str]] = {"plan": frozenset({"update_plan"})}


def offered_directly(name: str, mode: str = "agent") -> bool:
    """In the lean profile: a tool whose schema is in every request."""
    return name in LEAN_TOOLS or name in (TOOL_SEARCH, TOOL_CALL) or name in LEAN_MODE_TOOLS.get(mode, ())


def behind_search(name: str, mode: str = "agent") -> bool:
    """In the lean profile: a tool found with ``tool_search`` and run with ``tool_call``."""
    return not offered_directly(name, mode) and name not in LEAN_LEFT_OUT


def lean_spec(spec: ToolSpec, library: PromptLibrary) -> ToolSpec:
    """``spec`` with its terse description and only the parameters the lean profile keeps."""
    keep = LEAN_TOOLS.get(spec.name)
    if keep is None:
        return spec
    try:
        description = library.render(f"lean/tool_{spec.name}.md").strip()
    except PromptError:  # a broken user override: the full description still works
        description = spec.description
    parameters = dict(spec.parameters)
    properties = parameters.get("properties", {})
    parameters["properties"] = {name: terse(schema) for name, schema in properties.items() if name in keep}
    if "required" in parameters:
        parameters["required"] = [name for name in parameters["required"] if name in keep]
    return ToolSpec(spec.name, description, parameters)


def terse(schema: dict) -> dict:
    """A parameter's schema without its description (the tool's own text says what matters)."""
    return {key: value for key, value in schema.items() if key != "description"}
