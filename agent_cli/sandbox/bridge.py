"""The bridge: it listens on ``127.0.0.1:PORT`` in the command's own network namespace and hands
each connection over to the agent's network proxy (stdlib only, loaded by path by the launcher).

It hands over the connection itself: for each one it connects to the proxy's Unix socket and
sends the session's token with two descriptors (``SCM_RIGHTS``), the accepted socket and the
command's stderr, then closes its copies. The proxy then talks to the client directly (no bytes
pass through here, no thread per connection) and writes why a request was refused on the
command's stderr. The token is read by the launcher from ``TOKEN_ENV`` and never passed on to the
command.

It runs as one thread of the launcher, which outlives the command anyway: a command that never
uses the network pays for a bound socket and a thread, and nothing has to be ended after it. The
launcher listens before it starts the command, so no first request can miss it, and starts the
thread once the command runs (never a fork with other threads about). Under Landlock the thread
is confined with the launcher; under bubblewrap it is the launcher's own, outside the sandbox's
other walls but inside the command's network namespace, and it reads nothing a command sends.

Only C modules are imported (``_socket``, ``_thread``).
"""

from __future__ import annotations

import _socket
import _thread
import os
import sys

TOKEN_ENV = "AGENT_NETWORK_TOKEN"
LISTEN_ADDRESS = "127.0.0.1"
BACKLOG = 128
NOT_RUNNING = b"agent sandbox: the network proxy is not running; the request was not sent\n"


def listen(port: int) -> _socket.socket:
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    listener.bind((LISTEN_ADDRESS, port))
    listener.listen(BACKLOG)
    return listener


def serve(listener: _socket.socket, proxy_socket: str, token: str, notices: int) -> None:
    """Hand connections over in a thread of this process; ``notices``: the command's stderr."""
    hello = (token + "\n").encode("ascii")
    _thread.start_new_thread(_serve, (listener, proxy_socket, hello, notices))


def _serve(listener: _socket.socket, proxy_socket: str, hello: bytes, notices: int) -> None:
    while True:
        try:
            fd, _ = listener._accept()  # pyright: ignore[reportAttributeAccessIssue]  # the C socket's own
        except OSError:
            return
        hand_over(fd, proxy_socket, hello, notices)


def hand_over(fd: int, proxy_socket: str, hello: bytes, notices: int) -> None:
    """The accepted connection ``fd`` and the command's stderr to the proxy, with the token."""
    descriptors = b"".join(n.to_bytes(4, sys.byteorder, signed=True) for n in (fd, notices))
    proxy = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        proxy.connect(proxy_socket)
        proxy.sendmsg([hello], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, descriptors)])
    except OSError:
        try:
            os.write(notices, NOT_RUNNING)
        except OSError:
            pass  # the command closed its stderr
    finally:
        proxy.close()
        os.close(fd)
