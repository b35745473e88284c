"""A connection whose agent runs on this instance (its host) while its stream may be held anywhere.

What the agent sends is written to the shared event log (cluster/events.py), which gives it its SSE id;
the stream's owner delivers it from there, or straight from memory when it is this instance. What the
client POSTs, on any instance, is queued in the database (cluster/inbound.py) and taken here in order.
While the database is away, sending waits (the turn pauses) for up to `stall_seconds`, then the
connection ends here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import psycopg

from iac_code.cluster.connections import UnknownConnection
from iac_code.cluster.events import CONNECTION_STREAM, EventLog
from iac_code.cluster.inbound import InboundQueue
from iac_code.transports.http.connections import MAX_INBOUND_MESSAGES, HttpConnection
from iac_code.transports.http.events import Event, sse_frame

logger = logging.getLogger(__name__)

RETRY_SECONDS = (0.1, 0.2, 0.5, 1.0)
INTERRUPTED = "the instance running this request stopped before answering; load the session again to go on"

Deliver = Callable[[str, Event], None]  # (connection id, event) to a stream held by this instance


class HostedConnection(HttpConnection):
    def __init__(
        self, connection_id: str, log: EventLog, inbound: InboundQueue, deliver: Deliver, stall_seconds: float
    ) -> None:
        super().__init__(connection_id)
        self._log = log
        self._inbound_queue = inbound
        self._deliver = deliver
        self._stall_seconds = stall_seconds
        self._draining = False
        self._drain_again = False
        self._drain_task: asyncio.Task[None] | None = None

    # -- Transport (the agent's side) ---------------------------------------------------------

    async def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            return
        if "method" not in message and self._answers_initialize(message):
            return
        self._session_of_outgoing(message)  # keeps `sessions` current; every event goes on the connection stream
        event_id = await self._append(message)
        if event_id is not None:
            self._deliver(self.id, Event(event_id, None, sse_frame(event_id, message)))

    async def answer_interrupted(self, request_ids: list[Any]) -> None:
        """Answer the requests a dead host took and never answered (this instance adopted the connection)."""
        for request_id in request_ids:
            data = {"reason": INTERRUPTED}
            error = {"code": -32603, "message": "Internal error", "data": data}
            await self.send({"jsonrpc": "2.0", "id": request_id, "error": error})

    # -- the inbound queue --------------------------------------------------------------------

    def drain_soon(self) -> None:
        """Take what was POSTed for this connection (now, or again once the running take ends)."""
        if self._draining:
            self._drain_again = True
            return
        self._draining = True
        self._drain_task = asyncio.create_task(self._drain(), name=f"drain {self.id}")

    async def _drain(self) -> None:
        try:
            while not self.closed:
                self._drain_again = False
                room = MAX_INBOUND_MESSAGES - self._inbound.qsize()
                if room <= 0:
                    logger.warning("connection %s: %d messages wait for the agent", self.id, self._inbound.qsize())
                    return
                messages = await self._inbound_queue.take(self.id, limit=room)
                for message in messages:
                    self.accept(message)
                if len(messages) < room and not self._drain_again:
                    return
        except psycopg.OperationalError as exc:
            logger.info("connection %s: inbound messages not taken (%s); taken on reconnection", self.id, exc)
        finally:
            self._draining = False

    # -- helpers ------------------------------------------------------------------------------

    async def _append(self, message: dict[str, Any]) -> int | None:
        """Log the message; None if the connection is gone or the database stayed away too long."""
        started = asyncio.get_running_loop().time()
        failures = 0
        while not self.closed:
            try:
                return await self._log.append(self.id, CONNECTION_STREAM, message, as_host=True)
            except UnknownConnection:
                self.shutdown("closed, or adopted by another instance")
                return None
            except psycopg.OperationalError as exc:
                waited = asyncio.get_running_loop().time() - started
                if waited > self._stall_seconds:
                    logger.warning("connection %s: the database stayed unreachable for %.0fs; closing", self.id, waited)
                    self.shutdown("the database stayed unreachable")
                    return None
                if failures == 0:
                    logger.info("connection %s: waiting for the database to log an event (%s)", self.id, exc)
                await asyncio.sleep(RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)])
                failures += 1
        return None
