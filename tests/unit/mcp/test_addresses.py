"""Which addresses a shared server's client-sent http/sse MCP server may reach, and the connection that holds
to it: real sockets on loopback, no network beyond."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator

import httpx2
import pytest
from tests.loopback import anything_connected, silent_listener

from iac_code.addresses import refusal
from iac_code.mcp.addresses import Reach, Unreachable
from iac_code.mcp.checked_http import checked_client


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("169.254.169.254", "cloud metadata"),
        ("fd00:ec2::254", "cloud metadata"),
        ("100.100.100.200", "cloud metadata"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("100.64.0.1", "shared (CGNAT)"),
        ("100.127.255.254", "shared (CGNAT)"),
        ("fc00::1", "unique local (private)"),
        ("fdff::1", "unique local (private)"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("255.255.255.255", "reserved"),
    ],
)
def test_special_addresses_are_refused_by_default(address, why):
    assert refusal(ipaddress.ip_address(address)) == why
    assert Reach().refusal(ipaddress.ip_address(address)) == why


@pytest.mark.parametrize("address", ["93.184.215.14", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111"])
def test_public_addresses_may_be_reached(address):
    assert Reach().refusal(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    ("address", "why"),
    [("::ffff:127.0.0.1", "loopback"), ("64:ff9b::a9fe:a9fe", "cloud metadata"), ("2002:0a00:0001::1", "private")],
)
def test_an_ipv6_address_carrying_an_ipv4_one_is_judged_by_it(address, why):
    assert Reach().refusal(ipaddress.ip_address(address)) == why


def test_the_operators_networks_are_reached_and_only_they():
    reach = Reach.from_setting(["10.20.0.0/16", "127.0.0.1"])
    assert reach.refusal(ipaddress.ip_address("10.20.3.4")) is None
    assert reach.refusal(ipaddress.ip_address("::ffff:10.20.3.4")) is None
    assert reach.refusal(ipaddress.ip_address("127.0.0.1")) is None
    assert reach.refusal(ipaddress.ip_address("127.0.0.2")) == "loopback"
    assert reach.refusal(ipaddress.ip_address("10.21.0.1")) == "private"
    with pytest.raises(ValueError):
        Reach.from_setting(["intranet.example"])


@pytest.mark.parametrize(
    "host", ["localhost", "127.0.0.1", "[::1]", "2130706433", "0x7f.1", "metadata.google.internal"]
)
async def test_a_name_is_judged_by_every_address_it_resolves_to(host):
    with pytest.raises(Unreachable):
        await Reach().checked_addresses(host, 80)


async def test_an_allowed_name_gives_its_checked_addresses():
    assert await Reach.from_setting(["127.0.0.0/8"]).checked_addresses("127.0.0.1", 80) == ["127.0.0.1"]


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A loopback HTTP listener the test serves by hand, so that it can tell whether anything connected."""
    with silent_listener() as server:
        yield server


async def test_the_connection_itself_is_refused_where_the_reach_ends(listener):
    port = listener.getsockname()[1]
    for url in (f"http://127.0.0.1:{port}/mcp", f"http://localhost:{port}/mcp"):
        async with checked_client(Reach(), {}, httpx2.Timeout(5)) as http:
            with pytest.raises(httpx2.ConnectError, match="refused: .*loopback"):
                await http.post(url, json={})
    assert not anything_connected(listener)


async def test_the_connection_goes_to_an_allowed_address(listener):
    port = listener.getsockname()[1]
    async with checked_client(Reach.from_setting(["127.0.0.1/32"]), {}, httpx2.Timeout(5)) as http:
        with pytest.raises(httpx2.ReadTimeout):  # connected; the listener never answers
            await http.post(f"http://127.0.0.1:{port}/mcp", json={}, timeout=httpx2.Timeout(5, read=0.2))
    assert anything_connected(listener)
