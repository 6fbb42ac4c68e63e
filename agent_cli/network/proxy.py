"""The network proxy the agent runs outside the sandbox: an HTTP (with CONNECT) and SOCKS5 proxy on
a Unix socket, in a thread of its own so that copying a download never waits on the screen.

It answers only the bridges of this session's sandboxed commands: the socket is its owner's
alone (mode 0600 in a 0700 folder), the peer must be of the same user and, when the session
runs its commands itself, a process the agent started; it must then send the session's token
before the proxy reads or says anything else. Each request names a host; the gate (gate.py)
decides, asking the user when the lists do not; only then is the name resolved, its addresses
checked and the connection made (connect.py). A refusal goes back as a 403 (HTTP) or a SOCKS
error, and as a line on the command's stderr through its bridge.
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
    BridgeWriter,
    Request,
    http_reply,
    read_http,
    read_socks,
    socks_reply,
)
from agent_cli.sandbox.network import ProxyRoute

HELLO_TIMEOUT_S = 10.0
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
        self._server: asyncio.AbstractServer | None = None
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
        self._server = await asyncio.start_unix_server(self._client, self.path, limit=CHUNK)
        os.chmod(self.path, 0o600)

    def close(self) -> None:
        """Stop listening, end every connection, remove the socket."""
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and thread.is_alive() and not loop.is_closed():

            def stop() -> None:
                if self._server is not None:
                    self._server.close()
                loop.stop()

            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stop)
            thread.join(START_TIMEOUT_S)
        shutil.rmtree(self._directory, ignore_errors=True)

    # --- one connection ---------------------------------------------------------------------

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._clients.add(task)
        try:
            if self._peer_allowed(writer) and await self._hello(reader):
                await self._serve(reader, BridgeWriter(writer))
        except (asyncio.IncompleteReadError, ConnectionError, TimeoutError, OSError, asyncio.LimitOverrunError):
            pass
        finally:
            if task is not None:
                self._clients.discard(task)
            writer.close()

    def _peer_allowed(self, writer: asyncio.StreamWriter) -> bool:
        sock = writer.get_extra_info("socket")
        if sock is None:
            return False
        pid, uid, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
        if uid != os.getuid():
            return False
        return not self.local_only or started_by(pid, os.getpid())

    async def _hello(self, reader: asyncio.StreamReader) -> bool:
        expected = (self.token + "\n").encode("ascii")
        hello = await asyncio.wait_for(reader.readexactly(len(expected)), HELLO_TIMEOUT_S)
        return hmac.compare_digest(hello, expected)

    async def _serve(self, reader: asyncio.StreamReader, bridge: BridgeWriter) -> None:
        first = await reader.readexactly(1)
        socks = first == b"\x05"
        try:
            request = await (read_socks(reader, bridge) if socks else read_http(first, reader))
        except BadRequest as exc:
            if not socks:
                bridge.data(http_reply("400 Bad Request", f"agent sandbox: {exc}"))
            await bridge.drain()
            return
        try:
            host = normalize_host(request.host)
        except DomainError as exc:
            await self._refuse(bridge, request, Decision(request.host, request.port, False, str(exc)))
            return
        verdict = await self._decide(host, request.port)
        if not verdict.allowed:
            await self._refuse(bridge, request, Decision(host, request.port, False, verdict.by))
            return
        try:
            # a name named exactly, or one the user's own hosts table maps, may be a private address
            exact = verdict.exact or host in self.gate.lists.hosts
            upstream_reader, upstream_writer = await open_connection(host, request.port, exact, self.gate.lists.hosts)
        except Unreachable as exc:
            if exc.refused:
                self.gate.report(host, request.port, Verdict(False, str(exc)))
                await self._refuse(bridge, request, Decision(host, request.port, False, str(exc)))
            else:
                await self._fail(bridge, request, str(exc))
            return
        try:
            bridge.open_tunnel()
            if request.protocol == "connect":
                bridge.data(CONNECTED)
            elif request.protocol == "socks":
                bridge.data(socks_reply(SOCKS_OK))
            else:
                upstream_writer.write(request.head)
            await relay(reader, bridge.writer, upstream_reader, upstream_writer)
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

    async def _refuse(self, bridge: BridgeWriter, request: Request, decision: Decision) -> None:
        """The line on the command's stderr says why and how to allow it; the 403's body (which a
        client may print too) only what."""
        bridge.notice(f"agent sandbox: {decision.line()}\n")
        if request.protocol == "socks":
            bridge.data(socks_reply(SOCKS_NOT_ALLOWED))
        else:
            what = f"agent sandbox: {decision.host}:{decision.port} was refused by the sandbox's network proxy"
            bridge.data(http_reply("403 Forbidden", what))
        await bridge.drain()

    async def _fail(self, bridge: BridgeWriter, request: Request, why: str) -> None:
        line = f"agent sandbox: network: {why}"
        bridge.notice(line + "\n")
        if request.protocol == "socks":
            bridge.data(socks_reply(SOCKS_UNREACHABLE if "connect" in why else SOCKS_FAILURE))
        else:
            bridge.data(http_reply("502 Bad Gateway", line))
        await bridge.drain()


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
