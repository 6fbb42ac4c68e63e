"""The network proxy attacked by a command: what it is handed over through the bridge, and how
much of it. A real proxy (in this process, as in the agent's) and real sockets."""

from __future__ import annotations

import asyncio
import socket

from agent_cli.network.gate import NetworkGate
from agent_cli.network.lists import NetworkLists
from agent_cli.network.proxy import MAX_CLIENTS, ProxyServer
from tests.waiting import until


def handed_over(proxy: ProxyServer) -> socket.socket:
    """A connection handed to the proxy as a bridge hands one (the token, the client's socket, a
    stderr); our end of it, which sends nothing."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        ours = socket.create_connection(listener.getsockname())
        theirs, _ = listener.accept()
    with socket.socket(socket.AF_UNIX) as bridge:
        bridge.connect(proxy.path)
        socket.send_fds(bridge, [proxy.token.encode() + b"\n"], [theirs.fileno(), 2])
    theirs.close()
    ours.setblocking(False)
    return ours


def closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except ConnectionError:
        return True


async def test_connections_that_send_nothing_cannot_use_up_the_agents_descriptors(tmp_path):
    """Each connection a command opens through its bridge is served in the agent's own process,
    with two of its descriptors, for as long as it waits: a command holding a thousand of them left
    the agent (all its sessions, in the app-server) none. Past a bound they are closed at once."""
    gate = NetworkGate(NetworkLists())
    gate.loop = asyncio.get_running_loop()
    proxy = ProxyServer(gate, tmp_path / "network", local_only=False)
    proxy.start()
    clients: list[socket.socket] = []
    try:
        clients = [handed_over(proxy) for _ in range(MAX_CLIENTS + 20)]
        await until(lambda: sum(map(closed, clients)) >= 20, 30, "the connections past the bound to be closed")
        assert not any(closed(sock) for sock in clients[:MAX_CLIENTS])
    finally:
        for sock in clients:
            sock.close()
        proxy.close()
