"""Two instances of the HTTP app sharing one PostgreSQL, in this process, around the fake agent:
any request may go to either, and they behave as one server."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import httpx
import psycopg
import pytest
from tests.unit.transports.http.conftest import (
    LiveServer,
    initialize,
    is_response,
    live_server,
    new_session,
    open_stream,
    post,
    prompt,
)

from iac_code.cluster.connections import ConnectionOwnership
from iac_code.cluster.inbound import InboundQueue
from iac_code.cluster.node import ClusterNode
from iac_code.config import Settings
from iac_code.database.pool import open_pool
from iac_code.http_cluster.backend import ClusterBackend
from iac_code.http_cluster.principals import ConnectionPrincipals
from iac_code.principals import LOCAL
from iac_code.transports.http.app import HttpOptions
from iac_code.transports.http.events import EventLimits

from .fake_agent import serve_fake

HEARTBEAT = 0.2


async def created_session(events, request_id: int = 2) -> str:
    return (await events.until(is_response(request_id)))[-1]["data"]["result"]["sessionId"]


def allow(asked: dict) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": asked["id"],
        "result": {"outcome": {"outcome": "selected", "optionId": "allow-once"}},
    }


@contextlib.asynccontextmanager
async def instance(pg_url: str, name: str, options: HttpOptions | None = None) -> AsyncIterator[LiveServer]:
    options = options or HttpOptions()
    settings = Settings(database_url=pg_url, instance_id=name, heartbeat_seconds=HEARTBEAT, lease_seconds=1.0)
    node = await ClusterNode.open(settings)
    backend = ClusterBackend(
        node,
        serve_fake,
        idle_timeout=options.idle_timeout,
        max_connections=options.max_connections,
        limits=options.limits,
    )
    async with live_server(options, backend=backend) as server:
        yield server


@pytest.fixture
async def pair(pg_url: str) -> AsyncIterator[tuple[LiveServer, LiveServer]]:
    async with instance(pg_url, "a") as a, instance(pg_url, "b") as b:
        yield a, b


async def test_requests_for_one_connection_are_served_by_either_instance(pair, client):
    a, b = pair
    response = await client.post(f"{a.url}/acp", json={**new_session(1), "method": "initialize", "params": {}})
    assert response.headers["iac-instance-id"] == "a"
    conn_id = response.headers["acp-connection-id"]
    async with open_stream(client, b.url, conn_id) as events:  # the stream is held by b, the agent runs on a
        assert (await post(client, b.url, conn_id, new_session())).headers["iac-instance-id"] == "b"
        session_id = await created_session(events)
        await post(client, a.url, conn_id, prompt(session_id, "count 3"))
        seen = await events.until(is_response(3))
    assert [e["data"]["params"]["update"]["content"]["text"] for e in seen[:-1]] == ["chunk 0", "chunk 1", "chunk 2"]
    assert [int(e["id"]) for e in seen] == [2, 3, 4, 5]
    assert a.registry.get(conn_id) is not None and b.registry.get(conn_id) is None


async def test_a_permission_asked_through_one_instance_is_answered_through_the_other(pair, client):
    a, b = pair
    conn_id = await initialize(client, b.url)
    async with open_stream(client, a.url, conn_id) as events:
        await post(client, a.url, conn_id, new_session())
        session_id = await created_session(events)
        await post(client, a.url, conn_id, prompt(session_id, "ask"))
        asked = (await events.until(lambda d: d.get("method") == "session/request_permission"))[-1]["data"]
        assert (await post(client, a.url, conn_id, allow(asked))).status_code == 202
        rest = await events.until(is_response(3))
    assert rest[0]["data"]["params"]["update"]["content"]["text"] == "outcome allow-once"


async def test_a_stream_reconnecting_elsewhere_gets_exactly_what_it_missed_and_the_stale_one_ends(pair, client):
    a, b = pair
    conn_id = await initialize(client, a.url)
    async with open_stream(client, a.url, conn_id) as first:
        await post(client, a.url, conn_id, new_session())
        session_id = await created_session(first)
        await post(client, b.url, conn_id, prompt(session_id, "count 20"))
        before = [await first.next_event() for _ in range(5)]
        async with open_stream(client, b.url, conn_id, **{"Last-Event-ID": before[-1]["id"]}) as second:
            after = await second.until(is_response(3))
            with pytest.raises(EOFError):  # a's stream was claimed away: it ends
                while True:
                    await first.next_event()
    ids = [int(e["id"]) for e in before + after]
    assert ids == list(range(ids[0], ids[0] + len(ids))) and len(ids) == 21


async def test_without_last_event_id_a_stream_gets_what_was_not_delivered_yet(pair, client):
    a, b = pair
    conn_id = await initialize(client, a.url)
    await post(client, b.url, conn_id, new_session())
    await asyncio.sleep(0.2)
    async with open_stream(client, b.url, conn_id) as events:
        first = await events.next_event()
        assert first["id"] == "1" and first["data"]["result"]["sessionId"]
        session_id = first["data"]["result"]["sessionId"]
    await post(client, b.url, conn_id, prompt(session_id, "count 1"))
    await asyncio.sleep(0.2)
    async with open_stream(client, a.url, conn_id) as events:  # delivered_through says where to resume
        assert [e["id"] for e in await events.until(is_response(3))] == ["2", "3"]


async def test_old_events_lost_from_the_window_are_announced(pg_url, client):
    async with instance(pg_url, "a") as a:
        a.app.state.backend.log.retention = type(a.app.state.backend.log.retention)(max_events=3, max_age=60)
        conn_id = await initialize(client, a.url)
        await post(client, a.url, conn_id, new_session())
        async with open_stream(client, a.url, conn_id) as events:
            session_id = await created_session(events)
            await post(client, a.url, conn_id, prompt(session_id, "count 5"))
            await events.until(is_response(3))
        async with open_stream(client, a.url, conn_id, **{"Last-Event-ID": "1"}) as events:
            lost = await events.next_event()
            assert lost["event"] == "lost" and lost["data"]["lostThrough"] == 4
            assert [e["id"] for e in await events.until(is_response(3))] == ["5", "6", "7"]


async def test_delete_on_another_instance_stops_the_agent_and_forgets_the_connection(pair, client):
    a, b = pair
    conn_id = await initialize(client, a.url)
    async with open_stream(client, a.url, conn_id) as events:
        await post(client, a.url, conn_id, new_session())
        session_id = await created_session(events)
        await post(client, b.url, conn_id, prompt(session_id, "wait"))
        await asyncio.sleep(0.1)
        assert (await client.delete(f"{b.url}/acp", headers={"Acp-Connection-Id": conn_id})).status_code == 200
        with pytest.raises(EOFError):
            while True:
                await events.next_event(timeout=2)
    for _ in range(50):
        if a.registry.get(conn_id) is None:
            break
        await asyncio.sleep(0.02)
    assert a.registry.get(conn_id) is None
    for server in (a, b):
        assert (await post(client, server.url, conn_id, prompt(session_id, "x"))).status_code == 400
        assert (await client.delete(f"{server.url}/acp", headers={"Acp-Connection-Id": conn_id})).status_code == 400


async def test_the_connection_of_a_dead_host_is_adopted_and_its_unanswered_request_answered(pg_url, client):
    pool = await open_pool(pg_url, max_size=2)
    try:  # a host that took prompt 5 and died: only its rows remain
        await ConnectionOwnership(pool, "dead").open("c-dead")
        await ConnectionPrincipals(pool).record("c-dead", LOCAL)  # who opened it: the only one it serves
        await InboundQueue(pool, "dead").push("c-dead", prompt("s", "hello", request_id=5))
        await InboundQueue(pool, "dead").take("c-dead")
    finally:
        await pool.close()
    async with instance(pg_url, "b") as b:
        async with open_stream(client, b.url, "c-dead") as events:
            answered = (await events.until(is_response(5), timeout=5))[-1]["data"]
            assert answered["error"]["code"] == -32603 and "load the session" in answered["error"]["data"]["reason"]
            await post(client, b.url, "c-dead", new_session(6))
            assert (await events.until(is_response(6)))[-1]["data"]["result"]["sessionId"]
        assert b.registry.get("c-dead") is not None


async def test_health_names_the_instance_and_the_database(pair, client):
    a, _ = pair
    health = (await client.get(f"{a.url}/health")).json()
    assert health["status"] == "ok" and health["instance"] == "a" and health["database"] == "ok"


async def test_connections_idle_everywhere_expire(pg_url, client):
    async with instance(pg_url, "a", HttpOptions(idle_timeout=0.3)) as a:
        conn_id = await initialize(client, a.url)
        await asyncio.sleep(1.0)
        assert a.registry.get(conn_id) is None
        assert (await post(client, a.url, conn_id, new_session())).status_code == 400


async def test_a_client_not_reading_never_blocks_the_agent(pg_url, client):
    limits = EventLimits(pending_events=5, stall_seconds=0.2)  # local bounds do not apply: the log holds events
    async with instance(pg_url, "a", HttpOptions(limits=limits)) as a:
        conn_id = await initialize(client, a.url)
        await post(client, a.url, conn_id, new_session())
        await asyncio.sleep(0.2)
        async with open_stream(client, a.url, conn_id) as events:
            session_id = await created_session(events)
        await post(client, a.url, conn_id, prompt(session_id, "count 50"))
        await asyncio.sleep(0.5)
        async with open_stream(client, a.url, conn_id) as events:
            assert len(await events.until(is_response(3))) == 51


async def test_requests_get_503_while_the_database_is_unreachable(pg_url, client, postgres_server):
    async with instance(pg_url, "a") as a:
        conn_id = await initialize(client, a.url)
        postgres_server.stop()
        try:
            assert (await post(client, a.url, conn_id, new_session())).status_code == 503
            assert (
                await client.post(
                    f"{a.url}/acp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
                )
            ).status_code == 503
            health = await client.get(f"{a.url}/health")
            assert health.status_code == 503 and health.json()["database"] == "unreachable"
        finally:
            postgres_server.start()
        for _ in range(100):
            with contextlib.suppress(httpx.HTTPError):
                if (await post(client, a.url, conn_id, new_session())).status_code == 202:
                    break
            await asyncio.sleep(0.1)
        async with open_stream(client, a.url, conn_id) as events:
            assert await created_session(events)
    with psycopg.connect(pg_url) as conn:  # the instance deregistered on the way out
        assert conn.execute("SELECT count(*) FROM iac_instances").fetchone() == (0,)
