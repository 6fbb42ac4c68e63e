"""`agent plugin list`: the Claude Code plugins the agent would load here, and what each contributes."""

from __future__ import annotations

import argparse

from agent_cli.cli import add_session_options, load_config_or_exit


def build_plugin_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent plugin",
        description="Claude Code plugins: from --plugin-dir, <repo>/.agent/plugins/ and $AGENT_HOME/plugins/.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="list")
    listing = actions.add_parser("list", help="each plugin found and what it contributed (commands, skills, hooks...)")
    add_session_options(listing)  # -C, -c and --plugin-dir matter here; the rest is accepted for symmetry
    return parser


def run_plugin(argv: list[str]) -> int:
    from agent_cli.commands.registry import CommandTable
    from agent_cli.plugins.loader import load_plugins_for
    from agent_cli.plugins.report import format_plugins

    args = build_plugin_parser().parse_args(argv)
    config = load_config_or_exit(args)
    found = load_plugins_for(config)
    table = CommandTable.load(config.cwd, config.agent_home, found.commands)
    print(format_plugins(found, table.aliases))
    return 0
