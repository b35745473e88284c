"""The HTTP client of a shared server's client-sent http/sse MCP server: every connection it opens resolves the
host itself, judges every address (mcp/addresses.py) and connects to a judged address, so a name that
resolved to a public address when the session opened cannot be rebound to 127.0.0.1 for the connection
(DNS rebinding). TLS still names the URL's host (SNI, certificate). No proxy from the environment: a proxy
would resolve the name itself, past the check.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import httpcore2
import httpx2

from iac_code.mcp.addresses import Reach, Unreachable


class CheckedBackend(httpcore2.AsyncNetworkBackend):
    """httpcore's network backend, connecting only to addresses `reach` allows."""

    def __init__(self, reach: Reach) -> None:
        self._reach = reach
        self._inner = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        try:
            addresses = await self._reach.checked_addresses(host, port)
        except Unreachable as exc:
            raise httpcore2.ConnectError(f"refused: {exc}") from None
        failure: Exception = httpcore2.ConnectError(f"{host} has no address")
        for address in addresses:  # the judged addresses, in the resolver's order, as a connection would try them
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                failure = exc
        raise failure

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.AsyncNetworkStream:
        raise httpcore2.ConnectError("a client's MCP server is reached over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def checked_client(reach: Reach, headers: dict[str, str], timeout: httpx2.Timeout) -> httpx2.AsyncClient:
    """An httpx client whose connections go only where `reach` allows (no proxy from the environment)."""
    transport = httpx2.AsyncHTTPTransport(trust_env=False)
    pool = transport._pool  # httpx has no parameter for httpcore's network backend
    assert isinstance(pool, httpcore2.AsyncConnectionPool)
    pool._network_backend = CheckedBackend(reach)
    return httpx2.AsyncClient(headers=headers, timeout=timeout, transport=transport, trust_env=False)
