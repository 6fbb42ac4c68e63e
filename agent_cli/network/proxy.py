"""The network proxy the agent runs outside the sandbox: an HTTP (with CONNECT) and SOCKS5 proxy
for the connections the bridges of sandboxed commands hand over (sandbox/bridge.py) through its
Unix socket, in a thread of its own so that copying a download never waits on the screen.

It answers only the bridges of this session's sandboxed commands: the socket is its owner's
alone (mode 0600 in a 0700 folder), the peer must be of the same user and, when the session
runs its commands itself, a process the agent started; its one message must carry the session's
token, or the descriptors that come with it are closed unread. At most ``MAX_CLIENTS`` connections
are served at once, and a request's head must come within ``REQUEST_TIMEOUT_S``: a command cannot
use up the agent's descriptors. Each request names a host; the
gate (gate.py) decides, asking the user when the lists do not; only then is the name resolved,
its addresses checked and the connection made (connect.py). A refusal goes back as a 403 (HTTP)
or a SOCKS error, and as a line on the command's stderr (the bridge hands that over too).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import os
import secrets
import shutil
import socket
import struct
import tempfile
import threading
from pathlib import Path

from agent_cli.network.connect import Unreachable, open_connection
from agent_cli.network.domains import DomainError, normalize_host
from agent_cli.network.gate import Decision, NetworkGate, Verdict
from agent_cli.network.protocols import (
    CONNECTED,
    SOCKS_FAILURE,
    SOCKS_NOT_ALLOWED,
    SOCKS_OK,
    SOCKS_UNREACHABLE,
    BadRequest,
    ClientWriter,
    Request,
    http_reply,
    read_http,
    read_socks,
    socks_reply,
)
from agent_cli.sandbox.network import ProxyRoute

HELLO_TIMEOUT_S = 10.0
REQUEST_TIMEOUT_S = 30.0  # for the request's head, once the connection is handed over
MAX_CLIENTS = 256  # connections at once: each holds descriptors in the agent's own process
BACKLOG = 128
MAX_DESCRIPTORS = 2  # the client's socket and the command's stderr
CHUNK = 64 * 1024
MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes
START_TIMEOUT_S = 5.0
MAX_ANCESTRY = 64
PREFIX = "agent-net-"


class ProxyServer:
    def __init__(self, gate: NetworkGate, run_dir: Path, *, local_only: bool = True):
        self.gate = gate
        self.token = secrets.token_hex(16)
        self.local_only = local_only  # commands run by this process (not in an editor's terminal)
        self._directory = _private_directory(run_dir)
        self.path = str(self._directory / "proxy.sock")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._clients: set[asyncio.Task[None]] = set()

    @property
    def route(self) -> ProxyRoute:
        return ProxyRoute(self.path)

    # --- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        """Listen (in the proxy's thread); raises OSError when it cannot."""
        self._thread = threading.Thread(target=self._run, name="network-proxy", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S) or self._failure is not None:
            self.close()
            raise OSError(f"the network proxy could not start: {self._failure or 'timed out'}")

    def _run(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._listen())
        except BaseException as exc:  # noqa: BLE001 - told to start()
            self._failure = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            for task in list(self._clients):
                task.cancel()
            if self._clients:
                loop.run_until_complete(asyncio.wait(list(self._clients), timeout=START_TIMEOUT_S))
            loop.close()

    async def _listen(self) -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.path)
        os.chmod(self.path, 0o600)
        listener.listen(BACKLOG)
        listener.setblocking(False)
        self._listener = listener
        asyncio.get_running_loop().add_reader(listener.fileno(), self._accept)

    def close(self) -> None:
        """Stop listening, end every connection, remove the socket."""
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and thread.is_alive() and not loop.is_closed():

            def stop() -> None:
                if self._listener is not None:
                    loop.remove_reader(self._listener.fileno())
                    self._listener.close()
                loop.stop()

            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stop)
            thread.join(START_TIMEOUT_S)
        shutil.rmtree(self._directory, ignore_errors=True)

    # --- one connection ---------------------------------------------------------------------

    def _accept(self) -> None:
        assert self._listener is not None
        while True:
            try:
                connection, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return  # closed, or out of descriptors: the bridge tells the command
            if len(self._clients) >= MAX_CLIENTS:
                # A command that opens connections and sends nothing would otherwise hold two of the
                # agent's descriptors each, until the agent (every session of it) has none left.
                connection.close()  # what came with it is closed unread by the kernel
                continue
            task = asyncio.get_running_loop().create_task(self._handed_over(connection))
            self._clients.add(task)
            task.add_done_callback(self._clients.discard)

    async def _handed_over(self, connection: socket.socket) -> None:
        """A bridge's message: the token, the client's socket and the command's stderr."""
        descriptors: list[int] = []
        try:
            if not self._peer_allowed(connection):
                return
            connection.setblocking(False)
            hello, descriptors = await asyncio.wait_for(_receive(connection, len(self.token) + 1), HELLO_TIMEOUT_S)
            if not hmac.compare_digest(hello, (self.token + "\n").encode("ascii")) or len(descriptors) != 2:
                return
            client_fd, notices = descriptors
            client = socket.socket(fileno=client_fd)  # not a socket: OSError, and both are closed below
            descriptors = []  # the client's is the socket object's now, the stderr closed below
        except (OSError, TimeoutError):
            return
        finally:
            connection.close()
            for fd in descriptors:  # whatever came with a message that is not a bridge's
                os.close(fd)
        try:
            await self._client(client, notices)
        finally:
            os.close(notices)

    async def _client(self, client: socket.socket, notices: int) -> None:
        if client.family not in (socket.AF_INET, socket.AF_INET6) or client.type != socket.SOCK_STREAM:
            client.close()
            return
        reader, writer = await asyncio.open_connection(sock=client, limit=CHUNK)
        try:
            await self._serve(reader, ClientWriter(writer, notices))
        except (asyncio.IncompleteReadError, ConnectionError, TimeoutError, OSError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    def _peer_allowed(self, connection: socket.socket) -> bool:
        creds = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        pid, uid, _ = struct.unpack("3i", creds)
        if uid != os.getuid():
            return False
        return not self.local_only or started_by(pid, os.getpid())

    async def _serve(self, reader: asyncio.StreamReader, client: ClientWriter) -> None:
        first = await asyncio.wait_for(reader.readexactly(1), REQUEST_TIMEOUT_S)
        socks = first == b"\x05"
        try:
            reading = read_socks(reader, client) if socks else read_http(first, reader)
            request = await asyncio.wait_for(reading, REQUEST_TIMEOUT_S)
        except BadRequest as exc:
            if not socks:
                client.data(http_reply("400 Bad Request", f"agent sandbox: {exc}"))
            await client.drain()
            return
        try:
            host = normalize_host(request.host)
        except DomainError as exc:
            await self._refuse(client, request, Decision(request.host, request.port, False, str(exc)))
            return
        verdict = await self._decide(host, request.port)
        if not verdict.allowed:
            await self._refuse(client, request, Decision(host, request.port, False, verdict.by))
            return
        try:
            # a name named exactly, or one the user's own hosts table maps, may be a private address
            exact = verdict.exact or host in self.gate.lists.hosts
            upstream_reader, upstream_writer = await open_connection(host, request.port, exact, self.gate.lists.hosts)
        except Unreachable as exc:
            if exc.refused:
                self.gate.report(host, request.port, Verdict(False, str(exc)))
                await self._refuse(client, request, Decision(host, request.port, False, str(exc)))
            else:
                await self._fail(client, request, str(exc))
            return
        try:
            if request.protocol == "connect":
                client.data(CONNECTED)
            elif request.protocol == "socks":
                client.data(socks_reply(SOCKS_OK))
            else:
                upstream_writer.write(request.head)
            await relay(reader, client.writer, upstream_reader, upstream_writer)
        finally:
            upstream_writer.close()

    async def _decide(self, host: str, port: int) -> Verdict:
        verdict = self.gate.verdict(host, port)
        if verdict.undecided:
            verdict = await self._ask(host, port)
        self.gate.report(host, port, verdict)
        return verdict

    async def _ask(self, host: str, port: int) -> Verdict:
        """The question is the session's: asked on its loop while this connection waits."""
        loop = self.gate.loop
        if loop is None or loop.is_closed():
            return Verdict(False, "the session has ended")
        try:
            return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self.gate.ask(host, port), loop))
        except (asyncio.CancelledError, RuntimeError):
            return Verdict(False, "the question was not answered")

    async def _refuse(self, client: ClientWriter, request: Request, decision: Decision) -> None:
        """The line on the command's stderr says why and how to allow it; the 403's body (which a
        client may print too) only what."""
        client.notice(f"agent sandbox: {decision.line()}\n")
        if request.protocol == "socks":
            client.data(socks_reply(SOCKS_NOT_ALLOWED))
        else:
            what = f"agent sandbox: {decision.host}:{decision.port} was refused by the sandbox's network proxy"
            client.data(http_reply("403 Forbidden", what))
        await client.drain()

    async def _fail(self, client: ClientWriter, request: Request, why: str) -> None:
        line = f"agent sandbox: network: {why}"
        client.notice(line + "\n")
        if request.protocol == "socks":
            client.data(socks_reply(SOCKS_UNREACHABLE if "connect" in why else SOCKS_FAILURE))
        else:
            client.data(http_reply("502 Bad Gateway", line))
        await client.drain()


async def relay(
    client_reader: asyncio.StreamReader,
    client_writer: asyncio.StreamWriter,
    upstream_reader: asyncio.StreamReader,
    upstream_writer: asyncio.StreamWriter,
) -> None:
    """Copy both ways until both sides are done (a half-closed side passes its end on)."""
    await asyncio.gather(_pipe(client_reader, upstream_writer), _pipe(upstream_reader, client_writer))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.close()


async def _receive(connection: socket.socket, size: int) -> tuple[bytes, list[int]]:
    """One message and the descriptors sent with it, once it arrives."""
    loop = asyncio.get_running_loop()
    while True:
        try:
            message, descriptors, _, _ = socket.recv_fds(connection, size, MAX_DESCRIPTORS)
            return message, list(descriptors)
        except (BlockingIOError, InterruptedError):
            readable = loop.create_future()
            loop.add_reader(connection.fileno(), readable.set_result, None)
            try:
                await readable
            finally:
                loop.remove_reader(connection.fileno())


def started_by(pid: int, ancestor: int) -> bool:
    """Whether ``pid`` is a descendant of ``ancestor`` (not ``ancestor`` itself)."""
    for _ in range(MAX_ANCESTRY):
        if pid <= 1:
            return False
        pid = _parent_of(pid)
        if pid == ancestor:
            return True
    return False


def _parent_of(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _private_directory(run_dir: Path) -> Path:
    """A 0700 folder of the agent's own for the socket: under its home when the path fits in a
    socket address, else in the temp folder. What an agent killed before it could clean up left
    there goes first."""
    base = run_dir
    if len(str(base)) + len(f"/{PREFIX}XXXXXXXX/proxy.sock") > MAX_SOCKET_PATH:
        base = Path(tempfile.gettempdir())
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    remove_stale(base)
    return Path(tempfile.mkdtemp(prefix=PREFIX, dir=base))


def remove_stale(base: Path) -> None:
    """Folders whose socket no process listens on any more (connecting is refused)."""
    for folder in base.glob(f"{PREFIX}*"):
        path = folder / "proxy.sock"
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(str(path))
            except ConnectionRefusedError:
                shutil.rmtree(folder, ignore_errors=True)
            except OSError:
                continue  # not a socket, or not ours to judge
