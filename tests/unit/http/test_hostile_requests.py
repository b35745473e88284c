"""Requests crafted to break the HTTP transport: each gets a 4xx, never a 500 or non-JSON on a stream."""

from __future__ import annotations

import json

from tests.unit.http.conftest import initialize, is_response, open_stream

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
