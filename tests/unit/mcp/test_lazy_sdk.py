"""The MCP SDK takes about half a second to import: a process without MCP servers never loads it, and
a hub loads it off the event loop, after start() has returned."""

import subprocess
import sys

SCRIPT = """
import asyncio, sys
from iac_code.mcp import McpHub, StdioServer

async def main():
    empty = McpHub([], ".")
    empty.start()
    assert await empty.wait_ready(1)
    print("after an empty hub:", "mcp" in sys.modules)
    hub = McpHub([StdioServer("never", "/nonexistent/server")], ".")
    hub.start()
    print("after start():", "mcp" in sys.modules)
    await hub.wait_ready(30)
    print("once ready:", "mcp" in sys.modules, hub.status())
    await hub.aclose()

asyncio.run(main())
"""


def test_the_sdk_is_loaded_only_by_a_hub_with_servers_and_after_start_returns():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "after an empty hub: False",
        "after start(): False",
        "once ready: True {'never': 'failed'}",
    ]
