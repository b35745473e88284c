"""Where an HTTP server's connections live, behind the one small interface its routes use.

- `LocalBackend` (local.py): this process alone; connections, their agents and event buffers in memory.
  The default, and what runs whenever no database is configured.
- `ClusterBackend` (cluster.py): instances sharing PostgreSQL serve as one (IAC_CODE_DATABASE_URL).

Routes parse and check a request, call the backend, and answer a `Refusal` with its HTTP status.
Every call names the request's principal: a connection serves only the principal that opened it, and to
anyone else it is unknown (a connection id alone never grants another principal's streams).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from acp.http.protocol import CONNECTION_ID_HEADER
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from iac_code.principals import Principal
from iac_code.transports.http.connections import ConnectionRegistry, HttpConnection
from iac_code.transports.http.events import Event, StreamKey


class Refusal(Exception):
    """A request the backend cannot serve, answered with `status` and `{"error": message}`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def unknown_connection(connection_id: str | None) -> Refusal:
    if not connection_id:
        return Refusal(400, f"missing {CONNECTION_ID_HEADER} header: POST initialize first")
    return Refusal(400, f"unknown {CONNECTION_ID_HEADER}: the connection was closed or never existed")


def opened_by(conn: HttpConnection | None, connection_id: str | None, principal: Principal) -> HttpConnection:
    """The connection, if `principal` opened it; else the refusal an unknown id gets."""
    if conn is None or conn.principal.name != principal.name:
        raise unknown_connection(connection_id)
    return conn


class Reader(Protocol):
    """One live SSE response's source of events."""

    async def next_batch(self, keepalive_seconds: float) -> list[Event] | None:
        """The next undelivered events; [] after `keepalive_seconds` idle; None when the stream must end."""

    def delivered(self, batch: list[Event]) -> None:
        """The batch reached the client's socket."""

    def give_back(self, batch: list[Event]) -> None:
        """Sending the batch failed: it goes to the next reader."""

    def detach(self) -> None:
        """The response ended."""


@dataclass
class OpenStream:
    reader: Reader
    replay: list[Event]  # sent first: what a Last-Event-ID reconnect missed
    on_end: Callable[[], None]


class Backend(Protocol):
    registry: ConnectionRegistry  # the agents running in this process
    response_headers: list[tuple[bytes, bytes]]  # added to every response

    @property
    def accepting(self) -> bool: ...

    async def start(self) -> None:
        """Background work (idle reaping, heartbeats…), from the app's start-up."""

    async def stop(self, reason: str) -> None:
        """Close this process's connections and stop the background work."""

    def begin_shutdown(self) -> None:
        """Synchronously end every stream and agent loop (called from the signal handler)."""

    async def initialize(
        self, message: dict[str, Any], timeout: float, principal: Principal, connection_id: str | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Open a connection for `principal` (with this id when given: a WebSocket names it in its upgrade's
        answer, before `initialize` arrives) and answer `initialize`: (connection id, response)."""

    async def post(self, connection_id: str | None, message: dict[str, Any], principal: Principal) -> None:
        """Hand a message to the connection's agent (its result arrives on the stream)."""

    async def open_stream(
        self, connection_id: str | None, stream: StreamKey, last_event_id: int | None, principal: Principal
    ) -> OpenStream:
        """A reader of the connection's (stream None) or a session's stream, after `last_event_id` if given."""

    async def close(self, connection_id: str | None, principal: Principal) -> None:
        """DELETE: close the connection."""

    async def health(self) -> tuple[int, dict[str, Any]]:
        """The status code and the fields of GET /health beyond status, version and uptime."""


# The messages that start an answer: an HTTP response, a WebSocket's 101, an upgrade refused by HTTP.
_ANSWER_STARTS = frozenset({"http.response.start", "websocket.accept", "websocket.http.response.start"})


class ResponseHeaders:
    """Adds the backend's headers to every HTTP response (refusals by AuthMiddleware included) and upgrade answer."""

    def __init__(self, app: ASGIApp, *, headers: list[tuple[bytes, bytes]]) -> None:
        self._app = app
        self._headers = headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self._app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] in _ANSWER_STARTS:
                message = {**message, "headers": [*(message.get("headers") or []), *self._headers]}
            await send(message)

        await self._app(scope, receive, send_with_headers)
