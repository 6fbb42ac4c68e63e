"""Reaching a host the gate allowed: the proxy resolves the name itself and checks every address
before it connects.

A name that resolves to a loopback, private, link-local or otherwise non-public address (the
agent's own servers, the cloud's metadata service, the office network) is refused unless an
entry names that host exactly, or the user's own ``[sandbox.network] hosts`` maps it to its
address: a wildcard or an answer to the question never opens those (a public name whose DNS
answer turns private, as in DNS rebinding, stays out).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket

from agent_cli.network.addresses import is_public

CONNECT_TIMEOUT_S = 10.0


class Unreachable(Exception):
    """The host cannot or may not be reached; the message says why."""

    def __init__(self, message: str, refused: bool = False):
        super().__init__(message)
        self.refused = refused  # refused by policy (a private address), not a network failure


async def resolve(host: str, port: int, hosts: dict[str, str]) -> list[str]:
    if host in hosts:
        return [hosts[host]]
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        pass
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise Unreachable(f"cannot resolve {host}: {exc.strerror}") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def check_addresses(host: str, addresses: list[str], exact: bool) -> None:
    """Refuse non-public addresses unless ``host`` is listed exactly."""
    if exact:
        return
    for address in addresses:
        if not is_public(address):
            raise Unreachable(
                f"{host} resolves to {address}, a loopback, private or link-local address; only a name "
                "listed exactly in the allowed domains may reach such an address",
                refused=True,
            )


async def open_connection(
    host: str, port: int, exact: bool, hosts: dict[str, str]
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    addresses = await resolve(host, port, hosts)
    check_addresses(host, addresses, exact)
    failure = ""
    for address in addresses:
        try:  # (asyncio sets TCP_NODELAY itself)
            return await asyncio.wait_for(asyncio.open_connection(address, port), CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            failure = getattr(exc, "strerror", None) or type(exc).__name__
    raise Unreachable(f"cannot connect to {host}:{port}: {failure or 'no address'}")
