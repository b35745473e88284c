"""Benchmark the MCP hub against the fixture MCP server over stdio; prints medians.

- hub start with 0 and 3 stdio servers: until start() returns (background: should be ~0) and until
  every server is ready;
- one tool call (echo) through the hub's adapter, against the same call through the SDK's own
  Client and stdio transport: the difference is what the adapter and our transport add;
- importing iac_code.mcp in the agent, and the SDK that the first hub loads in a worker thread;
- through the real agent over stdio (scripted model): session/new with 0 and 3 stdio servers (the
  response, not the servers' start), and a tool call as the client sees it, from its `in_progress`
  update to its `completed` one, against the same call (echo) made directly with the SDK.

Run: .venv/bin/python bench/mcp_servers.py
(Not bench/mcp.py: a module named mcp beside the scripts would shadow the SDK.)
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Replace the script directory with the repo root (as the other benchmarks do).
sys.path[0] = str(Path(__file__).resolve().parents[1])

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from tests.e2e.acp.wire import AgentProcess, model_env  # noqa: E402
from tests.e2e.mcp.servers import REPO, acp_form, fixture_server  # noqa: E402
from tests.e2e.mcp.through_agent import allow, call, open_session, tool_updates  # noqa: E402
from tests.fakes.openai_server import ScriptedOpenAI  # noqa: E402

from iac_code.mcp import McpHub  # noqa: E402
from iac_code.tools.base import ToolContext  # noqa: E402

RUNS = 5
CALLS = 300
AGENT_CALLS = 40


async def _start(servers: int, work: Path) -> tuple[float, float]:
    hub = McpHub([fixture_server(f"s{i}") for i in range(servers)], work)
    started = time.perf_counter()
    hub.start()
    returned = time.perf_counter() - started
    assert await hub.wait_ready(60), hub.status()
    ready = time.perf_counter() - started
    await hub.aclose()
    return returned, ready


async def _through_hub(work: Path) -> float:
    async with McpHub([fixture_server()], work) as hub:
        assert await hub.wait_ready(60)
        (echo,) = [tool for tool in hub.tools() if tool.name == "mcp__fixture__echo"]
        ctx = ToolContext(workspace=work)
        return await _per_call(lambda: echo.run({"text": "hello"}, ctx))


async def _through_sdk(work: Path) -> float:
    spec = fixture_server()
    params = StdioServerParameters(command=spec.command, args=list(spec.args), env=dict(spec.env), cwd=work)
    async with Client(params, cache=None) as client:
        await client.list_tools()
        return await _per_call(lambda: client.call_tool("echo", {"text": "hello"}))


async def _per_call(call) -> float:
    for _ in range(20):  # warm up
        await call()
    timings = []
    for _ in range(CALLS):
        started = time.perf_counter()
        await call()
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def _import_ms(module: str) -> float:
    """What importing `module` adds to a process that already has the agent's ACP layer loaded."""
    code = f"import time, iac_code.acp.agent; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    runs = [
        float(subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, capture_output=True, text=True).stdout)
        for _ in range(RUNS)
    ]
    return statistics.median(runs) * 1000


class _TimedAgent(AgentProcess):
    """The agent process, each message stamped with when its line was read (`_read_at`)."""

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            message["_read_at"] = time.perf_counter()
            self._inbox.put(message)
        self._inbox.put(None)


def _session_new_ms(agent: AgentProcess, work: Path, servers: list[dict]) -> float:
    """session/new's response time (the servers' start is not timed, but waited for before closing)."""
    started = time.perf_counter()
    session_id, seen = open_session(agent, work, servers, ready=[server["name"] for server in servers])
    (response,) = [m for m in seen if "result" in m]
    agent.result("session/close", {"sessionId": session_id})
    return (response["_read_at"] - started) * 1000


def _status(message: dict) -> str | None:
    return next((update.get("status") for update in tool_updates([message])), None)


def _through_agent(work: Path) -> tuple[dict[int, float], float]:
    """(session/new's ms by stdio server count, a tool call's ms from in_progress to completed as the client
    reads them)."""
    with ScriptedOpenAI(default={"text": "ok"}) as model:
        agent = _TimedAgent(model_env(model.url, work / "config"))
        agent.initialize()
        three = [acp_form(fixture_server(f"s{i}")) for i in range(3)]
        _session_new_ms(agent, work, three)  # warm-up: the ACP SDK, then the MCP SDK, load in threads
        new = {n: statistics.median(_session_new_ms(agent, work, three[:n]) for _ in range(RUNS)) for n in (0, 3)}
        session_id, _ = open_session(agent, work, three[:1], ready=["s0"])
        calls = []
        for _ in range(AGENT_CALLS):
            model.add(call("mcp__s0__echo", text="hello"), {"text": "ok"})
            _, seen = agent.prompt(session_id, "go", allow("allow_always"))  # asked once
            running, done = [m for m in seen if _status(m) in ("in_progress", "completed")]
            calls.append(done["_read_at"] - running["_read_at"])
        agent.close()
    return new, statistics.median(calls) * 1000


async def main() -> None:
    work = Path(tempfile.mkdtemp())
    starts = {n: [await _start(n, work) for _ in range(RUNS)] for n in (0, 3)}
    hub_calls = [await _through_hub(work) for _ in range(RUNS)]
    sdk_calls = [await _through_sdk(work) for _ in range(RUNS)]
    for n, figures in starts.items():
        returned = statistics.median(f[0] for f in figures) * 1e6
        ready = statistics.median(f[1] for f in figures) * 1000
        print(f"hub with {n} stdio servers: start() returns in {returned:.0f} µs; all ready after {ready:.0f} ms")
    hub_ms, sdk_ms = statistics.median(hub_calls) * 1000, statistics.median(sdk_calls) * 1000
    print(f"echo through the hub's tool adapter: {hub_ms:.2f} ms per call")
    print(f"echo through the SDK's Client alone: {sdk_ms:.2f} ms per call")
    print(f"  added by the adapter and our stdio transport: {hub_ms - sdk_ms:+.2f} ms (goal ≤ 5 ms)")
    print(f"importing iac_code.mcp in the agent: {_import_ms('iac_code.mcp'):.0f} ms (no SDK)")
    print(
        f"loading the SDK (done by the first hub, in a worker thread): {_import_ms('iac_code.mcp.connection'):.0f} ms"
    )
    new, agent_ms = _through_agent(work)
    print("through the agent over stdio (scripted model):")
    print(f"  session/new with no server: {new[0]:.1f} ms; with 3 stdio servers: {new[3]:.1f} ms", end="")
    print(f" (added: {new[3] - new[0]:+.1f} ms, goal ≤ 50 ms)")
    print(f"  a tool call, in_progress → completed as the client reads them: {agent_ms:.2f} ms")
    print(f"  added by the agent over the SDK's own call: {agent_ms - sdk_ms:+.2f} ms (goal ≤ 5 ms)")
    print(f"(medians of {RUNS} runs, {CALLS} calls each, {AGENT_CALLS} through the agent, on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    asyncio.run(main())
