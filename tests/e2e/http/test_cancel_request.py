"""`$/cancel_request` over HTTP+SSE and WebSocket: it cancels the request of the connection that sends it,
and a request of the same id on another connection runs on."""

from __future__ import annotations

import json

from tests.e2e.http.client import AcpHttp, is_response
from tests.e2e.http.ws_client import acp_socket

# ~10 s of text, a chunk every 0.25 s: still streaming long after the other connection's cancel is answered
SLOW = {"text": "a turn that runs for quite a long time", "chunk_chars": 1, "delay": 0.25}


def _cancel(request_id: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": request_id}}


def _is_chunk(message: dict[str, object]) -> bool:
    return message.get("method") == "session/update" and "agent_message_chunk" in json.dumps(message)


def test_over_http_a_cancel_reaches_only_the_sending_connections_request(live, model):
    model.add(SLOW, SLOW)
    first, second = AcpHttp(live.url), AcpHttp(live.url)
    first_stream, second_stream = first.stream(), second.stream()
    try:
        first_session = first.new_session(first_stream, str(live.workspace))
        second_session = second.new_session(second_stream, str(live.workspace))
        assert first.prompt(first_session, "go", request_id=3).status_code == 202
        first_stream.until(_is_chunk)
        assert second.prompt(second_session, "go", request_id=3).status_code == 202
        second_stream.until(_is_chunk)

        assert second.post(_cancel(3)).status_code == 202  # the same id as the first connection's prompt
        answer = second_stream.until(is_response(3), timeout=5)[-1]["data"]
        assert answer["result"]["stopReason"] == "cancelled"
        after = first_stream.until(lambda m: _is_chunk(m) or is_response(3)(m))[-1]["data"]
        assert _is_chunk(after)  # the first connection's turn streams on

        assert first.post(_cancel(3)).status_code == 202
        answer = first_stream.until(is_response(3), timeout=5)[-1]["data"]
        assert answer["result"]["stopReason"] == "cancelled"
    finally:
        for stream in (first_stream, second_stream):
            stream.close()
        for client in (first, second):
            client.delete()
            client.close()


async def test_over_websockets_a_cancel_reaches_only_the_sending_connections_request(live, model):
    model.add(SLOW, SLOW)
    async with acp_socket(live.url) as first, acp_socket(live.url) as second:
        first_session = await first.new_session(str(live.workspace))
        second_session = await second.new_session(str(live.workspace))
        await first.prompt(first_session, "go", request_id=3)
        await first.until(_is_chunk)
        await second.prompt(second_session, "go", request_id=3)
        await second.until(_is_chunk)

        await second.send(_cancel(3))
        answer = (await second.until(is_response(3), timeout=5))[-1]
        assert answer["result"]["stopReason"] == "cancelled"
        after = (await first.until(lambda m: _is_chunk(m) or is_response(3)(m)))[-1]
        assert _is_chunk(after)  # the first connection's turn streams on

        await first.send(_cancel(3))
        answer = (await first.until(is_response(3), timeout=5))[-1]
        assert answer["result"]["stopReason"] == "cancelled"
        await first.send(_cancel(3))  # answered: nothing more comes, and the socket serves on
        await first.send({"jsonrpc": "2.0", "id": 4, "method": "session/list", "params": {}})
        assert (await first.next())["id"] == 4
