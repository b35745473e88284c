"""The WebSocket profile's edges against the in-process server and the fake agent: limits, refusals, take-overs."""

from __future__ import annotations

import pytest
from tests.e2e.http.client import INIT
from tests.e2e.http.ws_client import acp_socket
from tests.unit.transports.http.conftest import (
    initialize,
    live_server,
    new_session,
    open_stream,
    post,
    prompt,
)
from websockets.exceptions import ConnectionClosed, InvalidStatus

from iac_code.transports.http.app import HttpOptions
from iac_code.transports.http.events import EventLimits
from iac_code.transports.http.websocket import EVENTS_LOST_METHOD


def is_response(request_id: int):
    return lambda message: message.get("id") == request_id and "method" not in message


async def _closed(socket) -> int:
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            await socket.next()
    return closed.value.rcvd.code


async def test_no_initialize_in_time_closes_with_policy_violation(client):
    async with live_server(HttpOptions(initialize_timeout=0.2)) as server:
        async with acp_socket(f"{server.url}/acp", initialize=False) as socket:
            assert await _closed(socket) == 1008
            assert len(server.registry) == 0


async def test_a_request_the_backend_refuses_gets_an_error_with_its_id(client):
    async with live_server(HttpOptions(max_requests_in_flight=1)) as server:
        async with acp_socket(f"{server.url}/acp") as socket:
            session_id = await _new_session(socket)
            await socket.send(prompt(session_id, "wait", request_id=3))
            await socket.send(new_session(4))
            refused = (await socket.until(is_response(4), 5))[-1]
            assert refused["error"]["code"] == -32000 and refused["error"]["data"]["status"] == 429
            assert "in flight" in refused["error"]["data"]["reason"]


async def test_initialize_refused_for_lack_of_room_is_answered_then_closed(client):
    async with live_server(HttpOptions(max_connections=1)) as server:
        await initialize(client, server.url)
        async with acp_socket(f"{server.url}/acp", initialize=False) as socket:
            await socket.send(INIT)
            refused = await socket.next(5)
            assert refused["id"] == 1 and refused["error"]["data"]["status"] == 503
            assert await _closed(socket) == 1013


async def test_an_sse_stream_taking_the_connection_over_ends_the_socket_not_the_connection(client):
    async with live_server() as server:
        async with acp_socket(f"{server.url}/acp") as socket:
            async with open_stream(client, server.url, socket.connection_id) as events:
                assert await _closed(socket) == 1000
                assert (await post(client, server.url, socket.connection_id, new_session(7))).status_code == 202
                await events.until(is_response(7))


async def test_the_101_names_the_connection_and_an_upgrade_must_offer_acp(client):
    async with live_server() as server:
        with pytest.raises(InvalidStatus) as refused:
            async with acp_socket(f"{server.url}/acp", subprotocols=[], initialize=False):
                pass
        assert refused.value.response.status_code == 400
        assert b"acp" in refused.value.response.body and len(server.registry) == 0
        async with acp_socket(f"{server.url}/acp", subprotocols=["acp"]) as socket:
            assert socket.ws.subprotocol == "acp"
            assert server.registry.get(socket.connection_id) is not None
    async with live_server(HttpOptions(websocket_without_acp=True)) as server:
        async with acp_socket(f"{server.url}/acp", subprotocols=[]) as socket:  # the operator let such clients in
            assert socket.ws.subprotocol is None
            assert server.registry.get(socket.connection_id) is not None


async def test_events_trimmed_before_an_attach_are_told_as_a_notification(client):
    limits = EventLimits(replay_events=2)
    async with live_server(HttpOptions(limits=limits)) as server:
        conn_id = await initialize(client, server.url)
        async with open_stream(client, server.url, conn_id) as events:
            await post(client, server.url, conn_id, new_session(2))
            session_id = (await events.until(is_response(2)))[-1]["data"]["result"]["sessionId"]
            await post(client, server.url, conn_id, prompt(session_id, "count 5"))
            seen = await events.until(is_response(3))
        headers = {"Acp-Connection-Id": conn_id, "Last-Event-ID": seen[0]["id"]}
        async with acp_socket(f"{server.url}/acp", headers=headers, initialize=False) as socket:
            lost = await socket.next(5)
            assert lost["method"] == EVENTS_LOST_METHOD and "id" not in lost
            assert lost["params"]["lastEventId"] == int(seen[0]["id"])
            replayed = await socket.until(is_response(3), 5)
            assert len(replayed) == 2  # the replay window's two events, the response last


async def _new_session(socket) -> str:
    await socket.send(new_session(2))
    return (await socket.until(is_response(2), 5))[-1]["result"]["sessionId"]
