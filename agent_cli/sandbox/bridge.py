"""The bridge: a small process in the sandbox's own network namespace that listens on
``127.0.0.1:PORT`` and passes each connection to the agent's network proxy through its Unix
socket (stdlib only, loaded by path by the launcher).

Each connection to the proxy opens with the session's token (read by the launcher from
``TOKEN_ENV`` and never passed on to the command). What comes back is framed until the proxy
opens the tunnel: ``D`` frames are data for the client, ``N`` frames a line for the command's
stderr (why a request was refused), ``T`` says that everything after it is the tunnel's, as is.
The launcher forks the bridge before it runs the command and ends it when the command ends; the
bridge also dies with the launcher (a parent-death signal).

Only the C modules are imported (``_socket``, ``_thread``): starting a bridge must not cost a
command that never uses the network anything it would notice.
"""

from __future__ import annotations

import _socket
import _thread
import os

TYPE_CHECKING = False  # no ``typing`` at run time: the launcher stays a bare interpreter
if TYPE_CHECKING:
    from collections.abc import Callable

TOKEN_ENV = "AGENT_NETWORK_TOKEN"
LISTEN_ADDRESS = "127.0.0.1"
BACKLOG = 128
CHUNK = 64 * 1024
HEADER = 5  # one type byte, a four-byte big-endian length
DATA, NOTICE, TUNNEL = b"D", b"N", b"T"


def start(port: int, proxy_socket: str, token: str, prepare: Callable[[], None]) -> int:
    """Listen on ``port`` (before anything runs, so no first request can miss it), then serve in
    a child process, which first calls ``prepare`` (the launcher's: a parent-death signal, no
    capabilities); its pid."""
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    listener.bind((LISTEN_ADDRESS, port))
    listener.listen(BACKLOG)
    pid = os.fork()
    if pid:
        listener.close()
        return pid
    try:
        _keep_only_stderr()
        prepare()
        _serve(listener, proxy_socket, (token + "\n").encode("ascii"))
    finally:
        os._exit(0)


def _keep_only_stderr() -> None:
    """Nothing of the command's but its stderr, for the refusal lines."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    os.close(null)


def _serve(listener: _socket.socket, proxy_socket: str, hello: bytes) -> None:
    while True:
        fd, _ = listener._accept()
        _thread.start_new_thread(_connection, (fd, proxy_socket, hello))


def _connection(fd: int, proxy_socket: str, hello: bytes) -> None:
    client = _socket.socket(fileno=fd)
    proxy = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        proxy.connect(proxy_socket)
        proxy.sendall(hello)
    except OSError:
        os.write(2, b"agent sandbox: the network proxy is not running; the request was not sent\n")
        _close(client, proxy)
        return
    pair = _Pair(client, proxy)
    _thread.start_new_thread(_copy, (client, proxy, pair))
    try:
        rest = _unframe(proxy, client)
        if rest is not None:
            client.sendall(rest)
            _copy(proxy, client, pair)
            return
    except OSError:
        pair.abort()
    pair.done()


def _unframe(proxy: _socket.socket, client: _socket.socket) -> bytes | None:
    """Frames from the proxy until the tunnel opens; what followed the ``T`` frame, or None when
    the proxy closed first (a refusal)."""
    buffer = b""
    while True:
        while len(buffer) >= HEADER:
            kind, length = buffer[:1], int.from_bytes(buffer[1:HEADER], "big")
            if kind == TUNNEL:
                return buffer[HEADER:]
            if len(buffer) < HEADER + length:
                break
            payload, buffer = buffer[HEADER : HEADER + length], buffer[HEADER + length :]
            if kind == NOTICE:
                os.write(2, payload)
            elif kind == DATA:
                client.sendall(payload)
        data = proxy.recv(CHUNK)
        if not data:
            _shutdown(client)
            return None
        buffer += data


def _copy(source: _socket.socket, target: _socket.socket, pair: _Pair) -> None:
    try:
        while data := source.recv(CHUNK):
            target.sendall(data)
        _shutdown(target)  # the other direction may still be talking
    except OSError:
        pair.abort()
    pair.done()


class _Pair:
    """Both sockets of a connection, closed once both directions are done."""

    def __init__(self, *sockets: _socket.socket):
        self.sockets = sockets
        self.lock = _thread.allocate_lock()
        self.left = 2

    def abort(self) -> None:
        """One direction failed: wake the other one up."""
        for sock in self.sockets:
            try:
                sock.shutdown(_socket.SHUT_RDWR)
            except OSError:
                pass

    def done(self) -> None:
        with self.lock:
            self.left -= 1
            last = self.left == 0
        if last:
            _close(*self.sockets)


def _shutdown(sock: _socket.socket) -> None:
    try:
        sock.shutdown(_socket.SHUT_WR)
    except OSError:
        pass


def _close(*sockets: _socket.socket) -> None:
    for sock in sockets:
        try:
            sock.close()
        except OSError:
            pass
