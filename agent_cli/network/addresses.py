"""Whether an address that web_fetch or the network proxy would connect to is public.

An IPv6 address can carry an IPv4 address inside it (IPv4-compatible ``::127.0.0.1``, IPv4-mapped
``::ffff:127.0.0.1``, SIIT ``::ffff:0:127.0.0.1``, 6to4 ``2002:7f00:1::``, NAT64 ``64:ff9b::7f00:1``,
Teredo ``2001:0::/32``); whatever the kernel or a translator on the way makes of it, such an
address is judged by the IPv4 addresses it embeds, never by the IPv6 ranges alone.
"""

from __future__ import annotations

import ipaddress
from ipaddress import IPv4Address, IPv6Address

_COMPATIBLE = ipaddress.ip_network("::/96")
_MAPPED = ipaddress.ip_network("::ffff:0:0/96")
_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))


def embedded_ipv4(ip: IPv6Address) -> tuple[IPv4Address, ...]:
    """The IPv4 addresses an IPv6 address carries (none for an ordinary one)."""
    last32 = IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in _COMPATIBLE or ip in _MAPPED or ip in _TRANSLATED or any(ip in net for net in _NAT64):
        return (last32,)
    if ip.sixtofour is not None:
        return (ip.sixtofour,)
    if ip.teredo is not None:
        return ip.teredo  # (server, client)
    return ()


def is_public(address: str) -> bool:
    """A public unicast address; an IPv6 one that embeds IPv4 addresses only when they all are."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, IPv6Address) and (inner := embedded_ipv4(ip)):
        return all(v4.is_global and not v4.is_multicast for v4 in inner)
    return ip.is_global and not ip.is_multicast
