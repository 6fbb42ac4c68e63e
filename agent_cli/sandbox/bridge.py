"""The bridge: it listens on ``127.0.0.1:PORT`` in the command's own network namespace and passes
each connection to the agent's network proxy through its Unix socket (stdlib only, loaded by path
by the launcher).

It runs as threads of the launcher, which outlives the command anyway: a command that never uses
the network pays for a bound socket and a thread, and nothing has to be ended after it (a process
of its own would have to be killed and reaped at every command's end). The launcher listens
before it starts the command, so no first request can miss it, and starts serving once the
command runs (never a fork with other threads about). Under Landlock the threads are confined
with the launcher; under bubblewrap they are the launcher's, outside the sandbox's other walls
but inside the command's network namespace, and they only copy bytes.

Each connection to the proxy opens with the session's token (read by the launcher from
``TOKEN_ENV`` and never passed on to the command). What comes back is framed until the proxy
opens the tunnel: ``D`` frames are data for the client, ``N`` frames a line for the command's
stderr (why a request was refused), ``T`` says that everything after it is the tunnel's, as is.

Only the C modules are imported (``_socket``, ``_thread``).
"""

from __future__ import annotations

import _socket
import _thread
import os

TOKEN_ENV = "AGENT_NETWORK_TOKEN"
LISTEN_ADDRESS = "127.0.0.1"
BACKLOG = 128
CHUNK = 64 * 1024
HEADER = 5  # one type byte, a four-byte big-endian length
DATA, NOTICE, TUNNEL = b"D", b"N", b"T"


def listen(port: int) -> _socket.socket:
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    listener.bind((LISTEN_ADDRESS, port))
    listener.listen(BACKLOG)
    return listener


def serve(listener: _socket.socket, proxy_socket: str, token: str, notices: int) -> None:
    """Accept and pass on connections in a thread of this process; ``notices``: the command's
    stderr, for the lines the proxy sends."""
    hello = (token + "\n").encode("ascii")
    _thread.start_new_thread(_serve, (listener, proxy_socket, hello, notices))


def _serve(listener: _socket.socket, proxy_socket: str, hello: bytes, notices: int) -> None:
    while True:
        try:
            fd, _ = listener._accept()  # pyright: ignore[reportAttributeAccessIssue]  # the C socket's own
        except OSError:
            return
        _thread.start_new_thread(_connection, (fd, proxy_socket, hello, notices))


def _connection(fd: int, proxy_socket: str, hello: bytes, notices: int) -> None:
    client = _socket.socket(fileno=fd)
    client.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)  # a relay must not hold back small writes
    proxy = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        proxy.connect(proxy_socket)
        proxy.sendall(hello)
    except OSError:
        _write(notices, b"agent sandbox: the network proxy is not running; the request was not sent\n")
        _close(client, proxy)
        return
    pair = _Pair(client, proxy)
    _thread.start_new_thread(_copy, (client, proxy, pair))
    try:
        rest = _unframe(proxy, client, notices)
        if rest is not None:
            client.sendall(rest)
            _copy(proxy, client, pair)
            return
    except OSError:
        pair.abort()
    pair.done()


def _unframe(proxy: _socket.socket, client: _socket.socket, notices: int) -> bytes | None:
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
                _write(notices, payload)
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


def _write(fd: int, data: bytes) -> None:
    try:
        os.write(fd, data)
    except OSError:
        pass  # the command closed its stderr
