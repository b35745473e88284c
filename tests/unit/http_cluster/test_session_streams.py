"""Session streams when two instances of the HTTP app share PostgreSQL (in this process, around the fake
agent): the session's messages go to its stream wherever it is held and wherever the agent runs, each
once across both streams; what a closing session stream did not deliver comes on the connection stream."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import httpx
import pytest
from tests.unit.transports.http.conftest import (
    SseReader,
    initialize,
    is_response,
    new_session,
    open_stream,
    post,
    prompt,
)
from tests.unit.transports.http.test_cluster import allow, created_session, instance

from iac_code.cluster.events import EventLog, session_stream
from iac_code.cluster.instances import InstanceRegistry
from iac_code.cluster.session_streams import SessionStreams
from iac_code.database.pool import open_pool

SESSION = "Acp-Session-Id"


def chunks(events: list[dict[str, Any]]) -> list[str]:
    return [
        e["data"]["params"]["update"]["content"]["text"] for e in events if e["data"].get("method") == "session/update"
    ]


async def settled(server) -> None:
    """What the instance started in the background (a closing session stream…) is done."""
    await asyncio.gather(*server.app.state.backend.node._background)


@contextlib.asynccontextmanager
async def held_by_another_instance(pg_url: str, holder: str, conn_id: str, session_id: str):
    """The session stream recorded as held by `holder`, which reads nothing and sent its last heartbeat now;
    yields `logged(n)`, which returns once `n` events are on that stream."""
    pool = await open_pool(pg_url, max_size=2)
    log = EventLog(pool, holder)
    stream = session_stream(session_id)
    await InstanceRegistry(pool, holder).heartbeat()
    await SessionStreams(log).open(conn_id, stream, None)

    async def logged(count: int) -> None:
        while len((await log.events_after(conn_id, stream, 0)).events) < count:
            await asyncio.sleep(0.02)

    try:
        yield logged
    finally:
        await pool.close()


async def nothing_more(events: SseReader) -> bool:
    """Nothing arrives on `events` for a moment (keepalives aside)."""
    try:
        await events.next_event(timeout=0.3)
    except TimeoutError:
        return True
    return False


@pytest.fixture
async def client():
    async with httpx.AsyncClient(timeout=10) as http:
        yield http


@pytest.fixture
async def pair(pg_url: str):
    async with instance(pg_url, "a") as a, instance(pg_url, "b") as b:
        yield a, b


async def start(client, host, pair) -> tuple[str, str]:
    """A connection hosted by `host`, and a session of it."""
    conn_id = await initialize(client, host.url)
    async with open_stream(client, host.url, conn_id) as events:
        await post(client, host.url, conn_id, new_session())
        return conn_id, await created_session(events)


@pytest.mark.parametrize("host_name", ["a", "b"])
async def test_a_prompts_messages_come_on_the_session_stream_held_elsewhere_and_nothing_twice(pair, client, host_name):
    a, b = pair
    host = {"a": a, "b": b}[host_name]
    conn_id, session_id = await start(client, host, pair)
    async with (
        open_stream(client, a.url, conn_id) as connection_events,
        open_stream(client, b.url, conn_id, **{SESSION: session_id}) as session_events,
    ):
        await post(client, a.url, conn_id, prompt(session_id, "count 3"))
        on_session = await session_events.until(is_response(3))
        assert chunks(on_session) == ["chunk 0", "chunk 1", "chunk 2"]
        await post(client, b.url, conn_id, {"jsonrpc": "2.0", "id": 9, "method": "session/list", "params": {}})
        on_connection = await connection_events.until(is_response(9))
        assert [e["data"].get("id") for e in on_connection] == [9]  # the session's traffic came only there
    ids = [int(e["id"]) for e in on_session + on_connection]
    assert ids == sorted(set(ids))


async def test_a_permission_request_comes_on_the_session_stream_and_its_answer_goes_through(pair, client):
    a, b = pair
    conn_id, session_id = await start(client, a, pair)
    async with open_stream(client, b.url, conn_id, **{SESSION: session_id}) as session_events:
        await post(client, b.url, conn_id, prompt(session_id, "ask"))
        asked = (await session_events.until(lambda d: d.get("method") == "session/request_permission"))[-1]["data"]
        await post(client, b.url, conn_id, allow(asked))
        assert chunks(await session_events.until(is_response(3))) == ["outcome allow-once"]


async def test_closing_the_session_stream_mid_turn_sends_the_rest_to_the_connection_stream(pair, client):
    a, b = pair
    conn_id, session_id = await start(client, a, pair)
    async with open_stream(client, a.url, conn_id) as connection_events:
        async with open_stream(client, b.url, conn_id, **{SESSION: session_id}) as session_events:
            await post(client, a.url, conn_id, prompt(session_id, "ask"))
            asked = (await session_events.until(lambda d: d.get("method") == "session/request_permission"))[-1]
        await settled(b)  # the session stream is closed
        await post(client, a.url, conn_id, allow(asked["data"]))
        rest = await connection_events.until(is_response(3))
    assert chunks(rest) == ["outcome allow-once"] and int(rest[0]["id"]) > int(asked["id"])


async def test_a_session_stream_reconnecting_elsewhere_resumes_after_its_last_event_id(pair, client):
    a, b = pair
    conn_id, session_id = await start(client, a, pair)
    async with open_stream(client, a.url, conn_id) as connection_events:
        async with open_stream(client, a.url, conn_id, **{SESSION: session_id}) as first:
            await post(client, a.url, conn_id, prompt(session_id, "count 40"))
            before = [await first.next_event() for _ in range(5)]
            headers = {SESSION: session_id, "Last-Event-ID": before[-1]["id"]}
            async with open_stream(client, b.url, conn_id, **headers) as second:
                after = await second.until(is_response(3), timeout=10)
                with pytest.raises(EOFError):  # superseded: the stale reader ends
                    while True:
                        await first.next_event()
        assert await nothing_more(connection_events)
    assert chunks(before) + chunks(after) == [f"chunk {n}" for n in range(40)]
    ids = [int(e["id"]) for e in before + after]
    assert ids == list(range(ids[0], ids[0] + len(ids)))


async def test_without_last_event_id_a_session_stream_opens_from_now_on(pair, client):
    a, b = pair
    conn_id, session_id = await start(client, a, pair)
    async with open_stream(client, a.url, conn_id) as connection_events:
        await post(client, a.url, conn_id, prompt(session_id, "count 2"))
        assert len(await connection_events.until(is_response(3))) == 3  # no session stream yet: all here
        async with open_stream(client, b.url, conn_id, **{SESSION: session_id}) as session_events:
            await post(client, a.url, conn_id, prompt(session_id, "count 1", request_id=4))
            assert chunks(await session_events.until(is_response(4))) == ["chunk 0"]  # not the earlier ones


async def test_closing_the_connection_ends_its_session_streams_everywhere(pair, client):
    a, b = pair
    conn_id, session_id = await start(client, a, pair)
    async with open_stream(client, b.url, conn_id, **{SESSION: session_id}) as session_events:
        assert (await client.delete(f"{a.url}/acp", headers={"Acp-Connection-Id": conn_id})).status_code == 200
        with pytest.raises(EOFError):
            while True:
                await session_events.next_event(timeout=5)


async def test_a_session_stream_held_by_a_silent_instance_is_moved_after_the_grace(pg_url, client):
    async with instance(pg_url, "a") as a:
        a.app.state.backend.sessions.grace = 3600
        conn_id, session_id = await start(client, a, (a,))
        async with held_by_another_instance(pg_url, "gone", conn_id, session_id) as logged:
            async with open_stream(client, a.url, conn_id) as connection_events:
                await post(client, a.url, conn_id, prompt(session_id, "count 2"))
                await logged(3)  # the updates and the answer went to the silent instance's stream…
                a.app.state.backend.sessions.grace = 0
                moved = await connection_events.until(is_response(3), timeout=10)  # … until the grace ran out
    assert chunks(moved) == ["chunk 0", "chunk 1"]


async def test_a_session_stream_held_here_in_the_database_and_read_nowhere_is_closed_here(pg_url, client):
    async with instance(pg_url, "b") as b:
        b.app.state.backend.sessions.grace = 3600
        conn_id, session_id = await start(client, b, (b,))
        async with held_by_another_instance(pg_url, "a", conn_id, session_id) as logged:  # a before it restarted
            async with open_stream(client, b.url, conn_id) as connection_events:
                await post(client, b.url, conn_id, prompt(session_id, "count 2"))
                await logged(3)
                async with instance(pg_url, "a"):  # a, back, finds the stream it no longer reads and closes it
                    moved = await connection_events.until(is_response(3), timeout=10)
    assert chunks(moved) == ["chunk 0", "chunk 1"]


async def test_a_new_reader_on_the_same_instance_takes_the_stream_over_and_the_stale_ones_end_closes_nothing(
    pair, client
):
    a, _ = pair
    conn_id, session_id = await start(client, a, pair)
    async with open_stream(client, a.url, conn_id) as connection_events:
        async with open_stream(client, a.url, conn_id, **{SESSION: session_id}) as first:
            await post(client, a.url, conn_id, prompt(session_id, "ask"))
            asked = (await first.until(lambda d: d.get("method") == "session/request_permission"))[-1]["data"]
            async with open_stream(client, a.url, conn_id, **{SESSION: session_id}) as second:  # no Last-Event-ID
                with pytest.raises(EOFError):
                    while True:
                        await first.next_event()
                await settled(a)  # what the stale response's end started is done
                await post(client, a.url, conn_id, allow(asked))
                assert chunks(await second.until(is_response(3))) == ["outcome allow-once"]
        assert await nothing_more(connection_events)
