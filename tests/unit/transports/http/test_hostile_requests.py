"""Requests crafted to break the HTTP transport: each gets a 4xx, never a 500 or non-JSON on a stream."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from acp.agent.connection import AgentSideConnection
from acp.schema import PromptResponse
from tests.unit.transports.http.conftest import (
    initialize,
    is_response,
    live_server,
    new_session,
    open_stream,
    post,
    prompt,
)
from tests.unit.transports.http.fake_agent import FakeAgent

from iac_code.transports.http.app import HttpOptions

JSON = {"Content-Type": "application/json"}


async def test_deeply_nested_body_is_400_not_500(server, client):
    conn_id = await initialize(client, server.url)
    headers = {**JSON, "Acp-Connection-Id": conn_id}
    for body in (
        "[" * 1000 + "]" * 1000,
        '{"jsonrpc":"2.0","method":"x","params":{"a":' + "[" * 900 + "]" * 900 + "}}",
    ):
        response = await client.post(f"{server.url}/acp", content=body, headers=headers)
        assert response.status_code == 400, response.text
        assert response.json()["code"] == -32700
    deep_initialize = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":' + "[" * 1000 + "]" * 1000 + "}"
    assert (await client.post(f"{server.url}/acp", content=deep_initialize, headers=JSON)).status_code == 400


async def test_non_finite_ids_are_refused_and_never_reach_the_stream(server, client):
    conn_id = await initialize(client, server.url)
    headers = {**JSON, "Acp-Connection-Id": conn_id}
    async with open_stream(client, server.url, conn_id) as events:
        for raw_id in ("1e999", "NaN", "-Infinity"):
            body = f'{{"jsonrpc":"2.0","id":{raw_id},"method":"session/new","params":{{"cwd":"/tmp"}}}}'
            response = await client.post(f"{server.url}/acp", content=body, headers=headers)
            assert response.status_code == 400 and response.json()["code"] == -32600, raw_id
        body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "session/new", "params": {"cwd": "/tmp"}})
        assert (await client.post(f"{server.url}/acp", content=body, headers=headers)).status_code == 202
        answered = await events.until(is_response(7))
        assert len(answered) == 1  # nothing was sent for the refused ids


async def test_a_last_event_id_that_is_not_a_small_ascii_number_is_400(server, client):
    conn_id = await initialize(client, server.url)
    # Header bytes arrive as Latin-1: b"\xb9\xb2" reads as "¹²", which str.isdigit() accepts.
    for value in (b"9" * 5000, b"\xb9\xb2", "¹²".encode(), "٣".encode(), b"12 34", b"-1", b"+1", b""):
        headers = {"Acp-Connection-Id": conn_id, "Last-Event-ID": value}
        response = await client.get(f"{server.url}/acp", headers=headers)
        assert response.status_code == 400, (value[:10], response.status_code)


class _HeldAgent(FakeAgent):
    """Prompts "hold" until the test releases them: requests the agent has accepted and not answered."""

    released: asyncio.Event

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        if prompt[0].text == "hold":
            await _HeldAgent.released.wait()
            return PromptResponse(stop_reason="end_turn")
        return await super().prompt(prompt, session_id, **kwargs)


async def _serve_held(transport: Any) -> None:
    conn = AgentSideConnection(_HeldAgent, transport, listening=False, use_unstable_protocol=True)
    async with conn:
        await conn.listen()


async def test_requests_in_flight_on_a_connection_are_bounded_with_429(client):
    _HeldAgent.released = asyncio.Event()
    async with live_server(HttpOptions(max_requests_in_flight=3), serve=_serve_held) as server:
        conn_id = await initialize(client, server.url)
        other = await initialize(client, server.url)
        held = [await post(client, server.url, conn_id, prompt("s", "hold", request_id=10 + n)) for n in range(3)]
        assert [r.status_code for r in held] == [202, 202, 202]
        refused = await post(client, server.url, conn_id, new_session(20))
        assert refused.status_code == 429 and "in flight" in refused.json()["error"]
        cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}
        assert (await post(client, server.url, conn_id, cancel)).status_code == 202  # notifications still pass
        assert (await post(client, server.url, other, new_session(21))).status_code == 202  # per connection
        _HeldAgent.released.set()
        async with open_stream(client, server.url, conn_id) as events:
            for request_id in (10, 11, 12):
                await events.until(is_response(request_id))
            assert (await post(client, server.url, conn_id, new_session(22))).status_code == 202
            await events.until(is_response(22))


async def test_initialize_with_a_null_id_is_answered_not_left_to_time_out(client):
    # Found by tests/fuzz: the answer (id null) was never matched to the waiting initialize: 504 after 30 s.
    async with live_server(HttpOptions(initialize_timeout=3)) as server:
        body = {"jsonrpc": "2.0", "id": None, "method": "initialize", "params": {"protocolVersion": 1}}
        response = await client.post(f"{server.url}/acp", json=body)
        assert response.status_code == 200 and response.json()["id"] is None
        assert response.json()["result"]["protocolVersion"] == 1
