"""Which addresses a client's http/sse MCP server may reach from a shared server (the server's network is not the
client's: an MCP URL must not make it a proxy into loopback services, cloud metadata or private networks).

Refused unless the operator lists them (`client_mcp_networks`): unspecified, loopback, link-local, cloud
metadata, private (RFC 1918, IPv6 unique local, CGNAT 100.64/10), multicast and reserved addresses; an IPv6
address that carries an IPv4 one (mapped, NAT64, 6to4) is judged by that one too. A name is resolved and
every address it has is judged: one refused address refuses the name (the connection could pick any).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

RESOLVE_TIMEOUT = 10.0  # seconds a host name's resolution may take
METADATA_NAMES = frozenset({"metadata.google.internal", "metadata.goog"})  # whatever they resolve to
_METADATA = frozenset(ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200"))
_REFUSED: tuple[tuple[IpNetwork, str], ...] = tuple(
    (ipaddress.ip_network(network), why)
    for network, why in (
        ("0.0.0.0/8", "unspecified"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "shared (CGNAT)"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "reserved"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "reserved"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("fc00::/7", "unique local (private)"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
    )
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class Unreachable(Exception):
    """A host a client's MCP server may not reach; the message says which address and why."""


@dataclass(frozen=True)
class Reach:
    """What the operator allows beyond public addresses: `client_mcp_networks`."""

    allowed: tuple[IpNetwork, ...] = ()

    @classmethod
    def from_setting(cls, networks: Iterable[str]) -> Reach:
        """ValueError naming an entry that is not an address or a network."""
        return cls(tuple(ipaddress.ip_network(entry.strip(), strict=False) for entry in networks))

    def refusal(self, address: IpAddress) -> str | None:
        """Why `address` may not be reached (None: it may)."""
        if any(address in network for network in self.allowed if network.version == address.version):
            return None
        why = default_refusal(address)
        embedded = _embedded_ipv4(address)
        if why is None and embedded is not None:
            return self.refusal(embedded)
        return why

    async def checked_addresses(self, host: str, port: int) -> list[str]:
        """Every address `host` resolves to, once each is known to be allowed; Unreachable otherwise."""
        name = host.strip("[]").rstrip(".").lower()
        if name in METADATA_NAMES:
            raise Unreachable(f"{name} is a cloud metadata service")
        try:
            async with asyncio.timeout(RESOLVE_TIMEOUT):
                found = await asyncio.get_running_loop().getaddrinfo(name, port, type=socket.SOCK_STREAM)
        except (OSError, TimeoutError) as exc:
            raise Unreachable(f"{name} cannot be resolved ({getattr(exc, 'strerror', None) or exc})") from None
        addresses = list(dict.fromkeys(str(entry[4][0]).split("%")[0] for entry in found))
        for text in addresses:
            if (why := self.refusal(ipaddress.ip_address(text))) is not None:
                shown = text if text == name else f"{name} ({text})"
                raise Unreachable(f"{shown} is a {why} address")
        if not addresses:
            raise Unreachable(f"{name} has no address")
        return addresses


def default_refusal(address: IpAddress) -> str | None:
    """Why `address` is refused unless listed; None for a public address."""
    if address in _METADATA:
        return "cloud metadata"
    return next((why for network, why in _REFUSED if address in network), None)


def _embedded_ipv4(address: IpAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for (mapped, NAT64, 6to4), if any."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour
