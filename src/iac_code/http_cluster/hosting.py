"""A connection whose agent runs on this instance (its host) while its streams may be held anywhere.

What the agent sends is written to the shared event log (cluster/events.py) with the session it concerns,
which gives it its SSE id and its stream (that session's stream while one is open, else the connection
stream); the stream's reader delivers it from there, or straight from memory when it is this instance. One writer
task per connection appends whatever the agent sent meanwhile in one statement, so a burst (a replayed
history, a fast stream) costs a few round trips, not one per event; past MAX_UNWRITTEN unwritten messages
the agent waits. While the database is away the writer retries and the agent soon waits with it; after
`stall_seconds` the connection ends here.

What the client POSTs elsewhere is queued in the database (cluster/inbound.py) and taken here in order (a take
the database refused is tried again until it succeeds or the connection ends); what it POSTs here goes straight
to the agent, after anything queued before it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import psycopg

from iac_code.cluster.connections import UnknownConnection
from iac_code.cluster.events import CONNECTION_STREAM, Appended, EventLog
from iac_code.cluster.inbound import InboundQueue
from iac_code.transports.http.connections import MAX_INBOUND_MESSAGES, HttpConnection
from iac_code.transports.http.events import Event, message_event

logger = logging.getLogger(__name__)

RETRY_SECONDS = (0.1, 0.2, 0.5, 1.0)
MAX_UNWRITTEN = 1000  # messages the agent sent that are not in the log yet; past it, send() waits
MAX_BATCH = 500  # messages per statement
INTERRUPTED = "the instance running this request stopped before answering; load the session again to go on"

# (connection id, first id, last id, events): ids first..last were just logged here, to the streams held here.
Deliver = Callable[[str, int, int, list[Event]], None]


class HostedConnection(HttpConnection):
    def __init__(
        self, connection_id: str, log: EventLog, inbound: InboundQueue, deliver: Deliver, stall_seconds: float
    ) -> None:
        super().__init__(connection_id)
        self._log = log
        self._inbound_queue = inbound
        self._deliver = deliver
        self._stall_seconds = stall_seconds
        self._unwritten: list[tuple[dict[str, Any], str | None]] = []  # with the session each concerns
        self._written = asyncio.Event()  # set after each batch: wakes a send() waiting for room
        self._writer: asyncio.Task[None] | None = None
        self._taking = asyncio.Lock()  # one take at a time keeps the POSTs' order
        self._draining = False
        self._drain_again = False
        self._drain_task: asyncio.Task[None] | None = None

    # -- Transport (the agent's side) ---------------------------------------------------------

    async def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            return
        if "method" not in message and self._answers_initialize(message):
            return
        self._unwritten.append((message, self._session_of_outgoing(message)))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write(), name=f"events {self.id}")
        while len(self._unwritten) > MAX_UNWRITTEN and not self.closed:
            self._written.clear()
            await self._written.wait()

    async def answer_interrupted(self, request_ids: list[Any]) -> None:
        """Answer the requests a dead host took and never answered (this instance adopted the connection)."""
        for request_id in request_ids:
            error = {"code": -32603, "message": "Internal error", "data": {"reason": INTERRUPTED}}
            await self.send({"jsonrpc": "2.0", "id": request_id, "error": error})

    # -- the client's messages ----------------------------------------------------------------

    async def accept_here(self, message: dict[str, Any]) -> bool:
        """A message POSTed to this instance: to the agent after what was queued before it. False when
        too many wait for the agent. Raises UnknownConnection, psycopg.OperationalError."""
        if self._inbound.qsize() >= MAX_INBOUND_MESSAGES:
            return False
        async with self._taking:
            for queued in await self._inbound_queue.take_before(self.id, message):
                self.accept(queued)
            return self.accept(message)

    def drain_soon(self) -> None:
        """Take what was POSTed elsewhere for this connection (now, or again once the running take ends)."""
        if self._draining:
            self._drain_again = True
            return
        self._draining = True
        self._drain_task = asyncio.create_task(self._drain(), name=f"drain {self.id}")

    async def _drain(self) -> None:
        failures = 0
        try:
            while not self.closed:
                self._drain_again = False
                room = MAX_INBOUND_MESSAGES - self._inbound.qsize()
                if room <= 0:
                    logger.warning("connection %s: %d messages wait for the agent", self.id, self._inbound.qsize())
                    return
                try:
                    async with self._taking:
                        messages = await self._inbound_queue.take(self.id, limit=room)
                        for message in messages:
                            self.accept(message)
                except psycopg.OperationalError as exc:
                    # No wake-up may come again for what is queued (the one after a reconnection may be
                    # this one), so this take is retried until it succeeds or the connection ends.
                    if failures == 0:
                        logger.info("connection %s: inbound messages not taken yet (%s)", self.id, exc)
                    await _back_off(failures)
                    failures += 1
                    continue
                failures = 0
                if len(messages) < room and not self._drain_again:
                    return
        finally:
            self._draining = False

    # -- the writer ---------------------------------------------------------------------------

    async def _write(self) -> None:
        while self._unwritten and not self.closed:
            batch = self._unwritten[:MAX_BATCH]
            appended = await self._append(batch)
            if appended is None:
                return
            del self._unwritten[: len(batch)]
            first_id = appended.last_id - len(batch) + 1
            events = [
                message_event(first_id + n, session if stream != CONNECTION_STREAM else None, message)
                for n, ((message, session), stream) in enumerate(zip(batch, appended.streams, strict=True))
            ]
            self._deliver(self.id, first_id, appended.last_id, events)
            self._written.set()

    async def _append(self, batch: list[tuple[dict[str, Any], str | None]]) -> Appended | None:
        """Log the batch; None if the connection is gone or the database stayed away too long."""
        messages, sessions = zip(*batch, strict=True)
        started = asyncio.get_running_loop().time()
        failures = 0
        while not self.closed:
            try:
                return await self._log.append_many(self.id, messages, sessions, as_host=True)
            except UnknownConnection:
                self.shutdown("closed, or adopted by another instance")
            except psycopg.OperationalError as exc:
                waited = asyncio.get_running_loop().time() - started
                if waited > self._stall_seconds:
                    logger.warning("connection %s: the database stayed unreachable for %.0fs; closing", self.id, waited)
                    self.shutdown("the database stayed unreachable")
                    break
                if failures == 0:
                    logger.info("connection %s: waiting for the database to log events (%s)", self.id, exc)
                await _back_off(failures)
                failures += 1
        self._written.set()  # a send() waiting for room gives up too
        return None


async def _back_off(failures: int) -> None:
    """The pause before trying the database again after `failures` failed tries in a row."""
    await asyncio.sleep(RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)])
