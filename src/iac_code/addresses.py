"""Which network addresses a request the agent makes on someone's behalf may reach: public unicast ones.

web_fetch (tools/web.py) and a shared server's client-sent http/sse MCP servers (mcp/addresses.py) both go
where a model or a client says; neither may become a way into the machine's loopback services, a cloud
metadata service or a private network. An address is refused when it is unspecified, loopback, link-local,
cloud metadata, private (RFC 1918, IPv6 unique local, CGNAT 100.64/10), multicast, reserved, or otherwise
not global (documentation, benchmarking ranges); an IPv6 address that carries an IPv4 one (mapped, NAT64,
6to4) is judged by that one too.
"""

from __future__ import annotations

import ipaddress

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# AWS (and ECS task credentials), Azure and GCP (169.254.169.254), AWS over IPv6, Alibaba Cloud.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200")
)
_NAMED: tuple[tuple[IpNetwork, str], ...] = tuple(
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


def refusal(address: IpAddress) -> str | None:
    """Why `address` may not be reached (the kind of address it is); None for a public unicast address."""
    if address in METADATA_ADDRESSES:
        return "cloud metadata"
    named = next((why for network, why in _NAMED if address in network), None)
    if named is not None:
        return named
    embedded = embedded_ipv4(address)
    if embedded is not None:  # (a mapped address is never "global" itself: the IPv4 one says)
        return refusal(embedded)
    return None if address.is_global and not address.is_multicast else "non-public"


def embedded_ipv4(address: IpAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for (mapped, NAT64, 6to4), if any."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour
