"""A shared server's client-sent http/sse MCP server, held to its reach at every connection, through the real SDK
transports and the fixture server on loopback: allowed when the operator lists loopback, refused otherwise
(a name that passed when the session opened cannot be rebound to the server's own network later)."""

from __future__ import annotations

import pytest
from tests.e2e.mcp.servers import SECRET, ready_hub

from iac_code.mcp import HttpServer, McpHub
from iac_code.mcp.addresses import Reach
from iac_code.tools.base import ToolContext

pytestmark = [pytest.mark.timeout(60)]


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_a_server_in_the_listed_networks_is_reached(transport, http_url, sse_url, tmp_path):
    url = http_url if transport == "http" else sse_url
    reach = Reach.from_setting(["127.0.0.0/8", "::1"])
    spec = HttpServer("fixture", url, transport, {"Authorization": f"Bearer {SECRET}"}, reach=reach)
    async with ready_hub(spec, tmp_path) as hub:
        [echo] = [tool for tool in hub.tools() if tool.name == "mcp__fixture__echo"]
        result = await echo.run({"text": "through a checked address"}, ToolContext(workspace=tmp_path))
        assert result.text == "through a checked address"


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_a_connection_outside_the_reach_is_refused_as_it_opens(transport, http_url, sse_url, tmp_path):
    url = http_url if transport == "http" else sse_url
    problems: list[tuple[str, str]] = []
    spec = HttpServer("fixture", url, transport, {"Authorization": f"Bearer {SECRET}"}, reach=Reach())
    async with McpHub([spec], tmp_path, on_problem=lambda *problem: problems.append(problem)) as hub:
        await hub.wait_ready(30)
        assert hub.status() == {"fixture": "failed"}
    [(server, message)] = problems
    assert server == "fixture" and "refused" in message and "loopback" in message, message
