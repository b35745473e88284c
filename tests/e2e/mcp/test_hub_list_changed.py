"""A server that changes its tools and prompts while it runs: the hub lists them again, whether the
server announces it through a `subscriptions/listen` stream (2026-07-28) or with the
`notifications/*/list_changed` of earlier protocol versions."""

from __future__ import annotations

import pytest
from tests.e2e.mcp.servers import fixture_server, ready_hub

from iac_code.mcp import connection
from iac_code.tools.base import ToolContext

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_tools_and_prompts_added_at_run_time_are_offered_once_the_call_returns(tmp_path, monkeypatch, mode):
    monkeypatch.setattr(connection, "PROTOCOL_MODE", mode)
    changes: list[str] = []
    async with ready_hub(fixture_server(), tmp_path, on_change=lambda: changes.append("changed")) as hub:
        announced = len(changes)  # the server became ready
        tools = {tool.name: tool for tool in hub.tools()}
        assert "mcp__fixture__grown" not in tools
        result = await tools["mcp__fixture__grow"].run({}, ToolContext(tmp_path))
        assert result.text == "grown"
        # the call returned after the new lists were in: no wait needed
        grown = {tool.name: tool for tool in hub.tools()}["mcp__fixture__grown"]
        assert grown.description == "A tool added while the server runs."
        assert (await grown.run({}, ToolContext(tmp_path))).text == "I was added later."
        assert "mcp__fixture__grown_prompt" in [prompt.name for prompt in hub.prompts()]
        assert (await hub.render_prompt("mcp__fixture__grown_prompt")).text == "Use the grown tool."
        assert len(changes) > announced, "the hub announced the change"
