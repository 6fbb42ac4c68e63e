"""Plugins' command files as commands: ``/plugin:command``, parsed like the user's own files.

Read on every command, like the user's command files, so an edit shows without a restart.
``${CLAUDE_PLUGIN_ROOT}`` (and ``${AGENT_PLUGIN_ROOT}``) in a body become the plugin's folder.
"""

from __future__ import annotations

from dataclasses import replace

from agent_cli.commands.custom import CustomCommand, parse_command_file
from agent_cli.plugins.claude_hooks import expand_root
from agent_cli.plugins.loader import PluginSet


def load_plugin_commands(plugins: PluginSet) -> tuple[list[CustomCommand], list[str]]:
    """(commands of the active plugins, warnings naming the files that cannot be used)."""
    commands: list[CustomCommand] = []
    warnings: list[str] = []
    for plugin in plugins.active:
        for name, path in plugin.command_files:
            command, problem = parse_command_file(path, name, f"plugin {plugin.name}")
            if command is None:
                warnings.append(f"plugin command {path}: {problem}; skipped")
            else:
                commands.append(replace(command, body=expand_root(command.body, plugin.root)))
    return commands, warnings
