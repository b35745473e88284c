"""Streams held by this instance when instances serve as one: events read from the shared log.

`StreamFeed`: the connection stream of one connection this instance owns. Events come from the event
log (cluster/events.py) when a wake-up says there is more, or straight from memory when the agent runs
here too; either way in id order, from the feed's position (the last id delivered), each sent once.
The feed outlives its readers, so a reconnect here without Last-Event-ID resumes where the last one
stopped; the position is also recorded in the database for a reconnect elsewhere.

Every event goes on the connection stream (hosting.py), so a session stream (`QuietReader`) only
carries keepalives: the official client merges its streams, and nothing is ever sent twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable

import psycopg

from iac_code.cluster.connections import UnknownConnection
from iac_code.cluster.events import CONNECTION_STREAM, EventLog, Replay
from iac_code.transports.http.events import MAX_BATCH_EVENTS, Event, changed_within, lost_event

logger = logging.getLogger(__name__)

MAX_PUSHED = 4096  # events kept in memory for a slow local reader; past that it reads the log
REPORT_EVERY_SECONDS = 0.25  # how often the delivery position is recorded while a stream is busy
DATABASE_RETRY_SECONDS = 1.0


def replay_events(replay: Replay) -> list[Event]:
    """The log's answer as events to send: a `lost` notice first when some were trimmed away."""
    events: list[Event] = []
    if replay.lost_through is not None:
        events.append(lost_event(replay.after, replay.lost_through))
    events += [Event(e.event_id, None, e.text.encode()) for e in replay.events]
    return events


class StreamFeed:
    def __init__(self, connection_id: str, log: EventLog) -> None:
        self.connection_id = connection_id
        self.position = 0  # the last event id delivered (or known lost)
        self.claimed = False  # the database says this instance owns the stream
        self.ended = False
        self._log = log
        self._pushed: deque[Event] = deque()
        self._dirty = True  # the log may hold events after `position`
        self._changed = asyncio.Event()
        self._reader: FeedReader | None = None
        self._first: list[Event] = []  # what a new reader sends before anything else
        self._reporting: asyncio.Task[None] | None = None
        self._final_report: asyncio.Task[None] | None = None

    @property
    def reading(self) -> bool:
        return self._reader is not None and not self.ended

    def mark_dirty(self) -> None:
        self._dirty = True
        self._wake()

    def push(self, events: list[Event]) -> None:
        """Events the agent running here just logged."""
        if len(self._pushed) + len(events) > MAX_PUSHED:
            self._pushed.clear()  # the log has them all
            self._dirty = True
        else:
            self._pushed.extend(events)
        self._wake()

    def open_reader(self, replay: Replay) -> FeedReader:
        """A reader for a new response, starting with `replay` (read from the log after its claim); the
        previous reader ends (it was a stale reconnect)."""
        self.position = replay.after
        self._first = replay_events(replay)
        self._reader = FeedReader(self)
        self._wake()
        return self._reader

    def end(self) -> None:
        self.ended = True
        self._wake()

    async def next_batch(self, reader: FeedReader, keepalive_seconds: float) -> list[Event] | None:
        if self._first and reader is self._reader:
            first, self._first = self._first, []
            return first
        while reader is self._reader and not self.ended:
            while self._pushed and self._pushed[0].id <= self.position:
                self._pushed.popleft()
            if self._pushed and self._pushed[0].id == self.position + 1 and not self._dirty:
                return self._take_pushed()
            if self._dirty or self._pushed:  # a wake-up, or a gap only the log can fill
                return await self._read_log()  # [] (a keepalive) when there was nothing new after all
            if not await changed_within(self._changed, keepalive_seconds):
                return []
        return None

    def delivered(self, batch: list[Event]) -> None:
        self.position = max(self.position, batch[-1].id)
        if self._reporting is None or self._reporting.done():
            self._reporting = asyncio.create_task(self._report_position(REPORT_EVERY_SECONDS))

    def detach(self, reader: FeedReader) -> None:
        if self._reader is reader:
            self._reader = None
            self._final_report = asyncio.create_task(self._report_position(0))  # a reconnect may come at once

    async def _read_log(self) -> list[Event] | None:
        self._dirty = False
        try:
            replay = await self._log.events_after(self.connection_id, CONNECTION_STREAM, self.position)
        except UnknownConnection:
            self.ended = True
            return None
        except psycopg.OperationalError:
            self._dirty = True
            await asyncio.sleep(DATABASE_RETRY_SECONDS)
            return []  # a keepalive, then the next call reads again
        events = replay_events(replay)
        if len(events) > MAX_BATCH_EVENTS:
            events = events[:MAX_BATCH_EVENTS]
            self._dirty = True
        return events

    def _take_pushed(self) -> list[Event]:
        batch = [self._pushed.popleft()]
        while self._pushed and len(batch) < MAX_BATCH_EVENTS and self._pushed[0].id == batch[-1].id + 1:
            batch.append(self._pushed.popleft())
        return batch

    async def _report_position(self, delay: float) -> None:
        """Record the position in the database: the latest each time, a few times per second at most."""
        reported = -1
        while reported != self.position:
            await asyncio.sleep(delay)
            reported = self.position
            try:
                await self._log.delivered(self.connection_id, reported)
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


class QuietReader:
    """A session stream (backend.Reader): keepalives until the connection ends here."""

    def __init__(self, connection_id: str, on_detach: Callable[[QuietReader], None]) -> None:
        self.connection_id = connection_id
        self._ended = asyncio.Event()
        self._on_detach = on_detach

    def end(self) -> None:
        self._ended.set()

    async def next_batch(self, keepalive_seconds: float) -> list[Event] | None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ended.wait(), keepalive_seconds)
            return None
        return []

    def delivered(self, batch: list[Event]) -> None:
        pass

    def give_back(self, batch: list[Event]) -> None:
        pass

    def detach(self) -> None:
        self.end()
        self._on_detach(self)
