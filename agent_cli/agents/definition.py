"""Agent definition files: markdown with YAML front matter, in Claude Code's format.

``name`` and ``description`` say what the agent is for (the model picks agents by them);
``tools`` (a list or a comma-separated string; Claude Code's names are mapped to ours) limits
what the agent may call, all the parent's tools when absent; ``disallowedTools`` takes tools away
(from ``tools``, or from the built-in ones); ``model`` is ``inherit`` (default),
``sonnet``, ``opus``, ``haiku`` or a model name; ``isolation: worktree`` runs it in a git worktree
of its own (worktrees/). The body is the agent's system prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent_cli.context.skills import read_front_matter  # one front-matter syntax for skills and agents
from agent_cli.tools.claude_names import our_tool_name, resolve_model

# Every tool an agent file may name in our own vocabulary (`task` only where the depth allows it).
KNOWN_TOOLS = [
    "shell",
    "read_file",
    "grep",
    "list_dir",
    "apply_patch",
    "update_plan",
    "task",
    "memory_save",
    "memory_search",
    "mcp_search",
    "mcp_call",
]
MCP_PREFIX = "mcp__"  # MCP tools have Claude Code's names: mcp__<server>__<tool>, or mcp__<server> for all
MAX_DESCRIPTION_CHARS = 1024


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    name: str  # "explore", or "plugin:agent" for a plugin's
    description: str
    prompt: str  # the body: the agent's own system prompt
    tools: tuple[str, ...] | None  # our tool names; None = every tool the parent may use
    model: str = "inherit"
    source: str = "bundled"  # "repo", "user", "bundled" or "plugin <name>"
    path: Path | None = None
    isolation: str | None = None  # "worktree": the child runs in a worktree of its own

    def allows(self, tool: str) -> bool:
        """Whether the agent's ``tools`` list names ``tool`` (``mcp__server`` names a server's all)."""
        if self.tools is None or tool in self.tools:
            return True
        return any(name.startswith(MCP_PREFIX) and tool.startswith(name + "__") for name in self.tools)

    def resolve_model(self, current: str, wire_api: str) -> str:
        """The model the child runs: Claude's aliases only mean something on Anthropic's API."""
        return resolve_model(self.model, current, wire_api)


def parse_agent_file(path: Path, source: str, namespace: str | None = None) -> tuple[AgentDefinition | None, str]:
    """(definition, a warning or "") or (None, why the file cannot be used)."""
    meta, body, problem = read_front_matter(path)
    if meta is None:
        return None, problem
    return agent_from_fields(meta.get("name", path.stem), meta, body, source, path, namespace)


def agent_from_fields(
    name: object, meta: dict, prompt: object, source: str, path: Path | None = None, namespace: str | None = None
) -> tuple[AgentDefinition | None, str]:
    """An agent from a file's front matter and body, or from an SDK host's definition (``meta``
    with Claude's keys, ``prompt`` its system prompt): (definition, a warning or "") or (None, why
    it cannot be used)."""
    if not isinstance(prompt, str):
        return None, "`prompt` must be text"
    description = meta.get("description")
    if not isinstance(name, str) or not name.strip() or any(c.isspace() for c in name.strip()):
        return None, "front matter `name` must be one word"
    if not isinstance(description, str) or not description.strip():
        return None, "front matter needs a `description` (the model chooses agents by it)"
    description = " ".join(description.split())[:MAX_DESCRIPTION_CHARS]
    model = meta.get("model", "inherit")
    if not isinstance(model, str):
        return None, "front matter `model` must be text (inherit, sonnet, opus, haiku or a model name)"
    raw_tools = meta.get("tools")
    if isinstance(raw_tools, str):
        raw_tools = raw_tools.split(",")
    if raw_tools is not None and not (isinstance(raw_tools, list) and all(isinstance(t, str) for t in raw_tools)):
        return None, "front matter `tools` must be a comma-separated string or a list of names"
    isolation = meta.get("isolation")
    if isolation is not None and isolation != "worktree":
        return None, "front matter `isolation` can only be `worktree`"
    limited = raw_tools is not None
    tools, unknown = map_tool_names(raw_tools or [])
    warning = f"tools with no equivalent here are ignored: {', '.join(unknown)}" if unknown else ""
    denied = meta.get("disallowedTools")
    if isinstance(denied, str):
        denied = denied.split(",")
    if isinstance(denied, list) and all(isinstance(t, str) for t in denied) and denied:
        names, _ = map_tool_names(denied)  # all but these: of the tools named, or of the built-in ones
        tools, limited = [tool for tool in (tools if limited else KNOWN_TOOLS) if tool not in names], True
    full_name = f"{namespace}:{name.strip()}" if namespace else name.strip()
    definition = AgentDefinition(
        name=full_name,
        description=description,
        prompt=prompt,
        tools=tuple(tools) if limited else None,
        model=model,
        source=source,
        path=path,
        isolation=isolation,
    )
    return definition, warning


def map_tool_names(entries: list[str]) -> tuple[list[str], list[str]]:
    """(our tool names, entries with no equivalent) for an agent's ``tools`` list.

    Claude Code's names map through claude_names; ``Bash(git:*)``-style patterns allow the tool."""
    names: list[str] = []
    unknown: list[str] = []
    for entry in (entry.strip() for entry in entries):
        if not entry:
            continue
        base = entry.split("(", 1)[0].strip()
        if base.startswith(MCP_PREFIX):
            name: str | None = base
        else:
            name = base.lower() if base.lower() in KNOWN_TOOLS else our_tool_name(base)
        if name is None:
            unknown.append(entry)
        elif name not in names:
            names.append(name)
    return names, unknown
