"""The hub against the fixture server over stdio, Streamable HTTP and SSE: tools, results, prompts, cancel.

One hub per transport serves the whole module (a server start costs about a second)."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from tests.e2e.mcp.servers import SECRET, fixture_server, pid_of, ready_hub, wait_for_event

from iac_code.mcp import HttpServer, McpHub, PromptError
from iac_code.mcp.tool import McpTool
from iac_code.messages import Image, Resource
from iac_code.tools.base import ToolContext, ToolError

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(60)]

FIXTURE_TOOLS = {
    "echo",
    "describe_region",
    "delete_bucket",
    "diagram",
    "slow",
    "fail",
    "inventory",
    "state_files",
    "whereami",
    "start_helper",
    "hang_up",
    "crash",
    "grow",
    "place_bucket",
    "place_bucket_resolved",
    "sign_in",
}


@pytest.fixture(scope="module")
def logs() -> Iterator[list[logging.LogRecord]]:
    """Every log record of the module, at DEBUG, to check that no secret reaches the log."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.DEBUG)
    handler.emit = records.append  # type: ignore[method-assign]
    root = logging.getLogger()
    previous = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield records
    root.removeHandler(handler)
    root.setLevel(previous)


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["stdio", "http", "sse"])
async def hub(request, events_file, http_url, sse_url, logs, tmp_path_factory) -> AsyncIterator[McpHub]:
    headers = {"Authorization": f"Bearer {SECRET}"}
    spec = {
        "stdio": fixture_server(events=events_file),
        "http": HttpServer("fixture", http_url, "http", headers),
        "sse": HttpServer("fixture", sse_url, "sse", headers),
    }[request.param]
    async with ready_hub(spec, tmp_path_factory.mktemp("workspace")) as hub:
        yield hub


def _tools(hub: McpHub) -> dict[str, McpTool]:
    return {tool.name: tool for tool in hub.tools() if isinstance(tool, McpTool)}


async def _run(hub: McpHub, tool: str, **args):
    return await _tools(hub)[f"mcp__fixture__{tool}"].run(args, ToolContext(workspace=Path.cwd()))


async def test_tools_are_offered_under_qualified_names_with_permissions_from_annotations(hub):
    tools = _tools(hub)
    assert set(tools) == {f"mcp__fixture__{name}" for name in FIXTURE_TOOLS}
    read_only = tools["mcp__fixture__describe_region"]
    # the server is not trusted: its read-only hint is a claim
    assert (read_only.category, read_only.kind, read_only.access({})) == ("read", "read", "claimed_read")
    assert read_only.title({"region": "x"}) == "Describe a region (MCP server fixture)"
    destructive = tools["mcp__fixture__delete_bucket"]
    assert (destructive.category, destructive.kind, destructive.access({})) == ("execute", "delete", "infra_change")
    echo = tools["mcp__fixture__echo"]
    assert (echo.category, echo.kind, echo.access({})) == ("execute", "other", "external")
    assert echo.description == "Echo the text back."
    assert echo.parameters["type"] == "object" and echo.parameters["required"] == ["text"]
    assert echo.parameters["properties"]["text"]["type"] == "string"


async def test_a_text_result_reaches_the_model_and_raw_output_is_the_mcp_result(hub):
    result = await _run(hub, "echo", text="terraform plan")
    assert (result.text, result.is_error, result.content) == ("terraform plan", False, [])
    assert result.raw_output["content"] == [{"type": "text", "text": "terraform plan"}]


async def test_an_image_goes_to_the_client_and_to_the_model_beside_the_text(hub):
    result = await _run(hub, "diagram")
    assert result.text == "The diagram:"
    (image,) = result.content
    assert isinstance(image, Image) and image.mime_type == "image/png"
    assert result.images == [Image(mime_type="image/png", data=image.data)]


async def test_structured_content_resources_and_links(hub):
    inventory = await _run(hub, "inventory")
    assert inventory.raw_output["structuredContent"] == {"buckets": ["logs", "state"], "count": 2}
    assert '"count": 2' in inventory.text
    files = await _run(hub, "state_files")
    assert [block.block["type"] for block in files.content if isinstance(block, Resource)] == [
        "resource",
        "resource_link",
    ]
    assert '[resource file:///work/terraform.tfstate]\n{"version": 4}' in files.text


async def test_is_error_makes_an_error_result(hub):
    result = await _run(hub, "fail", reason="quota exceeded")
    assert result.is_error and "cannot do that: quota exceeded" in result.text


async def test_cancelling_a_call_sends_mcps_cancellation_to_the_server(hub, events_file):
    running = asyncio.ensure_future(_run(hub, "slow", seconds=30))
    await asyncio.to_thread(wait_for_event, events_file, "started slow")
    started = time.monotonic()
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert time.monotonic() - started < 1
    await asyncio.to_thread(wait_for_event, events_file, "cancelled slow")
    events_file.unlink()
    assert (await _run(hub, "echo", text="still here")).text == "still here"


async def test_prompts_are_slash_commands_and_render_to_user_text(hub):
    commands = {command.name: command for command in hub.prompts()}
    assert set(commands) == {"mcp__fixture__review", "mcp__fixture__compare", "mcp__fixture__explain_diagram"}
    assert commands["mcp__fixture__compare"].hint == "<left> [right=…]"
    text = (await hub.render_prompt("mcp__fixture__review", "aws_s3_bucket.logs")).text
    assert text == "Review the Terraform resource aws_s3_bucket.logs for security issues."
    assert (
        await hub.render_prompt("mcp__fixture__compare", "cn-beijing")
    ).text == "Compare cn-beijing with cn-hangzhou."
    with pytest.raises(PromptError, match="needs left"):
        await hub.render_prompt("mcp__fixture__compare", "")
    with pytest.raises(PromptError, match="not a prompt"):
        await hub.render_prompt("mcp__fixture__nothing", "")


async def test_no_secret_reaches_the_log(hub, logs):
    await _run(hub, "whereami")
    assert logs, "the hub logs its servers"
    assert not [record for record in logs if SECRET in record.getMessage()]


async def test_a_call_times_out_and_the_server_is_told(events_file, tmp_path):
    async with McpHub([fixture_server(events=events_file)], tmp_path, call_timeout=0.5) as hub:
        assert await hub.wait_ready(20)
        started = time.monotonic()
        with pytest.raises(ToolError, match=r"did not answer 'slow' within 0.5 s; the call was cancelled"):
            await _run(hub, "slow", seconds=30)
        assert time.monotonic() - started < 2
        await asyncio.to_thread(wait_for_event, events_file, "cancelled slow")


async def test_a_stdio_server_runs_in_the_cwd_in_its_own_process_group_with_its_env(events_file, tmp_path):
    async with McpHub([fixture_server(events=events_file)], tmp_path) as hub:
        assert await hub.wait_ready(20)
        where = (await _run(hub, "whereami")).text
        supervisor = pid_of(where, "ppid")  # system/reaper.py, which leads the server's process group
        assert b"reaper.py" in Path(f"/proc/{supervisor}/cmdline").read_bytes()
    assert f"cwd={tmp_path} " in where and "secret=set" in where
    assert pid_of(where, "pgid") == supervisor != os.getpgid(0)
