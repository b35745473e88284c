"""The HTTP server's connections when instances share PostgreSQL and serve as one (see transports/http/backend.py).

Any request may land on any instance (a plain round-robin balancer, no stickiness):

- `initialize` opens the connection where it lands: that instance hosts its agent (hosting.py).
- a POST is queued in the database and wakes the host, which takes it (so order holds across instances).
- GET of the connection stream claims the connection's stream for this instance (its owner); the previous
  owner ends its stale stream. The agent stays where it runs, so a stream moving never stops a turn.
  Events come from the shared log, after Last-Event-ID (streams.py).
- GET of a session stream (Acp-Session-Id) holds it here: the session's messages go to it while it is open,
  and what it did not deliver goes to the connection stream when it closes (session_streams.py).
- DELETE removes the connection and wakes its host and owner.
- Each of these serves only the principal that opened the connection (its row says who, principals.py):
  to anyone else the connection is unknown, on every instance.
- A database that cannot be reached answers 503; `/health` says so, so the balancer stops routing here.

On every heartbeat (cluster/node.py) the housekeeping marks streamed connections active, stops serving
what the database no longer grants this instance, adopts the connections of dead hosts (answering
the requests they never answered), closes the session streams nobody reads any more, expires idle
connections and trims old events.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import psycopg
from acp._transport import Transport

from iac_code.cluster.connections import Adopted, ConnectionOwnership, UnknownConnection
from iac_code.cluster.events import CONNECTION_STREAM, EventLog, Retention
from iac_code.cluster.inbound import InboundQueue
from iac_code.cluster.node import ClusterNode, DatabaseUnreachable
from iac_code.cluster.wakeups import Wakeup
from iac_code.http_cluster.hosting import HostedConnection
from iac_code.http_cluster.principals import ConnectionPrincipals
from iac_code.http_cluster.session_streams import SessionStreamFeeds
from iac_code.http_cluster.streams import StreamFeed
from iac_code.principals import Principal
from iac_code.transports.http.backend import OpenStream, Refusal, opened_by, unknown_connection
from iac_code.transports.http.connections import HttpConnection, ServeFn
from iac_code.transports.http.events import Event, EventLimits, StreamKey
from iac_code.transports.http.local import LocalBackend, answer_initialize

if TYPE_CHECKING:
    from iac_code.transports.http.app import HttpOptions

logger = logging.getLogger(__name__)

INSTANCE_HEADER = b"iac-instance-id"
RETENTION = Retention(max_events=10_000, max_age=300.0)


class ClusterBackend(LocalBackend):
    def __init__(
        self,
        node: ClusterNode,
        serve: ServeFn,
        *,
        idle_timeout: float,
        max_connections: int,
        limits: EventLimits,
        retention: Retention = RETENTION,
    ) -> None:
        me = node.instance_id
        self.node = node
        self.ownership = ConnectionOwnership(node.pool, me)
        self.log = EventLog(node.pool, me, retention)
        self.inbound = InboundQueue(node.pool, me)
        self.principals = ConnectionPrincipals(node.pool)
        self._serve_agent = serve
        self._idle_timeout = idle_timeout
        super().__init__(
            self._serve_hosted,
            idle_timeout=idle_timeout,
            max_connections=max_connections,
            limits=limits,
            make_connection=lambda connection_id: HostedConnection(
                connection_id, self.log, self.inbound, self._deliver_here, limits.stall_seconds
            ),
        )
        self.response_headers = [(INSTANCE_HEADER, me.encode())]
        self.feeds: dict[str, StreamFeed] = {}  # the connection streams owned here
        self.sessions = SessionStreamFeeds(node, self.log, self._mark_dirty)
        self._claimed_at: dict[str, float] = {}
        node.on_tick.append(self.housekeep)
        node.on_wakeup = self._on_wakeup

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> None:
        self.node.start()

    async def stop(self, reason: str) -> None:
        await self.registry.close_all(reason)
        self._end_streams()
        await self.node.close()

    def begin_shutdown(self) -> None:
        super().begin_shutdown()
        self._end_streams()

    # -- requests -------------------------------------------------------------------------------

    async def initialize(
        self, message: dict[str, Any], timeout: float, principal: Principal, connection_id: str | None = None
    ) -> tuple[str, dict[str, Any]]:
        self.check_room()
        connection_id = connection_id or str(uuid.uuid4())
        with self._database():
            await self.ownership.open(connection_id)  # before the agent: the housekeeping trusts the row
            await self.principals.record(connection_id, principal)
        try:
            conn = self.new_connection(principal, connection_id)
            return conn.id, await answer_initialize(self.registry, conn, message, timeout)
        except Refusal:
            self.node.spawn(self._forget(connection_id))
            raise

    async def post(self, connection_id: str | None, message: dict[str, Any], principal: Principal) -> None:
        if not connection_id:
            raise unknown_connection(connection_id)
        hosted = self.registry.get(connection_id)
        if hosted is not None:
            opened_by(hosted, connection_id, principal)
        with self._database():
            try:
                if not isinstance(hosted, HostedConnection):
                    await self.principals.check(connection_id, principal)
                    await self.inbound.push(connection_id, message)  # wakes the host
                elif not await hosted.accept_here(message):
                    raise Refusal(429, "too many messages waiting for the agent; retry later")
            except UnknownConnection:
                raise unknown_connection(connection_id) from None

    async def open_stream(
        self, connection_id: str | None, stream: StreamKey, last_event_id: int | None, principal: Principal
    ) -> OpenStream:
        if not self.accepting:
            raise Refusal(503, "the server is shutting down")
        if not connection_id:
            raise unknown_connection(connection_id)
        with self._database():  # before a feed or a claim: another principal's stream stays where it is
            await self.principals.check(connection_id, principal)
        if stream is not None:
            try:
                with self._database():
                    return await self.sessions.open(connection_id, stream, last_event_id)
            except UnknownConnection:
                raise unknown_connection(connection_id) from None
        feed = self.feeds.get(connection_id)
        new = feed is None
        if feed is None:  # registered before the claim, so no wake-up after it is missed
            feed = self.feeds[connection_id] = StreamFeed(connection_id, None, self.log)
        try:
            with self._database():
                await self.ownership.claim(connection_id)
                self._claimed_at[connection_id] = time.monotonic()
                feed.claimed = True
                after = last_event_id if last_event_id is not None else (None if new else feed.position)
                replay = await self.log.events_after(connection_id, CONNECTION_STREAM, after)
        except (Refusal, UnknownConnection) as exc:
            if new and not feed.claimed:
                self.feeds.pop(connection_id, None)
            raise exc if isinstance(exc, Refusal) else unknown_connection(connection_id) from None
        return OpenStream(feed.open_reader(replay), [], lambda: None)

    async def close(self, connection_id: str | None, principal: Principal) -> None:
        if not connection_id:
            raise unknown_connection(connection_id)
        with self._database():
            await self.principals.check(connection_id, principal)
            existed = await self.ownership.forget(connection_id)
        if not existed and self.registry.get(connection_id) is None:
            raise unknown_connection(connection_id)
        await self._closed_here(connection_id, "DELETE by the client")

    async def health(self) -> tuple[int, dict[str, Any]]:
        reachable = await self.node.database_ok()
        fields = {
            "connections": len(self.registry),
            "sessions": self.registry.session_count,
            "instance": self.node.instance_id,
            "database": "ok" if reachable else "unreachable",
        }
        return (200 if reachable else 503), fields

    # -- housekeeping (every heartbeat) ---------------------------------------------------------

    async def housekeep(self) -> None:
        if not self.node.listener.listening.is_set():  # no wake-ups meanwhile: poll on every heartbeat
            self._on_wakeup(Wakeup("resync", ""))
        started = time.monotonic()
        hosted = [conn.id for conn in self.registry]
        owned = {cid: feed for cid, feed in self.feeds.items() if self._claimed_at.get(cid, started) < started}
        streaming = {cid for cid, feed in owned.items() if feed.reading} | self.sessions.reading_connections()
        if streaming:
            await self.ownership.touch(sorted(streaming))
        if ids := {*hosted, *owned}:
            standing = await self.ownership.standing(sorted(ids))
            for connection_id in set(hosted) - standing.hosted:
                await self._closed_here(connection_id, "closed, expired or taken over while the database was away")
            for connection_id, feed in owned.items():
                if connection_id not in standing.owned and self.feeds.get(connection_id) is feed:
                    self._end_feed(connection_id)
        await self.sessions.housekeep()
        if self.node.settled and self.accepting:
            for adopted in await self.ownership.adopt_orphans(self.node.timings.instance_max_age):
                self._adopt(adopted)
        for connection_id in await self.ownership.expire_idle(self._idle_timeout):
            await self._closed_here(connection_id, f"idle for more than {self._idle_timeout:g}s")
        await self.log.trim_expired()

    # -- helpers --------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _database(self) -> Iterator[None]:
        """Around a request's database work: 503 while the database is unreachable."""
        try:
            with self.node.database_required():
                yield
        except DatabaseUnreachable as exc:
            logger.info("refused a request: the database is unreachable (%s)", exc)
            raise Refusal(503, "the database is unreachable; retry later") from None

    async def _serve_hosted(self, transport: Transport) -> None:
        try:
            await self._serve_agent(transport)
        finally:
            if isinstance(transport, HttpConnection) and not transport.closed and self.accepting:
                self.node.spawn(self._forget(transport.id))  # the agent ended by itself

    def _adopt(self, adopted: Adopted) -> None:
        if self.registry.get(adopted.connection_id) is not None:
            return
        self.node.spawn(self._adopt_as_opener(adopted))

    async def _adopt_as_opener(self, adopted: Adopted) -> None:
        """Host it for the principal that opened it (none known: it stays unserved, and expires)."""
        opener = await self.principals.of(adopted.connection_id)
        if opener is None or self.registry.get(adopted.connection_id) is not None:
            return
        logger.info("connection %s of %s adopted: its host stopped", adopted.connection_id, opener.name)
        conn = self.registry.create(opener, adopted.connection_id)
        assert isinstance(conn, HostedConnection)
        self.node.spawn(self._resume(conn, adopted.interrupted))

    async def _resume(self, conn: HostedConnection, interrupted: list[Any]) -> None:
        await conn.answer_interrupted(interrupted)
        conn.drain_soon()

    def _feeds_of(self, connection_id: str) -> list[StreamFeed]:
        """The streams of the connection held here: its connection stream, its session streams."""
        feed = self.feeds.get(connection_id)
        return ([feed] if feed is not None else []) + self.sessions.of(connection_id)

    def _deliver_here(self, connection_id: str, first_id: int, last_id: int, events: list[Event]) -> None:
        for feed in self._feeds_of(connection_id):
            feed.push(first_id, last_id, [event for event in events if event.stream == feed.key])

    def _mark_dirty(self, connection_id: str) -> None:
        for feed in self._feeds_of(connection_id):
            feed.mark_dirty()

    def _on_wakeup(self, wakeup: Wakeup) -> None:
        subject = wakeup.subject
        if wakeup.kind == "event":
            self._mark_dirty(subject)
        elif wakeup.kind == "inbound" and isinstance(hosted := self.registry.get(subject), HostedConnection):
            hosted.drain_soon()
        elif wakeup.kind == "claimed":  # another instance took one of its streams
            if subject in self.feeds:
                self.node.spawn(self._check_still_owned(subject))
            if self.sessions.of(subject):
                self.node.spawn(self._check_sessions_still_held(subject))
        elif wakeup.kind == "closed":
            self.node.spawn(self._closed_here(subject, "closed on another instance"))
        elif wakeup.kind == "resync":  # wake-ups were missed: look at everything again
            for feed in [*self.feeds.values(), *self.sessions.all()]:
                feed.mark_dirty()
            for conn in self.registry:
                if isinstance(conn, HostedConnection):
                    conn.drain_soon()

    async def _check_still_owned(self, connection_id: str) -> None:
        """A claim by another instance: end the stale stream here, unless this instance claimed it back since."""
        try:
            owner = await self.ownership.owner(connection_id)
        except UnknownConnection:
            owner = None
        except psycopg.OperationalError:
            return  # the housekeeping will tell
        if owner != self.node.instance_id:
            self._end_feed(connection_id)

    async def _check_sessions_still_held(self, connection_id: str) -> None:
        with contextlib.suppress(psycopg.OperationalError):  # else the housekeeping will tell
            await self.sessions.recheck([connection_id])

    async def _closed_here(self, connection_id: str, reason: str) -> None:
        self._end_feed(connection_id)
        self.sessions.end_connection(connection_id)
        conn = self.registry.get(connection_id)
        if conn is not None:
            await self.registry.close(conn, reason)

    async def _forget(self, connection_id: str) -> None:
        with contextlib.suppress(psycopg.OperationalError):
            await self.ownership.forget(connection_id)

    def _end_feed(self, connection_id: str) -> None:
        self._claimed_at.pop(connection_id, None)
        feed = self.feeds.pop(connection_id, None)
        if feed is not None:
            feed.end()

    def _end_streams(self) -> None:
        for connection_id in list(self.feeds):
            self._end_feed(connection_id)
        self.sessions.end_all()


def cluster_backend(node: ClusterNode, serve: ServeFn, options: HttpOptions) -> ClusterBackend:
    """The connections of the cluster `node` belongs to (opened by the start-up module, serve.py); the
    agents `serve` runs take session leases (node.owners)."""
    backend = ClusterBackend(
        node, serve, idle_timeout=options.idle_timeout, max_connections=options.max_connections, limits=options.limits
    )
    backend.principal_connections = options.principal_connections  # counted among this instance's connections
    return backend
