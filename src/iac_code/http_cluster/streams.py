"""Streams held by this instance when instances serve as one: events read from the shared log.

`StreamFeed`: one stream of a connection held here, the connection stream (this instance owns it) or a
session stream (this instance holds it: session_streams.py). Events come from the event log
(cluster/events.py) when a wake-up says there is more, or straight from memory when the agent runs here
too; either way in id order, from the feed's position (the last id delivered), each sent once. Ids are
shared by all the connection's streams, so a stream's ids have gaps: what the agent logged here comes as
the whole range of ids one statement took with this stream's share of them, which tells the feed that
the rest of the range went elsewhere; a gap nothing here explains is read from the log.
The connection stream's feed outlives its readers, so a reconnect here without Last-Event-ID resumes
where the last one stopped; each feed also records its position in the database for a reconnect elsewhere.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import dataclass

import psycopg

from iac_code.cluster.connections import UnknownConnection
from iac_code.cluster.events import CONNECTION_STREAM, EventLog, Replay, session_stream
from iac_code.transports.http.events import MAX_BATCH_EVENTS, Event, StreamKey, changed_within, lost_event

logger = logging.getLogger(__name__)

MAX_PUSHED = 4096  # events (and id ranges) kept in memory for a slow local reader; past that it reads the log
REPORT_EVERY_SECONDS = 0.25  # how often the delivery position is recorded while a stream is busy
DATABASE_RETRY_SECONDS = 1.0


def replay_events(replay: Replay, key: StreamKey) -> list[Event]:
    """The log's answer as events to send: a `lost` notice first when some were trimmed away."""
    events: list[Event] = []
    if replay.lost_through is not None:
        events.append(lost_event(replay.after, replay.lost_through))
    events += [Event(e.event_id, key, e.text.encode()) for e in replay.events]
    return events


@dataclass
class _Pushed:
    """Ids first_id..last_id, logged by one statement here, and those of them that are on this stream."""

    first_id: int
    last_id: int
    events: list[Event]


class StreamFeed:
    def __init__(self, connection_id: str, key: StreamKey, log: EventLog) -> None:
        self.connection_id = connection_id
        self.key = key  # None: the connection stream; else the session id
        self.stream = CONNECTION_STREAM if key is None else session_stream(key)  # its name in the log
        self.position = 0  # the last event id delivered (or known lost, or known to be on another stream)
        self.claimed = False  # the database says this instance owns the (connection) stream
        self.opened_at: float | None = None  # when the database last recorded it held here (a session stream)
        self.lock = asyncio.Lock()  # a session stream's opens and closes here take turns (session_streams.py)
        self.ended = False
        self._log = log
        self._pushed: deque[_Pushed] = deque()
        self._pushed_events = 0
        self._dirty = True  # the log may hold events after `position`
        self._changed = asyncio.Event()
        self._reader: FeedReader | None = None
        self._first: list[Event] = []  # what a new reader sends before anything else
        self._skip = (0, 0)  # (id, position): once the event `id` is delivered, the position may go that far
        self._reporting: asyncio.Task[None] | None = None
        self._final_report: asyncio.Task[None] | None = None

    @property
    def reading(self) -> bool:
        return self._reader is not None and not self.ended

    def mark_dirty(self) -> None:
        self._dirty = True
        self._wake()

    def push(self, first_id: int, last_id: int, events: list[Event]) -> None:
        """The agent running here just logged ids first_id..last_id; `events` are this stream's among them."""
        if len(self._pushed) >= MAX_PUSHED or self._pushed_events + len(events) > MAX_PUSHED:
            self._pushed.clear()  # the log has them all
            self._pushed_events = 0
            self._dirty = True
        else:
            self._pushed.append(_Pushed(first_id, last_id, events))
            self._pushed_events += len(events)
        if events or self._dirty:
            self._wake()

    def open_reader(self, replay: Replay) -> FeedReader:
        """A reader for a new response, starting with `replay` (read from the log after its claim or open);
        the previous reader ends (it was a stale reconnect)."""
        self.position = replay.after
        self._first = replay_events(replay, self.key)
        self._reader = FeedReader(self)
        self._wake()
        return self._reader

    def end(self) -> None:
        self.ended = True
        self._wake()

    async def reports_done(self) -> None:
        """Wait for the position reports under way (a closing session stream: none may land after it)."""
        await asyncio.gather(*(t for t in (self._reporting, self._final_report) if t is not None))

    async def next_batch(self, reader: FeedReader, keepalive_seconds: float) -> list[Event] | None:
        self._skip = (0, 0)
        if self._first and reader is self._reader:
            first, self._first = self._first, []
            return first
        while reader is self._reader and not self.ended:
            if batch := self._take_pushed():
                return batch
            if self._dirty or self._pushed:  # a wake-up, or a gap only the log can fill
                return await self._read_log()  # [] (a keepalive) when there was nothing new after all
            if not await changed_within(self._changed, keepalive_seconds):
                return []
        return None

    def delivered(self, batch: list[Event]) -> None:
        last_id = batch[-1].id
        self.position = max(self.position, last_id, self._skip[1] if self._skip[0] == last_id else 0)
        if self._reporting is None or self._reporting.done():
            self._reporting = asyncio.create_task(self._report_position(REPORT_EVERY_SECONDS))

    def detach(self, reader: FeedReader) -> None:
        if self._reader is reader:
            self._reader = None
            self._final_report = asyncio.create_task(self._report_position(0))  # a reconnect may come at once

    async def _read_log(self) -> list[Event] | None:
        self._dirty = False
        covered = self._pushed[-1].last_id if self._pushed else 0  # logged before the read starts
        try:
            replay = await self._log.events_after(self.connection_id, self.stream, self.position)
        except UnknownConnection:
            self.ended = True
            return None
        except psycopg.OperationalError:
            self._dirty = True
            await asyncio.sleep(DATABASE_RETRY_SECONDS)
            return []  # a keepalive, then the next call reads again
        events = replay_events(replay, self.key)
        if len(events) > MAX_BATCH_EVENTS:
            self._dirty = True
            return events[:MAX_BATCH_EVENTS]
        while self._pushed and self._pushed[0].last_id <= covered:  # the read saw all of those
            self._pushed_events -= len(self._pushed.popleft().events)
        return self._through(events, covered)

    def _take_pushed(self) -> list[Event]:
        """What memory holds right after `position` (up to a batch); [] when it holds nothing, or when the
        log must be read first (a wake-up, or ids pushed here do not follow on from `position`)."""
        batch: list[Event] = []
        through = self.position
        while self._pushed and not self._dirty and self._pushed[0].first_id <= through + 1:
            pushed = self._pushed[0]
            fresh = [e for e in pushed.events if e.id > through]
            room = MAX_BATCH_EVENTS - len(batch)
            if len(fresh) > room:
                batch += fresh[:room]
                self._pushed_events -= len(pushed.events) - len(fresh) + room
                pushed.events = fresh[room:]
                return batch
            self._pushed_events -= len(self._pushed.popleft().events)
            batch += fresh
            through = max(through, pushed.last_id)
        return self._through(batch, through)

    def _through(self, batch: list[Event], through: int) -> list[Event]:
        """`batch`, known to be all of this stream's events up to `through`: once it is delivered (at once
        when empty), the position may pass the ids in between, which are on other streams."""
        if batch:
            self._skip = (batch[-1].id, through)
        else:
            self.position = max(self.position, through)
        return batch

    async def _report_position(self, delay: float) -> None:
        """Record the position in the database: the latest each time, a few times per second at most."""
        reported = -1
        while reported != self.position:
            await asyncio.sleep(delay)
            reported = self.position
            try:
                await self._log.delivered(self.connection_id, self.stream, reported)
            except (psycopg.OperationalError, UnknownConnection):
                return

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()


class FeedReader:
    """One SSE response reading a StreamFeed (backend.Reader)."""

    def __init__(self, feed: StreamFeed) -> None:
        self._feed = feed

    async def next_batch(self, keepalive_seconds: float) -> list[Event] | None:
        return await self._feed.next_batch(self, keepalive_seconds)

    def delivered(self, batch: list[Event]) -> None:
        self._feed.delivered(batch)

    def give_back(self, batch: list[Event]) -> None:
        self._feed.mark_dirty()  # the position did not move: the next reader reads them again

    def detach(self) -> None:
        self._feed.detach(self)
