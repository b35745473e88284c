"""The shared event log: per-connection ids, replay after an id per stream, retention, lost ranges, wake-ups."""

from __future__ import annotations

import asyncio
import json

import pytest

from iac_code.cluster.connections import ConnectionOwnership, UnknownConnection
from iac_code.cluster.events import CONNECTION_STREAM, EventLog, Retention, session_stream
from iac_code.cluster.inbound import InboundQueue
from iac_code.cluster.session_streams import SessionStreams
from iac_code.cluster.wakeups import Wakeup
from iac_code.database.pool import Pool

from .wakeups import listening


def note(n: int) -> dict:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"n": n, "text": "é"}}


def numbers(replay) -> list[int]:
    return [event.message["params"]["n"] for event in replay.events]


@pytest.fixture
async def log(pool: Pool) -> EventLog:
    for connection_id in ("c1", "c2"):
        await ConnectionOwnership(pool, "a").open(connection_id)
    return EventLog(pool, "a", Retention(max_events=5, max_age=60))


async def test_ids_count_up_per_connection(log: EventLog) -> None:
    assert [await log.append("c1", note(n)) for n in range(3)] == [1, 2, 3]
    assert await log.append("c2", note(0)) == 1
    with pytest.raises(UnknownConnection):
        await log.append("nope", note(0))


S1 = session_stream("s1")


async def test_replay_returns_what_followed_an_id_on_one_stream(log: EventLog) -> None:
    await SessionStreams(log).open("c1", S1, None)
    for n in range(4):
        await log.append("c1", note(n), "s1" if n % 2 else None)
    replay = await log.events_after("c1", CONNECTION_STREAM, 0)
    assert [(e.event_id, e.stream) for e in replay.events] == [(1, ""), (3, "")] and replay.lost_through is None
    assert numbers(await log.events_after("c1", S1, 2)) == [3]
    assert (await log.events_after("c1", S1, 4)).events == []
    assert replay.events[0].message == note(0)


async def test_past_max_events_the_oldest_go_and_a_late_reader_learns_what_it_lost(log: EventLog) -> None:
    await SessionStreams(log).open("c1", S1, None)
    for n in range(1, 9):  # ids 1..8; the window keeps 4..8
        await log.append("c1", note(n), "s1" if n == 2 else None)
    replay = await log.events_after("c1", CONNECTION_STREAM, 0)
    assert numbers(replay) == [4, 5, 6, 7, 8] and replay.lost_through == 3
    assert (await log.events_after("c1", CONNECTION_STREAM, 3)).lost_through is None  # saw all it could
    assert (await log.events_after("c1", S1, 0)) == type(replay)([], 2, 0)  # its only event was trimmed
    assert (await log.events_after("c2", CONNECTION_STREAM, 0)).lost_through is None  # other connections untouched


async def test_events_older_than_max_age_are_trimmed(pool: Pool, log: EventLog) -> None:
    await log.append("c1", note(1))
    await asyncio.sleep(0.3)
    await log.append("c1", note(2))
    young = EventLog(pool, "a", Retention(max_events=5, max_age=0.2))
    assert await young.trim_expired() == 1
    replay = await log.events_after("c1", CONNECTION_STREAM, 0)
    assert numbers(replay) == [2] and replay.lost_through == 1


async def test_an_event_written_elsewhere_wakes_the_owner_and_only_it(pool: Pool, pg_url: str, log: EventLog) -> None:
    async with listening(pg_url, "a") as owner:
        await EventLog(pool, "b").append("c1", note(1), "s1")
        assert await owner.next() == Wakeup("event", "c1")
        await log.append("c1", note(2), "s1")  # the owner's own event: no need to wake it
        assert await owner.nothing()


async def test_without_last_event_id_a_reader_resumes_after_what_was_delivered(log: EventLog) -> None:
    for n in range(1, 4):
        await log.append("c1", note(n))
    assert numbers(await log.events_after("c1", CONNECTION_STREAM, None)) == [1, 2, 3]
    await log.delivered("c1", CONNECTION_STREAM, 2)
    await log.delivered("c1", CONNECTION_STREAM, 1)  # a late report never moves it back
    replay = await log.events_after("c1", CONNECTION_STREAM, None)
    assert numbers(replay) == [3] and replay.after == 2
    with pytest.raises(UnknownConnection):
        await log.events_after("nope", CONNECTION_STREAM, None)


async def test_a_host_appends_only_while_it_still_hosts_the_connection(pool: Pool, log: EventLog) -> None:
    assert await log.append("c1", note(1), as_host=True) == 1
    async with pool.connection() as conn:
        await conn.execute("UPDATE iac_connections SET host = 'b' WHERE connection_id = 'c1'")  # adopted by b
    with pytest.raises(UnknownConnection):
        await log.append("c1", note(2), as_host=True)
    assert await EventLog(pool, "b").append("c1", note(2), as_host=True) == 2


async def test_many_messages_take_consecutive_ids_in_one_statement(log: EventLog) -> None:
    await log.append("c1", note(0))
    assert (await log.append_many("c1", [note(n) for n in range(1, 4)])).last_id == 4
    replay = await log.events_after("c1", CONNECTION_STREAM, 0)
    assert [(e.event_id, e.message["params"]["n"]) for e in replay.events] == [(1, 0), (2, 1), (3, 2), (4, 3)]


async def test_a_batch_longer_than_the_window_keeps_its_end_and_reports_the_rest_lost(log: EventLog) -> None:
    assert (await log.append_many("c1", [note(n) for n in range(1, 9)])).last_id == 8
    replay = await log.events_after("c1", CONNECTION_STREAM, 0)
    assert numbers(replay) == [4, 5, 6, 7, 8] and replay.lost_through == 3


async def test_messages_holding_nul_characters_are_logged_and_replayed_unchanged(pool: Pool, log: EventLog) -> None:
    # PostgreSQL's text and jsonb cannot hold U+0000; an agent's message may (a model's reply, a tool's output).
    update = {"jsonrpc": "2.0", "method": "session/update", "params": {"text": "a\x00b", "\x00": ["\x00"]}}
    queue = InboundQueue(pool, "a")
    await queue.push("c1", {"jsonrpc": "2.0", "id": "r\x00", "method": "session/prompt", "params": {}})
    await queue.take("c1")  # in flight until answered
    answer = {"jsonrpc": "2.0", "id": "r\x00", "result": {"stopReason": "end_turn"}}
    assert (await log.append_many("c1", [update, answer])).last_id == 2
    replay = await log.events_after("c1", CONNECTION_STREAM, 0)
    assert [event.message for event in replay.events] == [update, answer]
    assert replay.events[0].text == json.dumps(update, ensure_ascii=False, separators=(",", ":"))  # the SSE data
    async with pool.connection() as conn:
        assert await (await conn.execute("SELECT * FROM iac_inflight")).fetchall() == []  # answered: not in flight
