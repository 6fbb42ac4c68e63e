"""``/plugins`` and ``agent plugin list``: each plugin found and what it contributed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_cli import events as ev
from agent_cli.agents.definition import parse_agent_file
from agent_cli.commands.catalog import CommandCatalog
from agent_cli.commands.invocation import Invocation
from agent_cli.display import home_relative
from agent_cli.plugins.loader import Plugin, PluginSet

if TYPE_CHECKING:
    from pathlib import Path

HOW_TO_ADD = (
    "no plugins found (put a Claude Code plugin in .agent/plugins/NAME/ in the repository or "
    "$AGENT_HOME/plugins/NAME/, or pass --plugin-dir DIR)"
)


async def plugins_command(inv: Invocation) -> None:
    inv.emit(ev.Notice(format_plugins(inv.session.plugins, inv.table), title="plugins"))


def format_plugins(found: PluginSet, table: CommandCatalog) -> str:
    """One block per plugin, then the warnings about plugin files. ``table`` holds the commands
    in effect (a plugin's command that another command shadows is not listed)."""
    blocks = [_block(plugin, table) for plugin in found.plugins] or [HOW_TO_ADD]
    text = "\n\n".join(blocks)
    warnings = [*found.warnings, *(w for w in table.warnings if w.startswith("plugin command"))]
    if warnings:
        text += "\n\nwarnings:\n" + "\n".join(f"  {warning}" for warning in warnings)
    return text


def _block(plugin: Plugin, table: CommandCatalog) -> str:
    title = " ".join(part for part in (plugin.name, plugin.version) if part)
    state = "" if plugin.enabled else "  [disabled in config: [plugins] disabled]"
    lines = [f"{title}  ({plugin.source}: {home_relative(plugin.root)}){state}"]
    if plugin.description:
        lines.append(f"  {plugin.description}")
    if plugin.author:
        lines.append(f"  by {plugin.author}")
    plain = {command.name: short for short, command in table.aliases.items()}
    commands = [
        f"/{name}" + (f" (also /{plain[name]})" if name in plain else "")
        for name, command in table.custom.items()
        if command.source == f"plugin {plugin.name}"
    ]
    hooks = [f"{hook.event}" + (f"[{hook.matcher}]" if hook.matcher else "") for hook in plugin.hooks]
    agents = [_agent_label(plugin.name, path) for path in plugin.agent_files]
    rows = [
        ("commands", ", ".join(commands)),
        ("skills", ", ".join(skill.name for skill in plugin.skills)),
        ("hooks", ", ".join(dict.fromkeys(hooks))),
        ("agents", ", ".join(agents)),
        ("MCP servers", ", ".join(plugin.mcp_server_names)),  # run with the session's own (agent_cli/mcp/)
    ]
    lines += [f"  {name.ljust(12)}{value}" for name, value in rows if value]
    if plugin.enabled and len(lines) == 1 + bool(plugin.description) + bool(plugin.author):
        lines.append("  (contributes nothing)")
    return "\n".join(lines)


def _agent_label(plugin: str, path: Path) -> str:
    """The agent's name as `task` knows it (its front matter's ``name``, else the file name)."""
    definition, problem = parse_agent_file(path, f"plugin {plugin}", plugin)
    return definition.name if definition is not None else f"{plugin}:{path.stem} (not loaded: {problem})"
