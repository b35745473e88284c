"""HTTP connections: each one is an ACP Transport fed by POSTs and drained by SSE streams.

One connection = one `serve(transport)` task (the ACP agent). POSTed messages come out of
`receive()`; everything the agent `send()`s goes to the connection's EventBuffer, routed by the
sessionId it concerns (responses: the sessionId of the request they answer). The registry owns the
connections, reaps idle ones and closes them all on shutdown.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from acp._transport import Transport
from acp.http.protocol import message_id_key, session_id_from_params, session_id_from_result

from iac_code.principals import LOCAL, Principal
from iac_code.transports.http.events import EventBuffer, EventLimits
from iac_code.transports.jsonrpc import is_request

logger = logging.getLogger(__name__)

ServeFn = Callable[[Transport], Awaitable[None]]

MAX_INBOUND_MESSAGES = 1000  # POSTed messages the agent has not read yet
# Requests accepted and not yet answered (queued or running): each may run a turn or touch the
# disk, and the agent reads its queue at once, so the queue bound alone never held back a flood.
MAX_REQUESTS_IN_FLIGHT = 256
CLOSE_WAIT_SECONDS = 3.0  # how long a close waits for the agent to cancel its turns
_SESSION_ATTACHING_METHODS = frozenset({"session/load", "session/resume"})


class AgentGone(Exception):
    """The agent task ended before answering."""


class HttpConnection:
    """The Transport one `serve()` task speaks through, plus its HTTP-side state."""

    def __init__(
        self, connection_id: str, limits: EventLimits | None = None, max_in_flight: int = MAX_REQUESTS_IN_FLIGHT
    ) -> None:
        self.id = connection_id
        self.principal: Principal = LOCAL  # who opened it: the only one it serves (the registry sets it)
        self.events = EventBuffer(limits)
        self.sessions: set[str] = set()
        self.last_activity = time.monotonic()
        self.task: asyncio.Task[None] | None = None
        self.closed = False
        self.close_reason = ""
        self._inbound: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._request_sessions: dict[str, str] = {}
        self._max_in_flight = max_in_flight
        self._in_flight: set[str] = set()  # ids of the client's requests the agent has not answered
        self._initialize: tuple[str, asyncio.Future[dict[str, Any]]] | None = None

    # -- Transport (the agent's side) ---------------------------------------------------------

    async def receive(self) -> dict[str, Any] | None:
        return await self._inbound.get()

    async def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            return
        if "method" not in message:
            if self._answers_initialize(message):
                return
            self._in_flight.discard(message_id_key(message.get("id")) or "")
        self.events.publish(message, self._session_of_outgoing(message))
        if self.events.full and not await self.events.wait_for_room():
            detail = self.events.describe_pending()
            logger.warning("closing connection %s: the client is not reading its event stream: %s", self.id, detail)
            self.shutdown("the client was not reading its event stream")

    async def close(self) -> None:
        self.shutdown("the agent closed it")

    # -- HTTP side ----------------------------------------------------------------------------

    def touch(self) -> None:
        self.last_activity = time.monotonic()

    def accept(self, message: dict[str, Any]) -> bool:
        """Hand a POSTed message to the agent; False when too many are waiting to be read, or when
        it is a request and too many requests are already waiting for their answer."""
        if self._inbound.qsize() >= MAX_INBOUND_MESSAGES:
            return False
        if is_request(message):
            if len(self._in_flight) >= self._max_in_flight:
                return False
            self._in_flight.add(message_id_key(message["id"]) or "")
        self._remember_request(message)
        self._inbound.put_nowait(message)
        self.touch()
        return True

    async def initialize(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send `initialize` and wait for its response (raises TimeoutError, AgentGone)."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._initialize = (message_id_key(message["id"]) or "", future)
        self._inbound.put_nowait(message)
        try:
            async with asyncio.timeout(timeout):
                return await future
        finally:
            self._initialize = None

    def agent_ended(self) -> None:
        if self._initialize is not None and not self._initialize[1].done():
            self._initialize[1].set_exception(AgentGone())

    def shutdown(self, reason: str) -> None:
        """End the agent's receive loop (it then cancels its turns) and every SSE stream."""
        if self.closed:
            return
        self.closed = True
        self.close_reason = reason
        self._inbound.put_nowait(None)
        self.events.close()

    def _answers_initialize(self, message: dict[str, Any]) -> bool:
        pending = self._initialize
        if pending is None or (message_id_key(message.get("id")) or "") != pending[0] or pending[1].done():
            return False
        pending[1].set_result(message)
        return True

    def _remember_request(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        session_id = session_id_from_params(message.get("params"))
        if method is None or session_id is None:
            return
        if "id" in message:
            self._request_sessions[message_id_key(message["id"]) or ""] = session_id
        if method in _SESSION_ATTACHING_METHODS:
            self.sessions.add(session_id)
        elif method == "session/close":
            self.sessions.discard(session_id)

    def _session_of_outgoing(self, message: dict[str, Any]) -> str | None:
        if "method" in message:
            return session_id_from_params(message.get("params"))
        created = session_id_from_result(message.get("result"))
        if created is not None:
            self.sessions.add(created)
        return self._request_sessions.pop(message_id_key(message.get("id")) or "", None)


class ConnectionRegistry:
    """All live connections of one server, their agent tasks, idle reaping and shutdown."""

    def __init__(
        self,
        serve: ServeFn,
        *,
        idle_timeout: float,
        limits: EventLimits | None = None,
        max_in_flight: int = MAX_REQUESTS_IN_FLIGHT,
        make_connection: Callable[[str], HttpConnection] | None = None,
    ) -> None:
        self._serve = serve
        self._idle_timeout = idle_timeout
        self._make_connection = make_connection or (
            lambda connection_id: HttpConnection(connection_id, limits, max_in_flight)
        )
        self._connections: dict[str, HttpConnection] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self.accepting = True

    def __len__(self) -> int:
        return len(self._connections)

    def __iter__(self) -> Iterator[HttpConnection]:
        return iter(list(self._connections.values()))

    @property
    def session_count(self) -> int:
        return sum(len(conn.sessions) for conn in self._connections.values())

    def count_of(self, principal: Principal) -> int:
        """The connections `principal` has open here."""
        return sum(1 for conn in self._connections.values() if conn.principal.name == principal.name)

    def get(self, connection_id: str | None) -> HttpConnection | None:
        return self._connections.get(connection_id) if connection_id else None

    def create(self, principal: Principal, connection_id: str | None = None) -> HttpConnection:
        """A new connection of `principal` (a fresh id unless given) with its agent task started."""
        conn = self._make_connection(connection_id or str(uuid.uuid4()))
        conn.principal = principal
        self._connections[conn.id] = conn
        conn.task = asyncio.create_task(self._run_agent(conn), name=f"acp-http-{conn.id}")
        logger.info("connection %s opened by %s", conn.id, principal.name)
        return conn

    async def close(self, conn: HttpConnection, reason: str) -> None:
        """Forget the connection, end its streams and wait (bounded) for its agent to stop."""
        if self._connections.pop(conn.id, None) is None:
            return
        logger.info("connection %s of %s closed: %s", conn.id, conn.principal.name, reason)
        conn.shutdown(reason)
        if conn.task is None or conn.task is asyncio.current_task():
            return
        try:
            async with asyncio.timeout(CLOSE_WAIT_SECONDS):
                await asyncio.shield(conn.task)
        except TimeoutError:
            logger.warning("connection %s: agent did not stop within %ss; cancelling", conn.id, CLOSE_WAIT_SECONDS)
            conn.task.cancel()
        except Exception:  # the agent's own failure was already logged by _run_agent
            pass

    def close_soon(self, conn: HttpConnection, reason: str) -> None:
        task = asyncio.create_task(self.close(conn, reason))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def close_all(self, reason: str) -> None:
        self.accepting = False
        await asyncio.gather(*(self.close(conn, reason) for conn in list(self._connections.values())))

    def begin_shutdown(self) -> None:
        """Synchronously end every stream and agent loop (called from the signal handler)."""
        self.accepting = False
        for conn in list(self._connections.values()):
            conn.shutdown("the server is shutting down")

    async def reap_idle_forever(self) -> None:
        interval = min(max(self._idle_timeout / 4, 0.05), 30.0)
        while True:
            await asyncio.sleep(interval)
            self.reap_idle()

    def reap_idle(self) -> None:
        deadline = time.monotonic() - self._idle_timeout
        for conn in list(self._connections.values()):
            if conn.events.reader_count == 0 and conn.last_activity < deadline:
                self.close_soon(conn, f"idle for more than {self._idle_timeout:g}s with no stream open")

    async def _run_agent(self, conn: HttpConnection) -> None:
        try:
            await self._serve(conn)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("connection %s: the agent failed", conn.id)
        finally:
            conn.agent_ended()
            if conn.id in self._connections:
                self.close_soon(conn, conn.close_reason or "the agent ended")
