"""The options every front end shares and the parser of `agent` itself: argparse only, nothing of
the program, so that the launcher (__main__.py) answers `agent --help` and `--version` at once."""

from __future__ import annotations

import argparse

from agent_cli import __version__

CONFIG_HELP = "override a config key; VALUE is parsed as TOML (repeatable)"
# Every subcommand of `agent` (cli.py dispatches them), as `agent --help` lists them.
SUBCOMMANDS = {
    "exec": "run headless: one prompt, text or JSONL events out (exec resume, exec undo)",
    "batch": "run many tasks, each `agent exec` in a worktree of its own (a JSONL file or Terminal-Bench tasks)",
    "resume": "open a saved session in the app (no id: pick from a list)",
    "attach": "open the app on a session running in the background host (no id: pick one)",
    "sessions": "live and saved sessions: list, stop, rename, export, repair, rm",
    "worktree": "the agent's git worktrees of this repository: list, rm, prune",
    "login": "store a provider's API key (readable by you only)",
    "logout": "forget the stored API key(s)",
    "doctor": "check the set-up: config, keys, provider and model, sandbox, MCP servers",
    "mcp": "MCP servers: list, get, add, remove, login, logout",
    "memory": "what the agent remembers: list, add, forget, search, export, import",
    "plugin": "the Claude Code plugins found here: list",
    "acp": "serve an editor over the Agent Client Protocol (stdio)",
    "app-server": "serve Codex's app-server protocol to Codex clients (stdio, a Unix socket or a WebSocket)",
}


def add_place_options(
    parser: argparse.ArgumentParser, cd_help: str = "run as if started in DIR", config_help: str | None = CONFIG_HELP
) -> None:
    """``-C DIR`` (``args.cd``) and, unless ``config_help`` is None, ``-c KEY=VALUE`` (``args.overrides``):
    where the agent runs and the config it reads, the same in every subcommand."""
    parser.add_argument("-C", "--cd", metavar="DIR", help=cd_help)
    if config_help is not None:
        parser.add_argument(
            "-c", "--config", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help=config_help
        )


def add_session_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-m", "--model", help="model name, e.g. gpt-5 or claude-sonnet-4-5")
    parser.add_argument(
        "--provider", help="model provider id (openai, openai-chat, anthropic, ollama, or one from config)"
    )
    add_place_options(parser)
    parser.add_argument(
        "--mode", choices=("agent", "ask", "plan"), help="agent: all tools; ask: read-only; plan: read-only + plan"
    )
    parser.add_argument(
        "-s",
        "--sandbox",
        choices=("read-only", "workspace-write", "danger-full-access"),
        help="where commands may write (default workspace-write: the cwd, writable_roots and temp dirs)",
    )
    parser.add_argument(
        "-a",
        "--approval",
        choices=("untrusted", "on-request", "on-failure", "never"),
        help="when to ask before running (default: on-request in the TUI, never in exec)",
    )
    parser.add_argument(
        "--plugin-dir",
        dest="plugin_dirs",
        action="append",
        default=[],
        metavar="DIR",
        help="load the Claude Code plugin in DIR (or every plugin in it) for this run (repeatable)",
    )


def add_worktree_options(parser: argparse.ArgumentParser, short: bool = True) -> None:
    """``-w/--worktree [NAME]`` and ``--base REF`` (agent_cli/worktrees/)."""
    names = ("-w", "--worktree") if short else ("--worktree",)
    parser.add_argument(
        *names,
        nargs="?",
        const="",
        default=None,
        metavar="NAME",
        help="start in the git worktree NAME (created on branch agent/NAME from HEAD, or resumed; "
        "a generated name without NAME)",
    )
    parser.add_argument("--base", metavar="REF", help="with --worktree: create it from REF instead of HEAD")


def session_flags(args: argparse.Namespace) -> dict[str, object]:
    return {
        "model": args.model,
        "model_provider": args.provider,
        "mode": args.mode,
        "sandbox_mode": getattr(args, "sandbox", None),
        "approval_policy": getattr(args, "approval", None),
    }


def build_tui_parser() -> argparse.ArgumentParser:
    width = max(len(name) for name in SUBCOMMANDS)
    parser = argparse.ArgumentParser(
        prog="agent",
        description="An interactive terminal coding agent.",
        epilog="subcommands (agent SUBCOMMAND --help for each):\n"
        + "\n".join(f"  {name:<{width}}  {text}" for name, text in SUBCOMMANDS.items())
        + "\n\n`agent -p` speaks Claude Code's stream-json for the Claude Agent SDK.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"agent-cli {__version__}")
    add_session_options(parser)
    add_worktree_options(parser)
    parser.add_argument(
        "--bg",
        action="store_true",
        help="start the session in the background host (in a worktree of its own) and print its id; "
        "agent attach ID shows it",
    )
    parser.add_argument("--no-worktree", action="store_true", help="with --bg: run it in this folder")
    parser.add_argument(
        "--remote",
        metavar="URL",
        help="open the app on a new session in the host at URL (ws://HOST:PORT, unix:// or unix://PATH): "
        "an `agent app-server`",
    )
    parser.add_argument(
        "--remote-auth-token-env", metavar="VAR", help="with --remote: the environment variable holding its token"
    )
    parser.add_argument(
        "--inline",
        action="store_true",
        help="draw the app below the shell prompt instead of on the alternate screen; "
        "its last screen stays in the terminal's scrollback on exit",
    )
    parser.add_argument("prompt", nargs="?", help="a first prompt to send")
    return parser
