"""`agent acp`: run the ACP agent on stdin/stdout until the client closes the pipe.

Only protocol messages go to stdout: the real stdout is kept for the protocol and file
descriptor 1 points at stderr, so nothing else (a library's print, a child process that
inherits it) can corrupt the stream. Diagnostics go to stderr and to $AGENT_HOME/logs/acp.log.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys

from agent_cli.arguments import add_session_options, session_flags
from agent_cli.paths import agent_home


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent acp", description="Run as an Agent Client Protocol agent on stdin/stdout (for editors)."
    )
    add_session_options(parser)
    parser.add_argument(
        "--trust",
        action="store_true",
        help="run the repository's own MCP servers, hooks and plugins without the trust question "
        "(as `agent exec --trust`); otherwise they run only in folders trusted before",
    )
    return parser


def run_acp(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    setup_logging()
    from agent_cli.acp.serve import serve  # the protocol library (pydantic) loads only for `agent acp`

    try:
        asyncio.run(serve(args.overrides, session_flags(args), protocol_out, trust=args.trust))
    except KeyboardInterrupt:
        return 130
    return 0


def setup_logging() -> None:
    folder = agent_home() / "logs"
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        handlers.append(logging.FileHandler(folder / "acp.log", encoding="utf-8"))
    except OSError:
        pass
    logging.basicConfig(level=logging.INFO, handlers=handlers, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
