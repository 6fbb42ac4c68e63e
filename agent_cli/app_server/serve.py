"""The server: the session door, the threads, the method table and one listener, until stdin
closes (stdio) or a signal stops it; then every turn is interrupted and every session closed."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import BinaryIO

from websockets.asyncio.server import Server

from agent_cli.app_server.auth import TokenCheck
from agent_cli.app_server.dispatch import Dispatcher
from agent_cli.app_server.host import ThreadHost
from agent_cli.app_server.methods_setup import setup_methods
from agent_cli.app_server.methods_threads import thread_methods
from agent_cli.app_server.methods_turns import turn_methods
from agent_cli.app_server.methods_usage import usage_methods
from agent_cli.app_server.options import Listen, OptionsError
from agent_cli.app_server.page import Page
from agent_cli.app_server.sessions import SessionDoor
from agent_cli.app_server.transports import bound_port, serve_stdio, start_websocket
from agent_cli.arguments import session_flags
from agent_cli.paths import agent_home

log = logging.getLogger("agent_cli.app_server")
CLOSE_SECONDS = 2.0


def build(args: argparse.Namespace) -> Dispatcher:
    cwd = Path(args.cd).expanduser().resolve() if args.cd else Path.cwd()
    door = SessionDoor(args.overrides, session_flags(args), args.trust, agent_home(), cwd)
    host = ThreadHost(door, args.idle_unload)
    return Dispatcher(
        host, {**setup_methods(door), **thread_methods(host), **turn_methods(host), **usage_methods(host)}
    )


async def serve(args: argparse.Namespace, listen: Listen, tokens: TokenCheck | None, out: BinaryIO) -> None:
    dispatcher = build(args)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        if listen.kind == "stdio":
            served = asyncio.ensure_future(serve_stdio(dispatcher, out))
            stopped = asyncio.ensure_future(stop.wait())
            await asyncio.wait([served, stopped], return_when=asyncio.FIRST_COMPLETED)
            served.cancel()
            stopped.cancel()
            await asyncio.gather(served, stopped, return_exceptions=True)
        else:
            await serve_socket(args, dispatcher, listen, tokens, stop)
    finally:
        await dispatcher.host.aclose()


async def serve_socket(
    args: argparse.Namespace, dispatcher: Dispatcher, listen: Listen, tokens: TokenCheck | None, stop: asyncio.Event
) -> None:
    page_url = ""
    if listen.kind == "unix":
        assert listen.path is not None
        prepare_socket_path(listen.path, private_folder=listen.default_path)
        server: Server = await start_websocket(dispatcher, path=listen.path)
        where = f"unix://{listen.path}"
    else:
        page = Page.from_options(args, listen.host) if tokens is not None else None  # the page needs a token
        server = await start_websocket(dispatcher, host=listen.host, port=listen.port, tokens=tokens, page=page)
        host = f"[{listen.host}]" if ":" in listen.host else listen.host
        where = f"ws://{host}:{bound_port(server)}"
        page_url = f"http://{host}:{bound_port(server)}/" if page is not None else ""
    print(f"agent app-server: listening on {where}", file=sys.stderr, flush=True)
    if page_url:
        print(f"agent app-server: the web page: {page_url} (with the token)", file=sys.stderr, flush=True)
    idle = asyncio.ensure_future(exit_when_idle(dispatcher.host, args.idle_exit, stop)) if args.idle_exit else None
    try:
        await stop.wait()
        await dispatcher.host.aclose()  # turns and their commands end first, whatever the clients do
    finally:
        server.close()  # clients are told the server is going away; one that does not answer is not waited for
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), timeout=CLOSE_SECONDS)
        if listen.path is not None:
            with contextlib.suppress(OSError):
                listen.path.unlink()
        if idle is not None:
            idle.cancel()


async def exit_when_idle(host: ThreadHost, seconds: float, stop: asyncio.Event) -> None:
    """``--idle-exit``: stop once no thread has been loaded and no client connected for ``seconds``."""
    idle_from = time.monotonic()
    while not stop.is_set():
        if host.in_use:
            idle_from = time.monotonic()
        elif time.monotonic() - idle_from >= seconds:
            log.info("no session for %.0f s: the host ends", seconds)
            stop.set()
            return
        await asyncio.sleep(min(1.0, max(0.05, seconds / 4)))


def prepare_socket_path(path: Path, private_folder: bool) -> None:
    """The default socket's folder is created 0700 and must be the user's own and private (a
    folder named by the user is theirs to choose); a stale socket is removed, a live one kept
    (another server answers there)."""
    folder = path.parent
    if private_folder:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        info = os.lstat(folder)
        if info.st_uid != os.getuid() or os.path.islink(folder) or info.st_mode & 0o077:
            raise OptionsError(
                f"{folder} is not a private folder of yours (0700): remove it or use --listen unix://PATH"
            )
    if os.path.lexists(path):
        probe = socket.socket(socket.AF_UNIX)
        try:
            probe.connect(str(path))
        except OSError:
            path.unlink()  # nobody listens: left by a server that died
        else:
            raise OptionsError(f"another server listens on {path}")
        finally:
            probe.close()
