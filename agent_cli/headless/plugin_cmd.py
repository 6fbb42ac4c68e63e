"""`agent plugin list`: the Claude Code plugins the agent would load here, and what each contributes."""

from __future__ import annotations

import argparse

from agent_cli.arguments import add_place_options
from agent_cli.commands.plugins_info import format_plugins
from agent_cli.commands.registry import CommandTable
from agent_cli.headless.common import load_config_or_exit
from agent_cli.plugins.loader import load_plugins_for


def build_plugin_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent plugin",
        description="Claude Code plugins: from --plugin-dir, <repo>/.agent/plugins/ and $AGENT_HOME/plugins/.",
    )
    actions = parser.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="each plugin found and what it contributed (commands, skills, hooks...)")
    add_place_options(
        listing,
        "as if started in DIR (its repository's .agent/plugins/)",
        "override a config key, e.g. -c 'plugins.disabled=[\"x\"]' (repeatable)",
    )
    listing.add_argument(
        "--plugin-dir",
        dest="plugin_dirs",
        action="append",
        default=[],
        metavar="DIR",
        help="also the plugin in DIR, or every plugin in it (repeatable)",
    )
    listing.set_defaults(model=None, provider=None, mode=None)  # what load_config_or_exit reads
    return parser


def run_plugin(argv: list[str]) -> int:
    args = build_plugin_parser().parse_args(argv)
    config = load_config_or_exit(args)
    found = load_plugins_for(config)
    print(format_plugins(found, CommandTable.load(config.cwd, config.agent_home, found)))
    return 0
