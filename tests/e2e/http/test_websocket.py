"""ACP's WebSocket profile on GET /acp, against the real server and the scripted model."""

from __future__ import annotations

import asyncio
import json
import signal
import time

import httpx
import pytest
from acp import connect_to_agent, text_block
from acp.schema import ClientCapabilities, Implementation
from acp.ws import create_websocket_stream
from tests.acp_schema import check
from tests.e2e.http.client import AcpHttp, agent_text, is_response
from tests.e2e.http.server_process import http_server
from tests.e2e.http.test_sdk_client import RecordingClient
from tests.e2e.http.ws_client import acp_socket, bearer_subprotocol, is_method, text_of, ws_url
from websockets.exceptions import ConnectionClosed, InvalidStatus

TOKEN = "s3cret-token-for-websockets"


async def test_a_turn_over_one_socket(live, model):
    text = "".join(f"{n:02d} " for n in range(30))
    model.add({"text": text, "chunk_chars": 6})
    async with acp_socket(live.url, initialize=False) as socket:
        assert socket.connection_id and socket.ws.subprotocol == "acp"
        initialized = await socket.initialize()
        assert initialized["result"]["protocolVersion"] == 1
        session_id = await socket.new_session(str(live.workspace))
        await socket.prompt(session_id, "count")
        messages = await socket.until(is_response(3))
    assert messages[-1]["result"]["stopReason"] == "end_turn"
    updates = [m for m in messages if m.get("method") == "session/update"]
    assert updates and all(m["params"]["sessionId"] == session_id for m in updates)
    assert text_of(messages) == text


@pytest.mark.parametrize(("kind", "written"), [("allow_once", True), ("reject_once", False)])
async def test_a_permission_answered_over_the_socket(live, model, kind, written):
    path = live.workspace / f"{kind}.tf"
    model.add(
        {"tool_calls": [{"name": "write_file", "arguments": {"path": path.name, "content": "# ws\n"}}]},
        {"text": "done"},
    )
    async with acp_socket(live.url) as socket:
        session_id = await socket.new_session(str(live.workspace))
        await socket.prompt(session_id, f"write {path.name}")
        asked = (await socket.until(is_method("session/request_permission")))[-1]
        assert asked["params"]["sessionId"] == session_id
        await socket.answer_permission(asked, kind)
        rest = await socket.until(is_response(3))
    assert rest[-1]["result"]["stopReason"] == "end_turn"
    assert path.exists() is written
    if written:
        assert path.read_text() == "# ws\n"


async def test_cancel_over_the_socket(live, model):
    model.add({"text": "thinking", "hang": True})
    async with acp_socket(live.url) as socket:
        session_id = await socket.new_session(str(live.workspace))
        await socket.prompt(session_id, "take your time")
        await socket.until(lambda m: m.get("method") == "session/update" and "thinking" in json.dumps(m))
        await socket.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}})
        answer = (await socket.until(is_response(3)))[-1]
    assert answer["result"]["stopReason"] == "cancelled"


async def test_bad_frames_are_answered_and_the_socket_goes_on(live):
    async with acp_socket(live.url, initialize=False) as socket:
        binary = b'{"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": 1}}'
        for frame, code in (
            (binary, -32600),
            ("{oops", -32700),
            ("[]", -32600),
            ('"text"', -32600),
            ('{"id": 4}', -32600),
        ):
            await socket.ws.send(frame)
            error = await socket.next()
            assert error["id"] is None and error["error"]["code"] == code, frame
        await socket.send({"jsonrpc": "2.0", "id": 5, "method": "session/list", "params": {}})
        early = await socket.next()
        assert early["id"] == 5 and early["error"]["code"] == -32600
        assert "initialize first" in early["error"]["data"]["reason"]

        assert (await socket.initialize())["result"]["protocolVersion"] == 1
        await socket.ws.send("{oops")
        assert (await socket.next())["error"]["code"] == -32700
        await socket.ws.send(b"\x00")
        binary_refused = await socket.next()
        assert binary_refused["id"] is None and binary_refused["error"]["code"] == -32600
        assert "text frame" in binary_refused["error"]["data"]["reason"]
        assert await socket.new_session(str(live.workspace))


async def test_a_socket_attached_with_last_event_id_gets_what_it_missed(live, model):
    text = "".join(f"{n:03d} " for n in range(60))
    model.add({"text": text, "chunk_chars": 4, "delay": 0.02})
    client = AcpHttp(live.url)
    stream = client.stream()
    session_id = client.new_session(stream, str(live.workspace))
    assert client.prompt(session_id, "count").status_code == 202
    before = stream.until(lambda d: d.get("method") == "session/update")
    before += [stream.next() for _ in range(5)]
    stream.close()  # the client moves from SSE to a WebSocket mid-answer

    headers = {"Acp-Connection-Id": client.connection_id, "Last-Event-ID": before[-1]["id"]}
    async with acp_socket(live.url, headers=headers, initialize=False) as socket:
        assert socket.connection_id == client.connection_id
        after = await socket.until(is_response(3))
    assert after[-1]["result"]["stopReason"] == "end_turn"
    assert agent_text(before) + text_of(after) == text
    # The attached socket's end only detached it: the connection still serves.
    listener = client.stream()
    assert client.new_session(listener, str(live.workspace), request_id=4)
    listener.close()
    client.close()


async def test_attaching_needs_a_known_connection_and_an_event_id(live):
    with pytest.raises(InvalidStatus) as unknown:
        async with acp_socket(live.url, headers={"Acp-Connection-Id": "nope"}, initialize=False):
            pass
    assert unknown.value.response.status_code == 400
    client = AcpHttp(live.url)
    with pytest.raises(InvalidStatus) as bad_id:
        headers = {"Acp-Connection-Id": client.connection_id, "Last-Event-ID": "x1"}
        async with acp_socket(live.url, headers=headers, initialize=False):
            pass
    assert bad_id.value.response.status_code == 400
    assert b"Last-Event-ID" in bad_id.value.response.body
    client.close()


async def test_closing_the_socket_closes_its_connection(live):
    async with acp_socket(live.url) as socket:
        connection_id = socket.connection_id
        await socket.new_session(str(live.workspace))
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}
    with httpx.Client(timeout=10) as http:

        def posted() -> int:
            return http.post(live.url, json=cancel, headers={"Acp-Connection-Id": connection_id}).status_code

        await _eventually(lambda: posted() == 400)


async def test_a_foreign_origin_is_refused(live):
    with pytest.raises(InvalidStatus) as refused:
        async with acp_socket(live.url, origin="https://evil.example", initialize=False):
            pass
    assert refused.value.response.status_code == 403
    async with acp_socket(live.url, origin=live.base) as socket:  # a page of this server
        assert socket.connection_id


async def test_the_official_sdk_websocket_client_where_the_operator_lets_it_in(model):
    # The SDK's acp.ws client offers no subprotocol: refused by default, served with IAC_CODE_WEBSOCKET_WITHOUT_ACP.
    with http_server(model.url) as strict:
        with pytest.raises(InvalidStatus) as refused:
            await create_websocket_stream(ws_url(strict.url))
        assert refused.value.response.status_code == 400
    model.add(
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "sdk-ws.tf", "content": "# sdk\n"}}]},
        {"text": "written over a socket"},
    )
    with http_server(model.url, env={"IAC_CODE_WEBSOCKET_WITHOUT_ACP": "true"}) as live:
        client = RecordingClient()
        stream = await create_websocket_stream(ws_url(live.url))
        conn = connect_to_agent(client, stream, observers=[check.Conformance("the SDK WebSocket client").observe])
        await conn.initialize(
            protocol_version=1,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="ws", version="1"),
        )
        session = await conn.new_session(cwd=str(live.workspace), mcp_servers=[])
        response = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=[text_block("write")]), 30)
        assert response.stop_reason == "end_turn"
        assert (live.workspace / "sdk-ws.tf").read_text() == "# sdk\n"
        assert "written over a socket" in client.text()
        await conn.close()


async def test_metrics_count_upgrades_and_open_sockets(live):
    async with acp_socket(live.url):
        with httpx.Client(timeout=10) as http:
            scraped = http.get(f"{live.base}/metrics").text
    assert 'iac_code_http_requests_total{method="GET",route="/acp",status="101"}' in scraped
    open_sockets = next(line for line in scraped.splitlines() if line.startswith("iac_code_open_websockets "))
    assert float(open_sockets.split()[1]) >= 1


async def test_an_oversized_frame_closes_that_socket_only(model):
    with http_server(model.url, "--max-body-bytes", "65536") as server:
        async with acp_socket(server.url) as bystander, acp_socket(server.url) as sender:
            await sender.ws.send("x" * 70_000)
            with pytest.raises(ConnectionClosed) as closed:
                await sender.next()
            assert closed.value.rcvd.code == 1009
            assert await bystander.new_session(str(server.workspace))
            async with acp_socket(server.url) as newcomer:
                assert await newcomer.new_session(str(server.workspace))


async def test_tokens_on_a_socket(model):
    with http_server(model.url, env={"IACCODE_ACP_HTTP_TOKEN": TOKEN}) as server:
        refusals = [
            {},
            {"headers": {"Authorization": "Bearer wrong"}},
            {"subprotocols": ["acp", bearer_subprotocol("wrong")]},
            {"subprotocols": ["acp", "bearer.a"]},  # no base64 is 1 more than a multiple of 4
        ]
        for options in refusals:
            with pytest.raises(InvalidStatus) as refused:
                async with acp_socket(server.url, initialize=False, **options):
                    pass
            assert refused.value.response.status_code == 401, options
        with pytest.raises(InvalidStatus) as in_query:
            async with acp_socket(f"{server.url}?token={TOKEN}", initialize=False):
                pass
        assert in_query.value.response.status_code == 401

        async with acp_socket(server.url, headers={"Authorization": f"Bearer {TOKEN}"}) as by_header:
            assert await by_header.new_session(str(server.workspace))
        async with acp_socket(server.url, subprotocols=["acp", bearer_subprotocol(TOKEN)]) as by_subprotocol:
            assert by_subprotocol.ws.subprotocol == "acp"
            assert by_subprotocol.headers["Sec-WebSocket-Protocol"] == "acp"
            assert await by_subprotocol.new_session(str(server.workspace))
        log = server.log_text()
        assert TOKEN not in log and bearer_subprotocol(TOKEN) not in log


async def test_sigterm_closes_open_sockets_with_going_away(model):
    model.add({"text": "thinking", "hang": True})
    with http_server(model.url) as server:
        async with acp_socket(server.url) as busy, acp_socket(server.url, initialize=False) as fresh:
            session_id = await busy.new_session(str(server.workspace))
            await busy.prompt(session_id, "take your time")
            await busy.until(is_method("session/update"))
            server.process.send_signal(signal.SIGTERM)
            for socket in (busy, fresh):
                with pytest.raises(ConnectionClosed) as closed:
                    while True:
                        await socket.next()
                assert closed.value.rcvd.code == 1001
        assert await asyncio.to_thread(server.process.wait, 10) == 0


async def _eventually(check, timeout: float = 10) -> None:
    """Wait for a change another process makes on its own time (nothing to await from here)."""
    deadline = time.monotonic() + timeout
    while not await asyncio.to_thread(check):
        assert time.monotonic() < deadline, "the condition never held"
        await asyncio.sleep(0.05)
