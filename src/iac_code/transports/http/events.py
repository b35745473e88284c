"""Per-connection SSE event buffer: ids, routing to one stream, replay after `Last-Event-ID`, bounds.

Every outgoing JSON-RPC message gets the connection's next event id and is queued for exactly one
stream: a session stream (`Acp-Session-Id`) when that stream has a reader, else the connection stream.
Undelivered events wait for a reader; past a bound the producer waits for the reader to catch up
(backpressure), and a client that does not catch up in time is not reading: its connection is closed.
Delivered events stay in a bounded replay window so a reader that
reconnects with `Last-Event-ID` gets what it missed, or an explicit `lost` event when it is gone.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import deque
from dataclasses import dataclass
from typing import Any

from iac_code.safe_json import dumps_bytes

StreamKey = str | None  # None: the connection stream; otherwise a session id

RETRY_MILLISECONDS = 5000
KEEPALIVE_FRAME = b": keepalive\n\n"
MAX_BATCH_EVENTS = 256
# ASCII digits only (str.isdigit also takes "¹²", which int() refuses) and short enough for int().
_EVENT_ID = re.compile(r"[0-9]{1,19}")


@dataclass(frozen=True)
class EventLimits:
    pending_bytes: int = 64 * 1024 * 1024  # undelivered: past this the agent waits for the reader
    pending_events: int = 10_000
    stall_seconds: float = 30.0  # how long the agent waits for room before the client counts as gone
    replay_bytes: int = 4 * 1024 * 1024  # delivered, kept for Last-Event-ID reconnects
    replay_events: int = 1024


@dataclass
class Event:
    """One outgoing message of a connection, serialised once; SSE frames it (`frame`), a WebSocket sends
    `data` as it is."""

    id: int
    stream: StreamKey
    # The JSON-RPC message on one line: non-ASCII text stays at its UTF-8 size and JSON escapes
    # newlines, so it is always a single SSE `data:` line. For a `lost` notice, its JSON.
    data: bytes
    lost: bool = False  # not a message: the events (after, `id`] of this stream can no longer be replayed

    @property
    def size(self) -> int:
        return len(self.data) + FRAME_OVERHEAD

    @property
    def frame(self) -> bytes:
        """The event as SSE. A `lost` notice has no id, so the client's Last-Event-ID is unchanged."""
        if self.lost:
            return b"event: lost\ndata: %s\n\n" % self.data
        return b"id: %d\nevent: message\nretry: %d\ndata: %s\n\n" % (self.id, RETRY_MILLISECONDS, self.data)


FRAME_OVERHEAD = 48  # what SSE framing adds to an event's data, near enough for the buffer's byte bounds


def last_event_id(header: str | None) -> int | None:
    """The event id a reconnecting reader names in Last-Event-ID (None: it names none); ValueError when the
    header is not an event id."""
    if header is None:
        return None
    if not _EVENT_ID.fullmatch(header.strip()):
        raise ValueError("Last-Event-ID must be an event id (a non-negative integer)")
    return int(header)


def message_event(event_id: int, stream: StreamKey, message: dict[str, Any]) -> Event:
    return Event(event_id, stream, dumps_bytes(message))


def lost_event(last_event_id: int, lost_through: int) -> Event:
    """Told to a reconnecting reader whose missed events fell out of the replay window: the range of
    event ids on this stream that can no longer be replayed, (lastEventId, lostThrough]."""
    data = json.dumps({"error": "events lost", "lastEventId": last_event_id, "lostThrough": lost_through})
    return Event(lost_through, None, data.encode(), lost=True)


class EventBuffer:
    """Event ids, per-stream queues and the replay window of one connection (single event loop)."""

    def __init__(self, limits: EventLimits | None = None) -> None:
        self.limits = limits or EventLimits()
        self._next_id = 1
        self._pending: dict[StreamKey, deque[Event]] = {}
        self._pending_bytes = 0
        self._pending_count = 0
        self._replay: deque[Event] = deque()
        self._replay_bytes = 0
        self._lost_through: dict[StreamKey, int] = {}
        self._readers: dict[StreamKey, StreamReader] = {}
        self._changed = asyncio.Event()
        self.closed = False

    @property
    def reader_count(self) -> int:
        return len(self._readers)

    @property
    def full(self) -> bool:
        limits = self.limits
        return self._pending_bytes > limits.pending_bytes or self._pending_count > limits.pending_events

    def describe_pending(self) -> str:
        limits = self.limits
        return (
            f"{self._pending_count} undelivered events ({self._pending_bytes} bytes) over the limit "
            f"({limits.pending_events} events, {limits.pending_bytes} bytes) for {limits.stall_seconds:g}s"
        )

    def publish(self, message: dict[str, Any], session_id: str | None) -> None:
        """Queue `message` for its stream (the caller checks `full` and waits for room)."""
        if self.closed:
            return
        stream: StreamKey = session_id if session_id is not None and session_id in self._readers else None
        event = message_event(self._next_id, stream, message)
        self._next_id += 1
        self._enqueue(event)
        self._notify()

    async def wait_for_room(self) -> bool:
        """Wait until readers drain below the bounds; False if they did not within `stall_seconds`."""
        deadline = asyncio.get_running_loop().time() + self.limits.stall_seconds
        while self.full and not self.closed:
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                return False
            await changed_within(self._changed, remaining)  # the loop looks again either way
        return True

    def open_reader(self, stream: StreamKey) -> StreamReader:
        """Attach a reader to `stream`; a previous reader of the same stream ends (it is a stale reconnect)."""
        reader = StreamReader(self, stream)
        self._readers[stream] = reader
        self._notify()
        return reader

    def close(self) -> None:
        """End every reader; later publishes are dropped."""
        self.closed = True
        self._notify()

    def replay_after(self, stream: StreamKey, last_event_id: int) -> list[Event]:
        """What a reader reconnecting with `last_event_id` missed on `stream` (delivered events included)."""
        events: list[Event] = []
        lost_through = self._lost_through.get(stream, 0)
        if lost_through > last_event_id:
            events.append(lost_event(last_event_id, lost_through))
        events += sorted((e for e in self._replay if e.stream == stream and e.id > last_event_id), key=lambda e: e.id)
        return events

    def _enqueue(self, event: Event, *, front: bool = False) -> None:
        queue = self._pending.setdefault(event.stream, deque())
        queue.appendleft(event) if front else queue.append(event)
        self._pending_bytes += event.size
        self._pending_count += 1

    def _take(self, stream: StreamKey) -> list[Event]:
        queue = self._pending.get(stream)
        batch: list[Event] = []
        while queue and len(batch) < MAX_BATCH_EVENTS:
            event = queue.popleft()
            self._pending_bytes -= event.size
            self._pending_count -= 1
            batch.append(event)
        return batch

    def _give_back(self, batch: list[Event]) -> None:
        for event in reversed(batch):
            if event.stream is not None and event.stream not in self._readers:
                event.stream = None
            self._enqueue(event, front=True)
        self._notify()

    def _delivered(self, batch: list[Event]) -> None:
        for event in batch:
            self._replay.append(event)
            self._replay_bytes += event.size
        limits = self.limits
        while len(self._replay) > 1 and (
            self._replay_bytes > limits.replay_bytes or len(self._replay) > limits.replay_events
        ):
            old = self._replay.popleft()
            self._replay_bytes -= old.size
            self._lost_through[old.stream] = max(self._lost_through.get(old.stream, 0), old.id)
        if not self.full:
            self._notify()  # wakes a producer waiting for room

    def _detach(self, reader: StreamReader) -> None:
        if self._readers.get(reader.stream) is not reader:
            return
        del self._readers[reader.stream]
        if reader.stream is not None:
            self._reroute_to_connection_stream(reader.stream)

    def _reroute_to_connection_stream(self, session_id: str) -> None:
        # Nobody reads this session stream any more: its undelivered events go to the connection
        # stream, so a single-stream client still gets them (and each event is still sent once).
        stranded = self._pending.pop(session_id, None)
        if not stranded:
            return
        connection_queue = self._pending.setdefault(None, deque())
        for event in stranded:
            event.stream = None
        merged = sorted([*connection_queue, *stranded], key=lambda e: e.id)
        connection_queue.clear()
        connection_queue.extend(merged)
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()


async def changed_within(changed: asyncio.Event, seconds: float) -> bool:
    """Wait for `changed` to be set; False if `seconds` passed first (time for a keepalive)."""
    try:
        async with asyncio.timeout(seconds):
            await changed.wait()
    except TimeoutError:
        return False
    return True


class StreamReader:
    """One live SSE response reading one stream of an EventBuffer."""

    def __init__(self, buffer: EventBuffer, stream: StreamKey) -> None:
        self._buffer = buffer
        self.stream = stream

    @property
    def active(self) -> bool:
        return not self._buffer.closed and self._buffer._readers.get(self.stream) is self

    async def next_batch(self, keepalive_seconds: float) -> list[Event] | None:
        """The next undelivered events; [] after `keepalive_seconds` idle; None when the stream must end."""
        while self.active:
            batch = self._buffer._take(self.stream)
            if batch:
                return batch
            if not await changed_within(self._buffer._changed, keepalive_seconds):
                return []
        return None

    def delivered(self, batch: list[Event]) -> None:
        self._buffer._delivered(batch)

    def give_back(self, batch: list[Event]) -> None:
        """The send failed: the events go back to the front of the queue for the next reader."""
        self._buffer._give_back(batch)

    def detach(self) -> None:
        self._buffer._detach(self)
