"""The third-party reference server `@modelcontextprotocol/server-everything` (TypeScript SDK, 2025 handshake)
over stdio: a plain tool, an image, a long tool cancelled, a prompt rendered, and no orphan after close."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from tests.e2e.mcp.servers import everything_server, marker, processes_with, ready_hub, wait_until_gone

from iac_code.mcp import McpHub
from iac_code.mcp.tool import McpTool
from iac_code.messages import Image
from iac_code.tools.base import ToolContext

# The first test of a fresh checkout also installs the server from npm.
pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(600)]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def hub(everything, tmp_path_factory) -> AsyncIterator[McpHub]:
    async with ready_hub(everything_server(everything, marker()), tmp_path_factory.mktemp("workspace")) as hub:
        yield hub


def _tool(hub: McpHub, name: str) -> McpTool:
    (tool,) = [t for t in hub.tools() if t.name == f"mcp__everything__{name}"]
    assert isinstance(tool, McpTool)
    return tool


async def _run(hub: McpHub, name: str, **args):
    return await _tool(hub, name).run(args, ToolContext(workspace=Path.cwd()))


async def test_a_plain_tool(hub):
    echo = _tool(hub, "echo")
    assert (echo.access({}), echo.kind) == ("claimed_read", "read")  # marked readOnlyHint by an untrusted server
    assert echo.parameters["properties"]["message"]["type"] == "string" and "$schema" not in echo.parameters
    result = await _run(hub, "echo", message="terraform validate")
    assert (result.text, result.is_error) == ("Echo: terraform validate", False)


async def test_a_tool_returning_an_image(hub):
    result = await _run(hub, "get-tiny-image")
    images = [block for block in result.content if isinstance(block, Image)]
    assert len(images) == 1 and images[0].mime_type == "image/png" and len(images[0].data) > 1000
    assert "[image:" not in result.text  # the image goes to the model as an image (ToolResult.images)
    assert [image.mime_type for image in result.images] == ["image/png"] and result.images[0].data == images[0].data


async def test_a_long_tool_is_cancelled_and_the_server_stays_usable(hub):
    running = asyncio.ensure_future(_run(hub, "trigger-long-running-operation", duration=30, steps=10))
    await asyncio.sleep(0.5)
    started = time.monotonic()
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert time.monotonic() - started < 1
    assert (await _run(hub, "echo", message="after")).text == "Echo: after"


async def test_a_prompt_rendered_from_slash_command_text(hub):
    commands = {command.name: command for command in hub.prompts()}
    assert commands["mcp__everything__args-prompt"].hint == "<city> [state=…]"
    text = (await hub.render_prompt("mcp__everything__args-prompt", "Hangzhou state=Zhejiang")).text
    assert "Hangzhou" in text and "Zhejiang" in text
    assert (
        await hub.render_prompt("mcp__everything__simple-prompt")
    ).text == "This is a simple prompt without arguments."


async def test_closing_leaves_no_node_process(everything, tmp_path):
    word = marker()  # a short-lived hub of its own: the module's hub stays up for the other tests
    async with McpHub([everything_server(everything, word)], tmp_path) as hub:
        assert await hub.wait_ready(30)
        assert processes_with(word)
    assert await asyncio.to_thread(wait_until_gone, processes_with(word), 1) == []
