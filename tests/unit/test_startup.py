"""startup.listening_socket: what the HTTP server listens on."""

from __future__ import annotations

import asyncio
import socket

import pytest

from iac_code.config import ConfigError
from iac_code.startup import listening_socket


async def test_connections_accepted_by_asyncio_send_small_writes_at_once():
    # asyncio turns Nagle's algorithm off only on sockets whose protocol says TCP: without it, the second
    # of two small WebSocket frames waited for the client's delayed ACK.
    listener = listening_socket("127.0.0.1", 0)
    nodelay: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        nodelay.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(accepted, sock=listener)
    async with server:
        _, writer = await asyncio.open_connection(*listener.getsockname()[:2])
        assert await asyncio.wait_for(nodelay, 5) != 0
        writer.close()


def test_a_port_in_use_names_the_flag_to_change():
    taken = listening_socket("127.0.0.1", 0)
    with taken, pytest.raises(ConfigError, match="already in use.*--port"):
        listening_socket("127.0.0.1", taken.getsockname()[1])


def test_ipv6_loopback_listens_on_ipv6_only():
    if not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    try:
        listener = listening_socket("::1", 0)
    except ConfigError:
        pytest.skip("::1 is not configured here")
    with listener:
        assert listener.family == socket.AF_INET6
        assert listener.getsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY) == 1
