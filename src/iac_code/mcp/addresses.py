"""Which addresses a client's http/sse MCP server may reach from a shared server (the server's network is not the
client's: an MCP URL must not make it a proxy into loopback services, cloud metadata or private networks).

Refused unless the operator lists them (`client_mcp_networks`): every address that is not public unicast
(iac_code/addresses.py, as for web_fetch). A name is resolved and every address it has is judged: one
refused address refuses the name (the connection could pick any).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass

from iac_code.addresses import IpAddress, IpNetwork, embedded_ipv4, refusal

RESOLVE_TIMEOUT = 10.0  # seconds a host name's resolution may take
METADATA_NAMES = frozenset({"metadata.google.internal", "metadata.goog"})  # whatever they resolve to


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
        embedded = embedded_ipv4(address)
        if embedded is not None and any(embedded in network for network in self.allowed if network.version == 4):
            return None
        return refusal(address)

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
