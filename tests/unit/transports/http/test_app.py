"""The Starlette app on a live in-process uvicorn, driven by the fake SDK agent."""

from __future__ import annotations

import asyncio
import logging

from tests.unit.transports.http.conftest import (
    INIT,
    initialize,
    is_response,
    live_server,
    new_session,
    open_stream,
    post,
    prompt,
)

from iac_code.transports.http.app import HttpOptions
from iac_code.transports.http.events import EventLimits


async def _never_answers(transport) -> None:
    await asyncio.Event().wait()


async def _ends_at_once(transport) -> None:
    return None


async def test_initialize_timeout_is_504_and_an_agent_that_ends_is_502(client):
    async with live_server(HttpOptions(initialize_timeout=0.2), serve=_never_answers) as server:
        response = await client.post(f"{server.url}/acp", json=INIT)
        assert response.status_code == 504 and "initialize" in response.json()["error"]
    async with live_server(serve=_ends_at_once) as server:
        assert (await client.post(f"{server.url}/acp", json=INIT)).status_code == 502


async def test_messages_before_the_stream_opens_are_kept(server, client):
    conn_id = await initialize(client, server.url)
    await post(client, server.url, conn_id, new_session())
    await asyncio.sleep(0.1)
    async with open_stream(client, server.url, conn_id) as events:
        first = await events.next_event()
    assert first["id"] == "1" and first["data"]["result"]["sessionId"]


async def test_session_stream_carries_its_sessions_traffic_and_nothing_is_sent_twice(server, client):
    conn_id = await initialize(client, server.url)
    async with open_stream(client, server.url, conn_id) as connection_events:
        await post(client, server.url, conn_id, new_session())
        session_id = (await connection_events.until(is_response(2)))[-1]["data"]["result"]["sessionId"]
        async with open_stream(client, server.url, conn_id, **{"Acp-Session-Id": session_id}) as session_events:
            await asyncio.sleep(0.05)  # the session reader is attached
            await post(client, server.url, conn_id, prompt(session_id, "count 3"), **{"Acp-Session-Id": session_id})
            on_session = await session_events.until(is_response(3))
            assert [e["data"].get("method") for e in on_session] == ["session/update"] * 3 + [None]
            await post(client, server.url, conn_id, {"jsonrpc": "2.0", "id": 9, "method": "session/list", "params": {}})
            # The connection stream got none of the session's traffic, only the session/list answer.
            assert (await connection_events.next_event())["data"]["id"] == 9


async def test_dropped_session_stream_sends_later_events_to_the_connection_stream(server, client):
    conn_id = await initialize(client, server.url)
    async with open_stream(client, server.url, conn_id) as connection_events:
        await post(client, server.url, conn_id, new_session())
        session_id = (await connection_events.until(is_response(2)))[-1]["data"]["result"]["sessionId"]
        async with open_stream(client, server.url, conn_id, **{"Acp-Session-Id": session_id}):
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.05)  # the disconnect is noticed without waiting for a write
        await post(client, server.url, conn_id, prompt(session_id, "count 2"))
        seen = await connection_events.until(is_response(3))
    assert len(seen) == 3


async def test_load_on_a_new_connection_then_prompt_routes_by_the_requests_session(server, client):
    conn_id = await initialize(client, server.url)
    async with open_stream(client, server.url, conn_id) as connection_events:
        load = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/load",
            "params": {"sessionId": "old", "cwd": "/tmp", "mcpServers": []},
        }
        await post(client, server.url, conn_id, load)
        replay = await connection_events.until(is_response(2))
        assert replay[0]["data"]["params"]["update"]["content"]["text"] == "history of old"
        async with open_stream(client, server.url, conn_id, **{"Acp-Session-Id": "old"}) as session_events:
            await asyncio.sleep(0.05)
            await post(client, server.url, conn_id, prompt("old", "hello"))
            answer = await session_events.until(is_response(3))
    assert answer[-1]["data"]["result"]["stopReason"] == "end_turn"
    assert (await client.get(f"{server.url}/health")).json()["sessions"] == 1


async def test_permission_answer_posted_with_only_the_connection_id(server, client):
    conn_id = await initialize(client, server.url)
    async with open_stream(client, server.url, conn_id) as events:
        await post(client, server.url, conn_id, new_session())
        session_id = (await events.until(is_response(2)))[-1]["data"]["result"]["sessionId"]
        await post(client, server.url, conn_id, prompt(session_id, "ask"))
        asked = (await events.until(lambda d: d.get("method") == "session/request_permission"))[-1]["data"]
        answer = {
            "jsonrpc": "2.0",
            "id": asked["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": "reject-once"}},
        }
        assert (await post(client, server.url, conn_id, answer)).status_code == 202
        rest = await events.until(is_response(3))
    assert rest[0]["data"]["params"]["update"]["content"]["text"] == "outcome reject-once"


async def test_keepalive_comments_while_idle(client):
    async with live_server(HttpOptions(keepalive_seconds=0.05)) as server:
        conn_id = await initialize(client, server.url)
        async with open_stream(client, server.url, conn_id) as events:
            await asyncio.sleep(0.3)
            await post(client, server.url, conn_id, new_session())
            await events.until(is_response(2))
            assert ": keepalive" in events.comments


async def test_a_client_that_stops_reading_is_closed_and_its_turn_cancelled(client, caplog):
    limits = EventLimits(pending_events=50, stall_seconds=0.2)
    async with live_server(HttpOptions(limits=limits)) as server:
        conn_id = await initialize(client, server.url)
        await post(client, server.url, conn_id, new_session())
        await asyncio.sleep(0.1)
        with caplog.at_level(logging.WARNING):
            async with open_stream(client, server.url, conn_id) as events:
                session_id = (await events.until(is_response(2)))[-1]["data"]["result"]["sessionId"]
            await post(client, server.url, conn_id, prompt(session_id, "count 500"))
            for _ in range(100):
                if server.registry.get(conn_id) is None:
                    break
                await asyncio.sleep(0.02)
        assert server.registry.get(conn_id) is None
        assert "not reading its event stream" in caplog.text
        assert (await post(client, server.url, conn_id, prompt(session_id, "x"))).status_code == 400


async def test_idle_connections_are_reaped(client):
    async with live_server(HttpOptions(idle_timeout=0.1)) as server:
        conn_id = await initialize(client, server.url)
        await asyncio.sleep(0.4)
        assert server.registry.get(conn_id) is None


async def test_delete_cancels_running_turns_and_forgets_the_connection(server, client):
    conn_id = await initialize(client, server.url)
    async with open_stream(client, server.url, conn_id) as events:
        await post(client, server.url, conn_id, new_session())
        session_id = (await events.until(is_response(2)))[-1]["data"]["result"]["sessionId"]
        await post(client, server.url, conn_id, prompt(session_id, "wait"))
        await asyncio.sleep(0.05)
        conn = server.registry.get(conn_id)
        response = await client.delete(f"{server.url}/acp", headers={"Acp-Connection-Id": conn_id})
        assert response.status_code == 200
        assert conn.task.done()
        health = (await client.get(f"{server.url}/health")).json()
    assert health["connections"] == 0 and health["status"] == "ok" and health["version"]


async def test_connections_past_the_limit_are_refused_until_one_closes(client):
    async with live_server(HttpOptions(max_connections=2)) as server:
        first = await initialize(client, server.url)
        await initialize(client, server.url)
        refused = await client.post(f"{server.url}/acp", json=INIT)
        assert refused.status_code == 503 and "too many connections" in refused.json()["error"]
        await client.delete(f"{server.url}/acp", headers={"Acp-Connection-Id": first})
        assert await initialize(client, server.url)
