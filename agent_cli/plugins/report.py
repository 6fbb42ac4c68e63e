"""The plugins found and what each contributed, as text for ``agent plugin list`` and ``/plugins``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from agent_cli.display import home_relative

if TYPE_CHECKING:
    from agent_cli.commands.custom import CustomCommand
    from agent_cli.plugins.loader import Plugin, PluginSet

NOT_YET_ACTIVE = "(contributed, not yet active)"
HOW_TO_ADD = (
    "no plugins found (put a Claude Code plugin in .agent/plugins/NAME/ in the repository or "
    "$AGENT_HOME/plugins/NAME/, or pass --plugin-dir DIR)"
)


def format_plugins(found: PluginSet, aliases: Mapping[str, CustomCommand] | None = None) -> str:
    """One block per plugin; ``aliases`` are the plain ``/command`` names in use (short -> command)."""
    plain = {command.name: short for short, command in (aliases or {}).items()}
    blocks = [_block(plugin, plain) for plugin in found.plugins] or [HOW_TO_ADD]
    text = "\n\n".join(blocks)
    if found.warnings:
        text += "\n\nwarnings:\n" + "\n".join(f"  {warning}" for warning in found.warnings)
    return text


def _block(plugin: Plugin, plain: Mapping[str, str]) -> str:
    title = " ".join(part for part in (plugin.name, plugin.version) if part)
    state = "" if plugin.enabled else "  [disabled in config: [plugins] disabled]"
    lines = [f"{title}  ({plugin.source}: {home_relative(plugin.root)}){state}"]
    if plugin.description:
        lines.append(f"  {plugin.description}")
    if plugin.author:
        lines.append(f"  by {plugin.author}")
    commands = [
        f"/{command.name}" + (f" (also /{plain[command.name]})" if command.name in plain else "")
        for command in plugin.commands
    ]
    hooks = [f"{hook.event}" + (f"[{hook.matcher}]" if hook.matcher else "") for hook in plugin.hooks]
    agents = [f"{plugin.name}:{path.stem}" for path in plugin.agent_files]
    rows = [
        ("commands", ", ".join(commands)),
        ("skills", ", ".join(skill.name for skill in plugin.skills)),
        ("hooks", ", ".join(dict.fromkeys(hooks))),
        ("agents", f"{', '.join(agents)} {NOT_YET_ACTIVE}" if agents else ""),
        ("MCP servers", f"{', '.join(plugin.mcp_server_names)} {NOT_YET_ACTIVE}" if plugin.mcp else ""),
    ]
    lines += [f"  {name.ljust(12)}{value}" for name, value in rows if value]
    if plugin.enabled and len(lines) == 1 + bool(plugin.description) + bool(plugin.author):
        lines.append("  (contributes nothing)")
    return "\n".join(lines)
