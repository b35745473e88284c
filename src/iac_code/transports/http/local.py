"""The HTTP server's connections when it serves alone: in this process's memory (see backend.py)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from iac_code.principals import Principal
from iac_code.transports.http.backend import OpenStream, Refusal, opened_by
from iac_code.transports.http.connections import (
    MAX_REQUESTS_IN_FLIGHT,
    AgentGone,
    ConnectionRegistry,
    HttpConnection,
    ServeFn,
)
from iac_code.transports.http.events import EventLimits, StreamKey
from iac_code.transports.http.limits import connections_refusal

logger = logging.getLogger(__name__)


class LocalBackend:
    response_headers: list[tuple[bytes, bytes]] = []

    def __init__(
        self,
        serve: ServeFn,
        *,
        idle_timeout: float,
        max_connections: int,
        limits: EventLimits,
        max_in_flight: int = MAX_REQUESTS_IN_FLIGHT,
        make_connection: Callable[[str], HttpConnection] | None = None,
        principal_connections: int | None = None,  # None: no per-principal limit (no authentication)
    ) -> None:
        self.registry = ConnectionRegistry(
            serve,
            idle_timeout=idle_timeout,
            limits=limits,
            max_in_flight=max_in_flight,
            make_connection=make_connection,
        )
        self.max_connections = max_connections
        self.principal_connections = principal_connections
        self._reaper: asyncio.Task[None] | None = None

    @property
    def accepting(self) -> bool:
        return self.registry.accepting

    async def start(self) -> None:
        self._reaper = asyncio.create_task(self.registry.reap_idle_forever())

    async def stop(self, reason: str) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        await self.registry.close_all(reason)

    def begin_shutdown(self) -> None:
        self.registry.begin_shutdown()

    async def initialize(
        self, message: dict[str, Any], timeout: float, principal: Principal, connection_id: str | None = None
    ) -> tuple[str, dict[str, Any]]:
        conn = self.new_connection(principal, connection_id)
        return conn.id, await answer_initialize(self.registry, conn, message, timeout)

    def new_connection(self, principal: Principal, connection_id: str | None = None) -> HttpConnection:
        """A connection of `principal` with its agent started (503 when shutting down or at --max-connections,
        429 when `principal` holds its limit of connections)."""
        self.check_room()
        limit = self.principal_connections
        if limit is not None and self.registry.count_of(principal) >= limit:
            logger.warning("refused a connection of %s: it holds %d, its limit", principal.name, limit)
            raise Refusal(429, connections_refusal(principal, limit))
        return self.registry.create(principal, connection_id)

    def check_room(self) -> None:
        if not self.registry.accepting:
            raise Refusal(503, "the server is shutting down")
        if len(self.registry) >= self.max_connections:
            logger.warning("refused a connection: %d open, the limit (--max-connections)", len(self.registry))
            raise Refusal(503, f"too many connections ({self.max_connections}); close one or retry later")

    async def post(self, connection_id: str | None, message: dict[str, Any], principal: Principal) -> None:
        conn = opened_by(self.registry.get(connection_id), connection_id, principal)
        if not conn.accept(message):
            raise Refusal(429, "too many requests in flight on this connection; wait for answers, then retry")

    async def open_stream(
        self, connection_id: str | None, stream: StreamKey, last_event_id: int | None, principal: Principal
    ) -> OpenStream:
        if not self.registry.accepting:
            raise Refusal(503, "the server is shutting down")
        conn = opened_by(self.registry.get(connection_id), connection_id, principal)
        replay = conn.events.replay_after(stream, last_event_id) if last_event_id is not None else []
        reader = conn.events.open_reader(stream)
        conn.touch()
        return OpenStream(reader, replay, conn.touch)

    async def close(self, connection_id: str | None, principal: Principal) -> None:
        conn = opened_by(self.registry.get(connection_id), connection_id, principal)
        await self.registry.close(conn, "DELETE by the client")

    async def health(self) -> tuple[int, dict[str, Any]]:
        return 200, {"connections": len(self.registry), "sessions": self.registry.session_count}


async def answer_initialize(
    registry: ConnectionRegistry, conn: HttpConnection, message: dict[str, Any], timeout: float
) -> dict[str, Any]:
    """The agent's answer to `initialize` (504 if it takes longer than `timeout`, 502 if it ends)."""
    try:
        return await conn.initialize(message, timeout)
    except TimeoutError:
        registry.close_soon(conn, "initialize timed out")
        raise Refusal(504, f"the agent did not answer initialize within {timeout:g}s") from None
    except AgentGone:
        registry.close_soon(conn, "the agent ended during initialize")
        raise Refusal(502, "the agent ended before answering initialize") from None
