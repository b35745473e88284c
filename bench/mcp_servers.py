"""Benchmark the MCP hub against the fixture MCP server over stdio; prints medians.

- hub start with 0 and 3 stdio servers: until start() returns (background: should be ~0) and until
  every server is ready;
- one tool call (echo) through the hub's adapter, against the same call through the SDK's own
  Client and stdio transport: the difference is what the adapter and our transport add;
- importing iac_code.mcp in the agent, and the SDK that the first hub loads in a worker thread.

Run: .venv/bin/python bench/mcp_servers.py
(Not bench/mcp.py: a module named mcp beside the scripts would shadow the SDK.)
"""

from __future__ import annotations

import asyncio
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
from tests.e2e.mcp.servers import REPO, fixture_server  # noqa: E402

from iac_code.mcp import McpHub  # noqa: E402
from iac_code.tools.base import ToolContext  # noqa: E402

RUNS = 5
CALLS = 300


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
    print(f"(medians of {RUNS} runs, {CALLS} calls each, on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    asyncio.run(main())
