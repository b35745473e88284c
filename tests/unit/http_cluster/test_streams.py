"""A stream's feed: what the agent logged on this instance comes from memory in id order, though the
connection's ids are shared by all its streams (a stream's own ids have gaps); a gap memory cannot explain
is read from the log, once; each event is sent once."""

from __future__ import annotations

from typing import Any

from iac_code.cluster.events import Replay, StoredEvent, session_stream
from iac_code.http_cluster.streams import StreamFeed
from iac_code.safe_json import dumps_bytes
from iac_code.transports.http.events import MAX_BATCH_EVENTS, Event


class FakeLog:
    """The event log of one connection: (id, stream) pairs, and how often it was read."""

    def __init__(self) -> None:
        self.events: list[tuple[int, str]] = []
        self.reads = 0

    async def events_after(self, connection_id: str, stream: str, after: int | None) -> Replay:
        self.reads += 1
        start = after or 0
        kept = [StoredEvent(i, s, text(i).decode()) for i, s in self.events if s == stream and i > start]
        return Replay(kept, None, start)

    async def delivered(self, connection_id: str, stream: str, through: int) -> None:
        pass


def text(event_id: int) -> bytes:
    return dumps_bytes({"jsonrpc": "2.0", "method": "session/update", "params": {"n": event_id}})


S1 = session_stream("s1")


async def feed_for(key: str | None, log: FakeLog) -> tuple[StreamFeed, Any]:
    feed = StreamFeed("c1", key, log)  # a FakeLog for an EventLog
    reader = feed.open_reader(Replay([], None, 0))
    assert await reader.next_batch(0.01) == []  # nothing logged yet (one read)
    return feed, reader


def logged(log: FakeLog, feed: StreamFeed, first_id: int, streams: list[str]) -> None:
    """The agent here logged ids first_id… on these streams; the feed gets its share pushed."""
    log.events += [(first_id + n, stream) for n, stream in enumerate(streams)]
    mine = [Event(first_id + n, feed.key, text(first_id + n)) for n, s in enumerate(streams) if s == feed.stream]
    feed.push(first_id, first_id + len(streams) - 1, mine)


async def deliver(reader: Any) -> list[int]:
    batch = await reader.next_batch(0.01)
    reader.delivered(batch) if batch else None
    return [event.id for event in batch or []]


async def test_ids_taken_by_other_streams_are_passed_without_reading_the_log() -> None:
    log = FakeLog()
    feed, reader = await feed_for("s1", log)
    logged(log, feed, 1, [S1, "", S1])
    logged(log, feed, 4, ["", ""])  # none of these is the session's
    logged(log, feed, 6, [S1])
    assert await deliver(reader) == [1, 3, 6]
    logged(log, feed, 7, ["", S1])
    assert await deliver(reader) == [8]
    assert log.reads == 1 and feed.position == 8


async def test_a_gap_is_read_from_the_log_once_and_nothing_is_sent_twice() -> None:
    log = FakeLog()
    feed, reader = await feed_for(None, log)
    logged(log, feed, 1, [""])
    assert await deliver(reader) == [1]
    log.events += [(2, ""), (3, S1)]  # logged elsewhere (a session stream's events moved here, say)
    logged(log, feed, 4, ["", S1])
    assert await deliver(reader) == [2, 4]  # the gap sent the feed to the log, which has it all
    assert log.reads == 2
    logged(log, feed, 6, [""])
    assert await deliver(reader) == [6] and log.reads == 2


async def test_a_gap_holding_nothing_of_this_stream_costs_one_read_not_one_per_keepalive() -> None:
    log = FakeLog()
    feed, reader = await feed_for(None, log)
    log.events += [(1, S1)]  # elsewhere
    logged(log, feed, 2, [S1])
    assert await deliver(reader) == []  # a keepalive after reading the log
    assert await deliver(reader) == [] and log.reads == 2 and feed.position == 2


async def test_a_long_range_comes_in_batches() -> None:
    log = FakeLog()
    feed, reader = await feed_for(None, log)
    logged(log, feed, 1, [""] * (MAX_BATCH_EVENTS + 10))
    assert len(await deliver(reader)) == MAX_BATCH_EVENTS
    assert await deliver(reader) == list(range(MAX_BATCH_EVENTS + 1, MAX_BATCH_EVENTS + 11))
    assert log.reads == 1
