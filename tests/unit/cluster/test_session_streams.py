"""Session streams in the shared log: routing decided with the append, opening, closing (moving what was not
delivered), superseding, stranded streams, and the race of an append with a close."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
import pytest

from iac_code.cluster.connections import ConnectionOwnership, UnknownConnection
from iac_code.cluster.events import CONNECTION_STREAM, EventLog, Retention, session_stream
from iac_code.cluster.instances import InstanceRegistry
from iac_code.cluster.session_streams import HeldStream, SessionStreams
from iac_code.cluster.wakeups import Wakeup
from iac_code.database.pool import Pool

from .wakeups import listening

S1, S2 = session_stream("s1"), session_stream("s2")


def note(n: int, session: str = "s1") -> dict:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "n": n}}


async def on(log: EventLog, stream: str, after: int = 0) -> list[tuple[int, int]]:
    """(event id, n) of the events kept on `stream` after `after`."""
    replay = await log.events_after("c1", stream, after)
    return [(e.event_id, e.message["params"]["n"]) for e in replay.events]


@pytest.fixture
async def log(pool: Pool) -> EventLog:
    await ConnectionOwnership(pool, "a").open("c1")  # a hosts and owns it
    return EventLog(pool, "a", Retention(max_events=100, max_age=60))


@pytest.fixture
def here(log: EventLog) -> SessionStreams:
    return SessionStreams(log)


@pytest.fixture
def there(pool: Pool) -> SessionStreams:
    return SessionStreams(EventLog(pool, "b", Retention(max_events=100, max_age=60)))


async def test_a_sessions_messages_go_to_its_stream_only_while_it_is_open(log: EventLog, there: SessionStreams):
    await log.append("c1", note(1), "s1")
    assert await there.open("c1", S1, None) == 1  # from now on
    appended = await log.append_many(
        "c1", [note(2), note(3, "s2"), note(4), {"jsonrpc": "2.0", "id": 7}], ["s1", "s2", "s1", None]
    )
    assert appended.last_id == 5 and appended.streams == [S1, "", S1, ""]
    assert await on(log, S1) == [(2, 2), (4, 4)]
    assert [e.event_id for e in (await log.events_after("c1", CONNECTION_STREAM, 0)).events] == [1, 3, 5]


async def test_a_session_id_holding_nul_is_a_stream_like_any_other(log: EventLog, here: SessionStreams):
    await here.open("c1", session_stream("a\x00b"), None)
    assert (await log.append_many("c1", [note(1, "a\x00b")], ["a\x00b"])).streams == [session_stream("a\x00b")]
    assert await on(log, session_stream("a\x00b")) == [(1, 1)]


async def test_the_holder_is_woken_for_its_streams_events_and_the_owner_only_for_its_own(pg_url, log: EventLog, there):
    await there.open("c1", S1, None)
    async with listening(pg_url, "b") as holder, listening(pg_url, "c") as owner:
        await ConnectionOwnership(log.pool, "c").claim("c1")
        await log.append("c1", note(1), "s1")
        assert await holder.next() == Wakeup("event", "c1")
        assert await owner.nothing()
        await log.append("c1", note(2, "s2"), "s2")
        assert await owner.next() == Wakeup("event", "c1")
        assert await holder.nothing()


async def test_closing_moves_what_was_not_delivered_to_the_connection_stream_in_order(log: EventLog, here):
    await here.open("c1", S1, None)
    await log.append_many("c1", [note(1), note(2, "s2"), note(3), note(4)], ["s1", "s2", "s1", "s1"])
    await log.delivered("c1", S1, 1)
    assert await here.close("c1", S1, "a", after=1) == 2
    assert await on(log, CONNECTION_STREAM) == [(2, 2), (5, 3), (6, 4)]  # new ids, after what was there
    assert await on(log, S1) == [(1, 1)]  # delivered: kept for a reconnect with an older Last-Event-ID
    assert (await log.events_after("c1", S1, 0)).lost_through is None  # moved is not lost
    await log.append("c1", note(7), "s1")
    assert await on(log, CONNECTION_STREAM, 6) == [(7, 7)]  # closed: the session's messages come here again
    assert await here.close("c1", S1, "a") is None  # closed already


async def test_a_close_without_a_position_moves_from_the_one_recorded(log: EventLog, here: SessionStreams) -> None:
    await here.open("c1", S1, None)
    await log.append_many("c1", [note(1), note(2), note(3)], ["s1"] * 3)
    await log.delivered("c1", S1, 2)
    await log.delivered("c1", S1, 1)  # a late report never moves it back
    assert await here.close("c1", S1, "a") == 1
    assert await on(log, CONNECTION_STREAM) == [(4, 3)]


async def test_only_the_holder_records_a_position_and_a_newer_open_elsewhere_supersedes(
    pg_url, log: EventLog, here: SessionStreams, there: SessionStreams
) -> None:
    await here.open("c1", S1, None)
    await log.append_many("c1", [note(1), note(2), note(3)], ["s1"] * 3)
    await log.delivered("c1", S1, 1)
    async with listening(pg_url, "a") as previous:
        assert await there.open("c1", S1, None) == 1  # no Last-Event-ID: where the previous holder stopped
        assert await previous.next() == Wakeup("claimed", "c1")
    await log.delivered("c1", S1, 3)  # a's late report: not the holder any more
    assert await here.close("c1", S1, "a", after=3) is None  # nor may it close b's stream
    assert await here.held_here(["c1"]) == set() and await there.held_here(["c1"]) == {("c1", S1)}
    assert await there.close("c1", S1, "b") == 2  # b delivered nothing yet: from 1
    assert await on(log, CONNECTION_STREAM) == [(4, 2), (5, 3)]


async def test_replay_after_last_event_id_per_stream(log: EventLog, here: SessionStreams) -> None:
    await here.open("c1", S1, None)
    await here.open("c1", S2, None)
    sessions = ["s1", "s2"] * 3  # s1: ids 1, 3, 5; s2: 2, 4, 6
    await log.append_many("c1", [note(n, session) for n, session in enumerate(sessions, 1)], sessions)
    assert await here.open("c1", S1, 3) == 3  # a reconnect with Last-Event-ID 3
    assert await on(log, S1, 3) == [(5, 5)] and await on(log, S2, 2) == [(4, 4), (6, 6)]


async def test_trims_are_told_per_stream(pool: Pool, here: SessionStreams) -> None:
    small = EventLog(pool, "a", Retention(max_events=3, max_age=60))
    await here.open("c1", S1, None)
    await small.append_many("c1", [note(n) for n in range(1, 7)], ["s1", None, "s1", None, None, "s1"])
    s1 = await small.events_after("c1", S1, 0)
    assert [e.event_id for e in s1.events] == [6] and s1.lost_through == 3
    connection = await small.events_after("c1", CONNECTION_STREAM, 0)
    assert [e.event_id for e in connection.events] == [4, 5] and connection.lost_through == 2


async def test_opening_a_stream_of_an_unknown_connection_fails(here: SessionStreams) -> None:
    with pytest.raises(UnknownConnection):
        await here.open("nope", S1, None)
    assert await here.close("nope", S1, "a") is None


async def test_stranded_streams_are_those_of_silent_holders_and_this_instances(pool: Pool, log, here, there) -> None:
    await InstanceRegistry(pool, "b").heartbeat()
    await here.open("c1", S1, None)
    await there.open("c1", S2, None)
    assert await here.stranded(grace=30) == [HeldStream("c1", S1, "a")]  # b is alive; a must look at its own
    await asyncio.sleep(0.3)
    assert await there.stranded(grace=0.2) == [HeldStream("c1", S1, "a"), HeldStream("c1", S2, "b")]


# -- the race of an append with a close, both waiting on the connection's row ------------------------------


@asynccontextmanager
async def row_held(pg_url: str) -> AsyncIterator[psycopg.AsyncConnection]:
    """Another transaction holding the connection's row, so that what follows queues behind it in order."""
    async with await psycopg.AsyncConnection.connect(pg_url) as blocker:
        await blocker.execute("SELECT 1 FROM iac_connections WHERE connection_id = 'c1' FOR UPDATE")
        yield blocker


async def waiting_on_locks(pool: Pool, count: int) -> None:
    async with pool.connection() as conn:
        while True:
            query = (
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
            )
            row = await (await conn.execute(query)).fetchone()
            if row and row[0] >= count:
                return
            await asyncio.sleep(0.01)


async def test_an_append_waiting_while_a_close_commits_goes_to_the_connection_stream(
    pg_url: str, pool: Pool, log: EventLog, here: SessionStreams
) -> None:
    await here.open("c1", S1, None)
    await log.append("c1", note(1), "s1")
    async with row_held(pg_url) as blocker:
        closing = asyncio.create_task(here.close("c1", S1, "a", after=0))
        await waiting_on_locks(pool, 1)
        appending = asyncio.create_task(log.append("c1", note(2), "s1"))
        await waiting_on_locks(pool, 2)
        await blocker.commit()
    assert await closing == 1 and await appending == 3  # the close moved 1 (as id 2), then the append came
    assert await on(log, CONNECTION_STREAM) == [(2, 1), (3, 2)] and await on(log, S1) == []


async def test_an_append_committing_while_a_close_waits_is_moved_by_it(
    pg_url: str, pool: Pool, log: EventLog, here: SessionStreams
) -> None:
    await here.open("c1", S1, None)
    async with row_held(pg_url) as blocker:
        appending = asyncio.create_task(log.append("c1", note(1), "s1"))
        await waiting_on_locks(pool, 1)
        closing = asyncio.create_task(here.close("c1", S1, "a", after=0))
        await waiting_on_locks(pool, 2)
        await blocker.commit()
    assert await appending == 1 and await closing == 1
    assert await on(log, CONNECTION_STREAM) == [(2, 1)] and await on(log, S1) == []
