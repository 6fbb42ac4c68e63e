"""The app on a session in a host: `agent --remote URL [PROMPT]` (a new session there, as
`codex --remote` does) and `agent attach [ID]` (a live session of the per-user host, or of
``--remote URL``; a picker without ID). The connection is made in the event loop the app then
runs in; the app itself is the same as on a session in this process (tui/app.py)."""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Sequence
from pathlib import Path

from textual.app import App

from agent_cli.app_server.client import AppServerClient, ServerError
from agent_cli.config import Config, ConfigError, load_config
from agent_cli.headless.common import fail
from agent_cli.remote.conversation import RemoteConversation
from agent_cli.remote.host import HostError, connect_host, connect_url
from agent_cli.remote.live import LiveSession, live_sessions
from agent_cli.remote.start_options import OptionError, first_mode, thread_params
from agent_cli.tui.app import AgentApp, finish
from agent_cli.tui.hosted import Hosted
from agent_cli.tui.screens.live_picker import LivePickerScreen


def run_hosted(config: Config, remote: Hosted, loop: asyncio.AbstractEventLoop, prompt: str | None = None) -> int:
    """The app on a session in a host, until the user leaves it (running there). ``loop``: the
    one ``remote`` was connected in (its connection belongs to it)."""
    app = AgentApp(config, prompt, remote=remote)
    return finish(app, app.run(loop=loop))


def token_of(args: argparse.Namespace) -> str | None:
    """The token ``--remote-auth-token-env VAR`` names (Codex's flag): read from VAR, never from argv."""
    name = getattr(args, "remote_auth_token_env", None)
    if not name:
        return None
    token = os.environ.get(name, "").strip()
    if not token:
        fail(f"--remote-auth-token-env {name}: the variable {name} is empty or not set")
    return token


def local_config(cwd: Path) -> Config:
    """What the app reads of this machine's config (its keys, input history, `[tui]`); the
    session's own config is the host's. No API key is needed here."""
    try:
        return load_config(cwd if cwd.is_dir() else Path.cwd(), [], {})
    except ConfigError as exc:
        fail(f"configuration error: {exc}")


def run_remote(args: argparse.Namespace) -> int:
    """`agent --remote URL [PROMPT]`: a new session in the host at URL, in this folder (``-C``)."""
    try:
        params, mode = thread_params(args), first_mode(args)
    except OptionError as exc:
        fail(f"--remote: {exc}")
    cwd = Path(args.cd).expanduser().resolve() if args.cd else Path.cwd()
    token = token_of(args)
    loop = asyncio.new_event_loop()
    try:
        client = loop.run_until_complete(connect_url(args.remote, token))
        remote = loop.run_until_complete(RemoteConversation.start(client, cwd, params))
    except (HostError, ServerError, ConnectionError, OSError) as exc:
        loop.close()
        fail(f"--remote {args.remote}: {exc}")
    remote.url = args.remote
    if mode is not None:
        remote.choose_mode(mode)
    return run_hosted(local_config(remote.thread.cwd), remote, loop, args.prompt)


def build_attach_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent attach",
        description="Open the terminal UI on a session running in the per-user host (agent --bg, /detach), "
        "or in the host at --remote URL; without ID, pick one of those running, waiting for approval or idle.",
    )
    parser.add_argument("session", nargs="?", help="its id (as `agent sessions` shows it), UUID or name")
    parser.add_argument("--remote", metavar="URL", help="the host: ws://HOST:PORT, unix:// or unix://PATH")
    parser.add_argument("--remote-auth-token-env", metavar="VAR", help="the environment variable holding its token")
    return parser


def run_attach(argv: list[str]) -> int:
    args = build_attach_parser().parse_args(argv)
    token = token_of(args)
    loop = asyncio.new_event_loop()
    try:
        client = loop.run_until_complete(attach_client(args.remote, token))
    except (HostError, ServerError, ConnectionError, OSError) as exc:
        loop.close()
        fail(f"attach: {exc}")
    try:
        ref = args.session or pick(client, loop)
        remote = loop.run_until_complete(RemoteConversation.resume(client, ref)) if ref is not None else None
    except (HostError, ServerError, ConnectionError, OSError) as exc:
        loop.run_until_complete(client.close())
        loop.close()
        fail(f"attach: {exc}")
    if remote is None:  # left the picker
        loop.run_until_complete(client.close())
        loop.close()
        return 0
    remote.url = args.remote or ""
    return run_hosted(local_config(remote.thread.cwd), remote, loop)


async def attach_client(url: str | None, token: str | None) -> AppServerClient:
    if url is not None:
        return await connect_url(url, token)
    client = await connect_host(start=False)
    if client is None:
        raise HostError(
            "no host runs, so no session is live: agent --bg PROMPT starts one (agent sessions lists the saved ones)"
        )
    return client


class LivePickerApp(App[str | None]):
    """`agent attach` without ID: the picker on its own, before the app opens on the choice."""

    def __init__(self, sessions: Sequence[LiveSession]) -> None:
        super().__init__()
        self.sessions = sessions

    def on_mount(self) -> None:
        self.push_screen(LivePickerScreen(self.sessions), callback=self.exit)


def pick(client: AppServerClient, loop: asyncio.AbstractEventLoop) -> str | None:
    sessions = loop.run_until_complete(live_sessions(client))
    if not sessions:
        raise HostError(
            "no session is live in the host (agent sessions lists the saved ones; agent resume ID opens one)"
        )
    return LivePickerApp(sessions).run(loop=loop)
