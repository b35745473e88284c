"""No orphans: stdio servers and all they started (even out of their process group) stop on aclose, at
interpreter exit, and with the agent's SIGKILL."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.e2e.mcp.servers import (
    REPO,
    alive,
    fixture_server,
    marker,
    pid_of,
    processes_with,
    servers_with,
    tree_pids,
    tree_server,
    wait_until_gone,
)

from iac_code.mcp import McpHub
from iac_code.tools.base import ToolContext

pytestmark = pytest.mark.timeout(60)


async def test_aclose_kills_the_server_and_everything_it_started(tmp_path):
    pid_file = tmp_path / "tree.pids"
    async with McpHub([tree_server("fixture", pid_file)], tmp_path) as hub:
        assert await hub.wait_ready(20)
        tools = {tool.name: tool for tool in hub.tools()}
        ctx = ToolContext(workspace=tmp_path)
        server = pid_of((await tools["mcp__fixture__whereami"].run({}, ctx)).text)
        helper = int((await tools["mcp__fixture__start_helper"].run({}, ctx)).text)
        assert alive(server) and alive(helper)
        with tree_pids(pid_file) as escapees:
            await hub.aclose()
            # the setsid child and the daemon too: their process group is not the server's
            assert await asyncio.to_thread(wait_until_gone, [server, helper, *escapees], 2) == []


async def test_aclose_while_servers_are_still_starting_kills_them_at_once(tmp_path):
    word = marker()
    hub = McpHub([fixture_server(f"s{i}", "--silent", word) for i in range(3)], tmp_path)
    hub.start()
    await asyncio.to_thread(_wait_for_processes, word, 3)
    await asyncio.wait_for(hub.aclose(), 2)
    assert await asyncio.to_thread(wait_until_gone, processes_with(word), 1) == []
    assert set(hub.status().values()) == {"closed"}


def _wait_for_processes(word: str, count: int) -> None:
    for _ in range(500):
        if len(servers_with(word)) >= count:
            return
        time.sleep(0.01)
    raise AssertionError(f"{count} servers never started")


def _agent(mode: str, word: str, pid_file: Path) -> tuple[subprocess.Popen[str], dict[str, int]]:
    agent = subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.mcp.hub_process", mode, word, str(pid_file)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert agent.stdout is not None
    line = agent.stdout.readline()
    assert line, "the agent stand-in did not start its server"
    return agent, json.loads(line)


def test_the_server_and_all_it_started_die_with_an_agent_killed_by_sigkill(tmp_path):
    word, pid_file = marker(), tmp_path / "tree.pids"
    agent, pids = _agent("wait", word, pid_file)
    with tree_pids(pid_file) as escapees:
        try:
            agent.kill()
            agent.wait(10)
            # the server's supervisor gets SIGTERM from the kernel (PR_SET_PDEATHSIG) and ends its tree
            assert wait_until_gone([*pids.values(), *escapees, *processes_with(word)], 3) == []
        finally:  # what a failure left: the helper (`sleep 600`) and the server (marked)
            for pid in [pids["helper"], *processes_with(word)]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


def test_an_agent_exiting_without_closing_its_hub_leaves_nothing_behind(tmp_path):
    word, pid_file = marker(), tmp_path / "tree.pids"
    agent, pids = _agent("exit", word, pid_file)
    with tree_pids(pid_file) as escapees:
        assert agent.wait(10) == 0
        assert wait_until_gone([*pids.values(), *escapees], 3) == []  # atexit stopped the server's tree
    assert processes_with(word) == []
