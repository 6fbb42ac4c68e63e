"""`agent app-server`: parse the command line, check it, and run the server (serve.py, which
loads the WebSocket library: only this command does).

Over stdio only protocol messages go to stdout: the real stdout is kept for the protocol and file
descriptor 1 points at stderr, so nothing else (a library's print, a child that inherits it)
corrupts the stream. Diagnostics go to stderr and to $AGENT_HOME/logs/app-server.log.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys

from agent_cli.app_server.options import OptionsError, build_parser, parse_listen, token_check, token_file_warning
from agent_cli.paths import agent_home

USAGE_ERROR = 2


def run_app_server(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        listen = parse_listen(args.listen)
        tokens = token_check(args, listen)
    except OptionsError as exc:
        print(f"agent app-server: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    if listen.kind == "ws" and tokens is None:
        print(
            "agent app-server: warning: --ws-auth none: any local user, and any sandboxed command that has the "
            "network, can drive your sessions (and run commands outside the sandbox)",
            file=sys.stderr,
        )
    if (warning := token_file_warning(args)) is not None:
        print(f"agent app-server: warning: {warning}", file=sys.stderr)
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    setup_logging()
    from agent_cli.app_server.serve import serve  # the WebSocket library loads only for this command

    try:
        asyncio.run(serve(args, listen, tokens, protocol_out))
    except OptionsError as exc:
        print(f"agent app-server: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        return 130
    return 0


def setup_logging() -> None:
    folder = agent_home() / "logs"
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        handlers.append(logging.FileHandler(folder / "app-server.log", encoding="utf-8"))
    except OSError:
        pass
    logging.basicConfig(level=logging.INFO, handlers=handlers, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
