"""The official SDK's Streamable HTTP client (acp.http), unchanged, against the real server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acp import connect_to_agent, text_block
from acp.http import create_http_stream
from acp.schema import AllowedOutcome, ClientCapabilities, Implementation, RequestPermissionResponse
from tests.acp_schema import check


class RecordingClient:
    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.permission_requests: list[Any] = []

    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any, **_: Any):
        self.permission_requests.append(tool_call)
        allow = next(o for o in options if o.kind == "allow_once")
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=allow.option_id))

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append((session_id, update))

    def text(self) -> str:
        return "".join(u.content.text for _, u in self.updates if u.session_update == "agent_message_chunk")


async def _connect(url: str, client: RecordingClient):
    conn = connect_to_agent(
        client, create_http_stream(url), observers=[check.Conformance("the SDK HTTP client").observe]
    )
    init = await conn.initialize(
        protocol_version=1,
        client_capabilities=ClientCapabilities(),
        client_info=Implementation(name="sdk-e2e", version="1"),
    )
    return conn, init


async def _prompt_with_permission(live, model) -> str:
    model.add(
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "sdk.tf", "content": "# sdk\n"}}]},
        {"text": "file written"},
    )
    client = RecordingClient()
    conn, _ = await _connect(live.url, client)
    session = await conn.new_session(cwd=str(live.workspace), mcp_servers=[])
    response = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=[text_block("write")]), 30)
    assert response.stop_reason == "end_turn"
    assert len(client.permission_requests) == 1
    assert (live.workspace / "sdk.tf").read_text() == "# sdk\n"
    assert "file written" in client.text()
    await conn.close()
    return session.session_id


async def test_sdk_client_new_session_and_prompt_with_permission(live, model):
    await _prompt_with_permission(live, model)


async def test_sdk_client_loads_a_session_on_a_second_connection(live, model):
    probe, init = await _connect(live.url, RecordingClient())
    await probe.close()
    if not init.agent_capabilities.load_session:
        pytest.skip("the ACP agent does not advertise loadSession yet")
    session_id = await _prompt_with_permission(live, model)
    model.add({"text": "still here"})

    second_client = RecordingClient()
    second, _ = await _connect(live.url, second_client)
    await asyncio.wait_for(second.load_session(session_id=session_id, cwd=str(live.workspace), mcp_servers=[]), 30)
    replayed = [u.session_update for _, u in second_client.updates]
    assert "user_message_chunk" in replayed and "file written" in second_client.text()
    response = await asyncio.wait_for(second.prompt(session_id=session_id, prompt=[text_block("again")]), 30)
    assert response.stop_reason == "end_turn"
    assert second_client.text().endswith("still here")
    await second.close()
