"""Command-line entry point: parse arguments and hand off. Nothing heavy is imported here."""

from __future__ import annotations

import argparse
import os
import sys

from agent_cli import __version__

USAGE_ERROR = 2
BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader left


def add_session_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-m", "--model", help="model name, e.g. gpt-5 or claude-sonnet-4-5")
    parser.add_argument("--provider", help="model provider id (openai, openai-chat, anthropic, ollama, or one from config)")
    parser.add_argument("-C", "--cd", metavar="DIR", help="run as if started in DIR")
    parser.add_argument(
        "-c", "--config", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
        help="override a config key; VALUE is parsed as TOML (repeatable)",
    )
    parser.add_argument("--mode", choices=("agent", "ask", "plan"), help="agent: all tools; ask: read-only; plan: read-only + plan")
    parser.add_argument(
        "-s", "--sandbox", choices=("read-only", "workspace-write", "danger-full-access"),
        help="where commands may write (default workspace-write: the cwd, writable_roots and temp dirs)",
    )
    parser.add_argument(
        "-a", "--approval", choices=("untrusted", "on-request", "on-failure", "never"),
        help="when to ask before running (default: on-request in the TUI, never in exec)",
    )


def build_exec_parser(resume: bool = False) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent exec",
        description="Run the agent without a screen.",
        epilog="Continue a saved session: agent exec resume [--last | ID] [OPTIONS] [PROMPT]",
    )
    add_session_options(parser)
    parser.add_argument("--json", action="store_true", help="print events as JSON lines on stdout")
    parser.add_argument("-o", "--output-last-message", metavar="FILE", help="write the last agent message to FILE")
    if resume:  # agent exec resume [--last | ID] [PROMPT]
        from agent_cli.headless.sessions_cmd import add_resume_arguments

        parser.prog = "agent exec resume"
        add_resume_arguments(parser)
        parser.set_defaults(resume=True)
    else:
        parser.add_argument("prompt", nargs="?", help="the prompt; '-' or nothing reads it from piped stdin")
    return parser


def build_tui_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent",
        description="An interactive terminal coding agent. Subcommands: exec (headless), sessions, resume, mcp.",
    )
    parser.add_argument("--version", action="version", version=f"agent-cli {__version__}")
    add_session_options(parser)
    parser.add_argument("prompt", nargs="?", help="a first prompt to send")
    return parser


def session_flags(args: argparse.Namespace) -> dict[str, object]:
    return {
        "model": args.model, "model_provider": args.provider, "mode": args.mode,
        "sandbox_mode": getattr(args, "sandbox", None), "approval_policy": getattr(args, "approval", None),
    }


def load_config_or_exit(args: argparse.Namespace):
    """Load config for a front end; print a one-line error and exit 2 when it is bad."""
    from pathlib import Path

    from agent_cli.config import ConfigError, load_config

    try:
        cwd = Path(args.cd).expanduser() if args.cd else None
        return load_config(cwd, args.overrides, session_flags(args))
    except ConfigError as exc:
        fail(f"configuration error: {exc}")


def check_api_key_or_exit(config) -> None:
    from agent_cli.models.registry import resolve_api_key

    provider = config.provider
    if not provider.requires_key or not provider.env_key or resolve_api_key(provider):
        return
    fail(
        f"{provider.env_key} is not set (needed by provider '{provider.id}'). Export it, or use a "
        f"local OpenAI-compatible server: --provider ollama, or OPENAI_BASE_URL=http://HOST:PORT/v1 "
        f"with --provider openai-chat."
    )


def fail(message: str) -> None:
    print(f"agent: error: {message}", file=sys.stderr)
    raise SystemExit(USAGE_ERROR)


def main(argv: list[str] | None = None) -> int:
    try:
        return dispatch(list(sys.argv[1:] if argv is None else argv))
    except BrokenPipeError:
        # Whoever read our output went away (`agent exec --json | head -1`): stop quietly, as
        # Unix tools do, and keep Python from complaining again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return BROKEN_PIPE


def dispatch(argv: list[str]) -> int:
    if argv and argv[0] == "exec":
        from agent_cli.headless.exec import run_exec

        resume = argv[1:2] == ["resume"]
        args = build_exec_parser(resume).parse_args(argv[2:] if resume else argv[1:])
        return run_exec(args)
    if argv and argv[0] in ("sessions", "resume"):
        from agent_cli.headless import sessions_cmd

        return sessions_cmd.run_sessions(argv[1:]) if argv[0] == "sessions" else sessions_cmd.run_resume(argv[1:])
    if argv and argv[0] == "mcp":
        from agent_cli.headless.mcp_cmd import run_mcp

        return run_mcp(argv[1:])
    args = build_tui_parser().parse_args(argv)
    config = load_config_or_exit(args)
    check_api_key_or_exit(config)
    from agent_cli.tui.app import run_app

    return run_app(config, args.prompt)
