"""The official SDK's client drives `iac-code acp`: it must validate every message we send."""

from __future__ import annotations

import sys

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
)
from tests.acp_schema import check
from tests.e2e.acp.wire import model_env


class RecordingClient:
    def __init__(self) -> None:
        self.updates: list = []
        self.permission_calls: list[str] = []

    async def session_update(self, session_id, update, **_):
        self.updates.append(update)

    async def request_permission(self, session_id, tool_call, options, **_):
        self.permission_calls.append(tool_call.tool_call_id)
        allow = next(o for o in options if o.kind == "allow_once")
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=allow.option_id))


async def test_sdk_client_runs_a_prompt_with_a_permission(model, workspace, tmp_path):
    model.add(
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "main.tf", "content": "x"}}]},
        {"text": "Wrote main.tf"},
    )
    client = RecordingClient()
    env = model_env(model.url, tmp_path / "config")
    observers = [check.Conformance("the SDK client").observe]
    command = (sys.executable, "-m", "iac_code.cli", "acp")
    async with spawn_agent_process(client, *command, env=env, observers=observers) as (conn, _):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION)
        assert init.agent_capabilities.load_session is True
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("write main.tf")])
        options = await conn.set_config_option(config_id="mode", session_id=session.session_id, value="read-only")
    assert response.stop_reason == "end_turn"
    assert response.usage is not None and response.usage.total_tokens > 0
    assert options.config_options[0].current_value == "read-only"
    assert (workspace / "main.tf").read_text() == "x"
    text = "".join(u.content.text for u in client.updates if isinstance(u, AgentMessageChunk))
    assert text == "Wrote main.tf"
    (start,) = [u for u in client.updates if isinstance(u, ToolCallStart)]
    statuses = [u.status for u in client.updates if isinstance(u, ToolCallProgress)]
    assert client.permission_calls == [start.tool_call_id]
    assert statuses == ["in_progress", "completed"]
