"""web_fetch judges an IPv6 address that embeds an IPv4 address by that IPv4 address (issue 33,
item 9): every such form of a loopback or private address is refused before any connection, through
the real resolver, and the same forms of a public address are not."""

from __future__ import annotations

import pytest

from agent_cli.tools.base import ToolError
from agent_cli.tools.web_fetch import resolve_public

INTERNAL = [
    "::127.0.0.1",  # IPv4-compatible
    "::10.0.0.1",
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:0:127.0.0.1",  # SIIT (IPv4-translated)
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:c0a8:101::",  # 6to4 of 192.168.1.1
    "64:ff9b::7f00:1",  # NAT64 well-known prefix
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254, the cloud metadata address
    "64:ff9b:1::a00:1",  # NAT64 local-use prefix
    "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo, client 10.0.0.1
]


@pytest.mark.parametrize("address", INTERNAL)
async def test_ipv6_forms_of_internal_ipv4_addresses_are_refused(address):
    with pytest.raises(ToolError, match="refused"):
        await resolve_public(address, 80, allow_private=False)


@pytest.mark.parametrize("address", ["::ffff:8.8.8.8", "2002:808:808::1", "64:ff9b::808:808"])
async def test_the_same_forms_of_a_public_address_are_fetched(address):
    assert await resolve_public(address, 80, allow_private=False) == address


async def test_allowing_private_addresses_allows_them_all():
    assert await resolve_public("::127.0.0.1", 80, allow_private=True) == "::127.0.0.1"
