"""The session streams this instance holds when instances serve as one (GET with Acp-Session-Id).

While a session stream is open, its session's messages are logged on it (cluster/events.py), wherever the
agent runs, and this instance's StreamFeed for it delivers them (streams.py). The database records it as
held here (cluster/session_streams.py); a newer open anywhere supersedes it and its reader here ends, as
a reconnect does in one process.

When its reader ends, the stream closes: what it did not deliver moves to the connection stream, so a
client reading only the connection stream still gets it, once. Opens and closes of one stream take turns
here (the feed's lock), so a close never removes a stream that a newer reader here has just opened.

On each heartbeat (`housekeep`), streams the database no longer says are held here end, and streams no
reader will close are closed: those held here in the database with no reader here (this instance
restarted, or a close failed while the database was away), and, once this instance trusts peers' silence,
those whose holder has been silent for a dead instance's max age plus the SSE retry interval. Within that
time a client reconnecting its session stream elsewhere with Last-Event-ID gets exactly what followed (the
id is authoritative); after it, the events move to the connection stream from the position the dead
holder last recorded, so the few it sent after its last record (a quarter of a second) may come twice.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator

import psycopg

from iac_code.cluster.events import EventLog
from iac_code.cluster.node import ClusterNode
from iac_code.cluster.session_streams import HeldStream, SessionStreams
from iac_code.database.json_text import from_json_text
from iac_code.http_cluster.streams import StreamFeed
from iac_code.transports.http.backend import OpenStream
from iac_code.transports.http.events import RETRY_MILLISECONDS

logger = logging.getLogger(__name__)


class SessionStreamFeeds:
    def __init__(self, node: ClusterNode, log: EventLog, on_moved: Callable[[str], None]) -> None:
        self.node = node
        self.streams = SessionStreams(log)
        self.me = node.instance_id
        self._log = log
        self._on_moved = on_moved  # events moved to a connection's stream: its feed here must read the log
        self._feeds: dict[str, dict[str, StreamFeed]] = {}  # connection id → stream key → feed
        # How long a silent holder's streams wait for their client to reconnect them elsewhere.
        self.grace = node.timings.instance_max_age + RETRY_MILLISECONDS / 1000

    def of(self, connection_id: str) -> list[StreamFeed]:
        return list(self._feeds.get(connection_id, {}).values())

    def all(self) -> Iterator[StreamFeed]:
        for feeds in list(self._feeds.values()):
            yield from list(feeds.values())

    def reading_connections(self) -> set[str]:
        return {feed.connection_id for feed in self.all() if feed.reading}

    async def open(self, connection_id: str, session_id: str, last_event_id: int | None) -> OpenStream:
        """A reader of the session's stream, held here from now on. Raises UnknownConnection (from
        cluster/session_streams.py), psycopg.OperationalError."""
        feed = await self._locked(StreamFeed(connection_id, session_id, self._log))
        try:
            if last_event_id is None and feed.opened_at is not None:  # a reconnect here: on from what it sent
                last_event_id = feed.position
            start = await self.streams.open(connection_id, feed.stream, last_event_id)
            feed.opened_at = time.monotonic()
            reader = feed.open_reader(await self._log.events_after(connection_id, feed.stream, start))
        except BaseException:
            if not feed.reading:  # nothing reads it here: forget it (a stream recorded as held is closed later)
                self._forget(feed)
                feed.end()
            raise
        finally:
            feed.lock.release()
        return OpenStream(reader, [], lambda: self.node.spawn(self._close(feed)))

    async def recheck(self, connection_ids: list[str]) -> None:
        """End the feeds of these connections that the database no longer says are held here (another
        instance opened them since, or moved them). Feeds opened meanwhile are left alone."""
        started = time.monotonic()
        held = await self.streams.held_here(connection_ids)
        for connection_id in connection_ids:
            for feed in self.of(connection_id):
                opened_before = feed.opened_at is not None and feed.opened_at < started
                if opened_before and not feed.lock.locked() and (connection_id, feed.stream) not in held:
                    self._forget(feed)
                    feed.end()

    async def housekeep(self) -> None:
        """Every heartbeat: end what is no longer held here; close what nobody will."""
        if connection_ids := sorted(self._feeds):
            await self.recheck(connection_ids)
        for stranded in await self.streams.stranded(self.grace):
            if stranded.holder == self.me:
                if self._feeds.get(stranded.connection_id, {}).get(stranded.stream) is None:
                    key = from_json_text(stranded.stream)
                    await self._close(self._add(StreamFeed(stranded.connection_id, key, self._log)))
            elif self.node.settled:
                await self._move_from_silent_holder(stranded)

    def end_connection(self, connection_id: str) -> None:
        """The connection is closed: its streams end (the database forgot them with it)."""
        for feed in self._feeds.pop(connection_id, {}).values():
            feed.end()

    def end_all(self) -> None:
        """Shutting down: every reader ends, and each stream closes as its response ends."""
        for feed in self.all():
            feed.end()

    async def _locked(self, fresh: StreamFeed) -> StreamFeed:
        """The feed of `fresh`'s stream (`fresh` itself when there is none), its lock held."""
        while True:
            feed = self._feeds.get(fresh.connection_id, {}).get(fresh.stream) or self._add(fresh)
            await feed.lock.acquire()
            if not feed.ended:
                return feed
            feed.lock.release()  # it closed while this waited: a new one
            self._forget(feed)

    async def _close(self, feed: StreamFeed) -> None:
        """Its reader ended: close the stream, unless a newer reader took it or it is no longer held here.
        The feed stays listed until the database has closed it, so the housekeeping leaves it alone."""
        async with feed.lock:
            if feed.reading or self._feeds.get(feed.connection_id, {}).get(feed.stream) is not feed:
                return
            feed.end()
            try:
                await feed.reports_done()
                after = feed.position if feed.opened_at is not None else None  # never read here: as recorded
                moved = await self.streams.close(feed.connection_id, feed.stream, self.me, after)
            except psycopg.OperationalError as exc:  # still recorded as held here: the housekeeping closes it
                logger.info("connection %s: a session stream is not closed yet (%s)", feed.connection_id, exc)
                return
            finally:
                self._forget(feed)
        if moved:
            self._on_moved(feed.connection_id)

    async def _move_from_silent_holder(self, stranded: HeldStream) -> None:
        moved = await self.streams.close(stranded.connection_id, stranded.stream, stranded.holder)
        if moved:
            logger.info(
                "connection %s: %d events of a session stream of silent instance %s moved to the connection stream",
                stranded.connection_id,
                moved,
                stranded.holder,
            )
            self._on_moved(stranded.connection_id)

    def _add(self, feed: StreamFeed) -> StreamFeed:
        self._feeds.setdefault(feed.connection_id, {})[feed.stream] = feed
        return feed

    def _forget(self, feed: StreamFeed) -> None:
        feeds = self._feeds.get(feed.connection_id, {})
        if feeds.get(feed.stream) is feed:
            del feeds[feed.stream]
            if not feeds:
                self._feeds.pop(feed.connection_id, None)
