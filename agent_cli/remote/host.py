"""The per-user host: one `agent app-server` on the user's private Unix socket, which holds the
sessions of `agent --bg`, `/detach` and `agent attach`. Started on demand, as the warm exec server
is, and kept out of every sandbox's reach the same way:

- its socket is the app-server's default one, in the folder of the warm server
  (``$XDG_RUNTIME_DIR/agent-cli-UID``, else ``$AGENT_HOME/run``): 0700, never under a temp
  folder, and masked with an empty read-only tmpfs in every sandbox (sandbox/policy.py), so no
  sandboxed command can connect to it, remove it or listen in its place;
- both ends check the other before anything is sent: the host refuses a peer that is not its
  user or is confined (app_server/peer.py, on the handshake), and this client connects the socket
  itself and checks the host (warm/peer.py: the same user, confined exactly as this process is)
  before the first byte of the handshake, so a process that took the socket's place gets nothing.

The host ends by itself once no session has been loaded for ``AGENT_HOST_IDLE_EXIT`` seconds
(default 300), with every process its sessions started; a session nobody watches is unloaded
after ``AGENT_HOST_IDLE_UNLOAD`` seconds (default 1800).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from agent_cli import socket_peer as peer
from agent_cli.app_server.client import AppServerClient, refusal
from agent_cli.paths import agent_home, private_dir, warm_server_dir

SOCKET_NAME = "app-server.sock"  # the app-server's default `unix://` socket (app_server/options.py)
IDLE_EXIT_ENV = "AGENT_HOST_IDLE_EXIT"
IDLE_UNLOAD_ENV = "AGENT_HOST_IDLE_UNLOAD"
DEFAULT_IDLE_EXIT = 300
DEFAULT_IDLE_UNLOAD = 1800
START_SECONDS = 60.0  # for a host to listen once started (a loaded machine imports slowly)
CLIENT_NAME = "agent-cli"


class HostError(Exception):
    """The per-user host cannot be reached, or will not be trusted; the message says why."""


def host_socket() -> Path:
    return warm_server_dir() / SOCKET_NAME


def host_log() -> Path:
    return agent_home() / "logs" / "app-server.log"


async def connect_host(start: bool = True) -> AppServerClient | None:
    """A client of the per-user host, initialized; the host is started when none listens and
    ``start`` (otherwise None). HostError when it cannot be started or trusted."""
    sock = await asyncio.to_thread(reach_host, start)
    if sock is None:
        return None
    try:
        client = await AppServerClient.connect("unix://" + str(host_socket()), sock=sock)
        await client.initialize(CLIENT_NAME)
    except Exception as exc:  # noqa: BLE001 - the handshake's failures come in the WebSocket library's kinds
        raise HostError(refusal(exc) or f"the host did not answer as an app-server: {exc}") from None
    return client


async def connect_url(url: str, token: str | None = None) -> AppServerClient:
    """A client of the host at ``url`` (``ws://HOST:PORT``, ``unix://PATH``, or ``unix://``: the
    per-user host), initialized. A Unix socket's server is checked before anything is sent, as
    the per-user host's is. HostError says why it cannot be reached."""
    if url == "unix://":
        client = await connect_host(start=False)
        if client is None:
            raise HostError(f"no host listens on {host_socket()} (agent --bg PROMPT starts one)")
        return client
    try:
        if url.startswith("unix://"):
            path = Path(url[len("unix://") :]).expanduser()
            sock = await asyncio.to_thread(try_connect, path)
            if sock is None:
                raise HostError(f"nothing listens on {path}")
            if not peer.trusted(sock):
                sock.close()
                raise HostError(
                    f"the process listening on {path} is not this user's, or runs in a sandbox: nothing sent"
                )
            client = await AppServerClient.connect(url, sock=sock)
        elif url.startswith("ws://"):
            client = await AppServerClient.connect(url, token=token)
        else:
            raise HostError(f"--remote {url}: expected ws://HOST:PORT, unix:// or unix://PATH")
        await client.initialize(CLIENT_NAME)
    except HostError:
        raise
    except Exception as exc:  # noqa: BLE001 - the handshake's failures come in the WebSocket library's kinds
        raise HostError(refusal(exc) or f"cannot reach {url}: {exc}") from None
    return client


def reach_host(start: bool) -> socket.socket | None:
    """The host's socket, connected and checked (started first when ``start``)."""
    path = host_socket()
    if len(os.fsencode(path)) > 107:
        raise HostError(f"the host's socket path is too long for a Unix socket: {path}")
    sock = try_connect(path)
    if sock is None and start:
        with start_lock(path):
            sock = try_connect(path) or start_host(path)  # another client may have started it meanwhile
    if sock is None:
        return None
    if not peer.trusted(sock):
        sock.close()
        raise HostError(
            f"the process listening on {path} is not this user's host as this process runs it "
            "(another user's, or one in a sandbox): nothing was sent to it"
        )
    return sock


def try_connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(5)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        return None
    sock.settimeout(None)
    return sock


@contextlib.contextmanager
def start_lock(path: Path) -> Iterator[None]:
    """One client starts the host at a time; the others wait, then find it listening."""
    folder = path.parent
    if folder == agent_home() / "run":  # no runtime folder: ours to make (a runtime folder is the system's)
        with contextlib.suppress(OSError):
            folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not private_dir(folder):
        raise HostError(f"{folder} is not a private folder of yours (0700): the host will not start there")
    try:
        lock = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise HostError(f"cannot prepare the host's folder {folder}: {exc}") from None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
    finally:
        os.close(lock)


def start_host(path: Path) -> socket.socket:
    """Start the host in a session of its own, detached from this terminal, and wait until it
    listens. It runs with this process's environment (the provider keys its sessions use)."""
    unload = os.environ.get(IDLE_UNLOAD_ENV, str(DEFAULT_IDLE_UNLOAD))
    idle = os.environ.get(IDLE_EXIT_ENV, str(DEFAULT_IDLE_EXIT))
    command = [sys.executable, "-P", "-m", "agent_cli", "app-server", "--listen", "unix://"]
    command += ["--idle-unload", unload, "--idle-exit", idle]
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,  # it logs to $AGENT_HOME/logs/app-server.log
            cwd=Path.home() if Path.home().is_dir() else "/",
            start_new_session=True,
        )
    except OSError as exc:
        raise HostError(f"cannot start the host: {exc}") from None
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if (sock := try_connect(path)) is not None:
            return sock
        if process.poll() is not None:
            raise HostError(f"the host ended as it started (exit {process.returncode}); see {host_log()}")
        time.sleep(0.05)
    raise HostError(f"the host did not listen on {path} within {START_SECONDS:.0f} s; see {host_log()}")
