"""One entry of an allowed or denied domain list, as Claude Code writes them, and what it matches.

``example.com`` is that name only; ``*.example.com`` every name below it (not ``example.com``
itself); ``example.com:443`` / ``*.example.com:8080`` only that port; an IP address
(``10.0.0.5``, ``[::1]:8080``) that address. Names are compared lower-case, without a trailing
dot and in their ASCII (IDNA) form, so ``EVIL.example.com.`` is ``evil.example.com``; addresses
in their plain form, so ``2130706433``, ``127.1`` and ``::ffff:127.0.0.1`` are ``127.0.0.1``.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass

WILDCARD = "*."
INET_ATON = re.compile(r"(0[xX][0-9a-fA-F]*|[0-9]+)(\.(0[xX][0-9a-fA-F]*|[0-9]+)){0,3}")  # numbers getaddrinfo reads


class DomainError(ValueError):
    """An entry that is not a domain pattern; the message says why."""


def normalize_host(host: str) -> str:
    """The form names are compared in; raises DomainError for what is not a host name."""
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    host = host.removesuffix(".")
    if not host:
        raise DomainError("an empty host name")
    if (address := _address(host)) is not None:
        return address
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        raise DomainError(f"{host!r} is not a valid host name") from None
    if any(not (c.isalnum() or c in "-._") for c in ascii_host):
        raise DomainError(f"{host!r} is not a valid host name")
    return ascii_host


def _address(host: str) -> str | None:
    """An IP address in the one form entries are compared in, whatever the spelling the resolver
    also reads as one: ``127.1``, ``2130706433``, ``0x7f.0.0.1``, ``0177.0.0.1`` are 127.0.0.1,
    and an IPv4-mapped IPv6 address (``::ffff:127.0.0.1``, which the kernel connects as IPv4) its
    IPv4 address. Otherwise a denied ``127.0.0.1`` would not see them."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        if not INET_ATON.fullmatch(host):
            return None
        try:
            return socket.inet_ntoa(socket.inet_aton(host))
        except OSError:
            return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


@dataclass(frozen=True, slots=True)
class DomainEntry:
    """One list entry and where it is written."""

    text: str  # as written
    pattern: str  # normalized: "example.com" or "*.example.com"
    port: int | None
    source: str  # the file (and key) it came from
    repository: bool = False  # written in the repository's own files

    @property
    def exact(self) -> bool:
        """It names one host (no wildcard): such a name may resolve to a private address."""
        return not self.pattern.startswith(WILDCARD)

    def matches(self, host: str, port: int) -> bool:
        """``host`` is normalized (:func:`normalize_host`)."""
        if self.port is not None and self.port != port:
            return False
        if self.exact:
            return host == self.pattern
        return host.endswith(self.pattern[1:])

    def describe(self) -> str:
        return f"{self.text} ({self.source})"


def parse_entry(text: object, source: str, repository: bool = False) -> DomainEntry:
    """A list entry; raises DomainError for one that is not a domain pattern."""
    if not isinstance(text, str):
        raise DomainError(f"{text!r} is not a string")
    raw = text.strip()
    host, port = _split_port(raw)
    wildcard = host.startswith(WILDCARD)
    name = host[len(WILDCARD) :] if wildcard else host
    if "*" in name:
        raise DomainError(f"{text!r}: a wildcard may only start a pattern (*.example.com)")
    if "/" in name or not name:
        raise DomainError(f"{text!r} is not a domain (write example.com, *.example.com or example.com:443)")
    name = normalize_host(name)
    if wildcard and _is_address(name):
        raise DomainError(f"{text!r}: a wildcard needs a domain below it (*.example.com)")
    return DomainEntry(raw, WILDCARD + name if wildcard else name, port, source, repository)


def _split_port(text: str) -> tuple[str, int | None]:
    if text.startswith("["):  # [v6]:port or [v6]
        host, _, rest = text[1:].partition("]")
        return host, _port(rest.removeprefix(":"), text) if rest else None
    if text.count(":") == 1:
        host, _, port = text.partition(":")
        return host, _port(port, text)
    return text, None  # a name, or a bare IPv6 address


def _port(text: str, entry: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise DomainError(f"{entry!r}: {text!r} is not a port")
    return int(text)


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True
