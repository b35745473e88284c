"""Servers that fail never break the hub: each is reported once, logged with its stderr, and left out."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from tests.e2e.mcp.servers import fixture_server, marker, processes_with, wait_until_gone

from iac_code.mcp import HttpServer, InvalidServer, McpHub, StdioServer
from iac_code.tools.base import ToolContext, ToolError

pytestmark = pytest.mark.timeout(60)


class Problems:
    """An on_problem callback (async, as a session's would be) that records what it was told."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    async def __call__(self, server: str, message: str) -> None:
        self.seen.append((server, message))

    def by_server(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for server, message in self.seen:
            found.setdefault(server, []).append(message)
        return found


async def _settle(hub: McpHub) -> None:
    assert await hub.wait_ready(20), hub.status()
    await asyncio.sleep(0.05)  # reports are awaited by the connection tasks


async def test_a_server_that_crashes_on_start_is_reported_once_and_the_others_work(tmp_path, caplog):
    problems = Problems()
    specs = [fixture_server("broken", "--crash"), fixture_server("good")]
    caplog.set_level(logging.WARNING, logger="iac_code.mcp")
    changes: list[str] = []
    async with McpHub(specs, tmp_path, on_problem=problems, on_change=lambda: changes.append("changed")) as hub:
        await _settle(hub)
        assert hub.status() == {"broken": "failed", "good": "ready"}
        assert changes == ["changed"]  # "good" became ready; "broken" never offered anything
        assert problems.by_server() == {
            "broken": ["MCP server 'broken' is unavailable: it exited (code 3) before it was ready"]
        }
        assert {tool.name.split("__")[1] for tool in hub.tools()} == {"good"}
        echo = next(tool for tool in hub.tools() if tool.name == "mcp__good__echo")
        assert (await echo.run({"text": "ok"}, ToolContext(workspace=tmp_path))).text == "ok"
    (record,) = [r for r in caplog.records if "broken" in r.getMessage()]
    assert "cannot read /etc/fixture.conf: permission denied" in record.getMessage()  # the stderr tail


async def test_unstartable_unreachable_and_invalid_servers_are_each_reported_once(tmp_path, unused_tcp_port):
    problems = Problems()
    specs = [
        StdioServer("missing", "/nonexistent/mcp-server"),
        HttpServer("offline", f"http://127.0.0.1:{unused_tcp_port}/mcp?token=querysecret"),
        InvalidServer("typo", "an MCP server needs either a `command` or a `url`"),
    ]
    async with McpHub(specs, tmp_path, on_problem=problems) as hub:
        await _settle(hub)
        assert hub.status() == {"missing": "failed", "offline": "failed", "typo": "invalid"}
        assert hub.tools() == [] and hub.prompts() == []
    reported = problems.by_server()
    assert reported["missing"] == [
        "MCP server 'missing' is unavailable: cannot start `/nonexistent/mcp-server`: command not found"
    ]
    assert reported["typo"] == ["MCP server 'typo' is not usable: an MCP server needs either a `command` or a `url`"]
    (offline,) = reported["offline"]
    assert offline.startswith("MCP server 'offline' is unavailable: ") and "querysecret" not in offline


async def test_a_server_that_never_answers_is_given_up_after_the_startup_timeout_and_killed(tmp_path):
    problems = Problems()
    word = marker()
    hub = McpHub([fixture_server("stuck", "--silent", word)], tmp_path, on_problem=problems, startup_timeout=1)
    started = time.monotonic()
    hub.start()
    assert not await hub.wait_ready(0.2)  # still starting: a prompt would go on without it
    assert hub.status() == {"stuck": "starting"}
    await _settle(hub)
    assert 1 <= time.monotonic() - started < 4
    assert problems.seen == [("stuck", "MCP server 'stuck' is unavailable: it did not finish starting within 1 s")]
    assert await asyncio.to_thread(wait_until_gone, processes_with(word)) == []
    await hub.aclose()


async def test_a_server_that_dies_mid_session_is_reported_once_and_its_tools_go(tmp_path):
    problems = Problems()
    offered: list[list[str]] = []

    async def on_change() -> None:  # what a session does: announce the commands on offer now
        offered.append([tool.name for tool in hub.tools()])

    async with McpHub([fixture_server("fragile")], tmp_path, on_problem=problems, on_change=on_change) as hub:
        await _settle(hub)
        assert len(offered) == 1 and "mcp__fragile__crash" in offered[0]
        crash = next(tool for tool in hub.tools() if tool.name == "mcp__fragile__crash")
        with pytest.raises(ToolError, match="MCP server 'fragile'"):
            await crash.run({}, ToolContext(workspace=tmp_path))
        await asyncio.sleep(0.6)  # the exit is noticed within the stdin-close grace
        assert hub.status() == {"fragile": "failed"}
        assert problems.seen == [("fragile", "MCP server 'fragile' is unavailable: it stopped (exit code 7)")]
        assert hub.tools() == [] and offered[1:] == [[]]
        with pytest.raises(ToolError, match=r"not connected \(it stopped \(exit code 7\)\)"):
            await crash.run({}, ToolContext(workspace=tmp_path))


async def test_a_server_that_closes_its_stdout_but_runs_on_is_reported_stopped_at_once(tmp_path):
    # Its supervisor (system/reaper.py) must not hold the pipe open: the end of stdout is what tells.
    problems = Problems()
    async with McpHub([fixture_server("mute")], tmp_path, on_problem=problems) as hub:
        await _settle(hub)
        hang_up = next(tool for tool in hub.tools() if tool.name == "mcp__mute__hang_up")
        started = time.monotonic()
        with pytest.raises(ToolError, match="MCP server 'mute'"):
            await hang_up.run({}, ToolContext(workspace=tmp_path))
        assert time.monotonic() - started < 5  # the stdin-close grace, not the call timeout (120 s)
        await asyncio.sleep(0.05)  # reports are awaited by the connection task
        assert hub.status() == {"mute": "failed"}
        assert problems.seen == [("mute", "MCP server 'mute' is unavailable: it closed its stdout")]


async def test_a_failing_problem_callback_does_not_break_the_hub(tmp_path):
    def explode(server: str, message: str) -> None:
        raise RuntimeError("client gone")

    async with McpHub(
        [StdioServer("missing", "/nonexistent/x"), fixture_server()], tmp_path, on_problem=explode
    ) as hub:
        await _settle(hub)
        assert hub.status() == {"missing": "failed", "fixture": "ready"}


async def test_start_waits_for_nothing_even_with_servers_that_never_answer(tmp_path):
    hub = McpHub([fixture_server(f"s{i}", "--silent") for i in range(3)], tmp_path)
    hub.start()  # synchronous: it can only schedule the connections
    assert hub.status() == {"s0": "starting", "s1": "starting", "s2": "starting"}
    assert not await hub.wait_ready(0)
    await hub.aclose()
