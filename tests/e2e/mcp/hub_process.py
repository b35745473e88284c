"""An agent stand-in for the lifetime tests: a process with a hub and one stdio fixture server.

`python -m tests.e2e.mcp.hub_process MODE MARKER PID_FILE` starts the hub (its server ignores the end of
its stdin, so only a kill stops it, and writes the pids of the processes it started out of its process
group to PID_FILE: see tree_server), prints one JSON line with the server's pid and the pid of a
helper process the server started, then:
  wait  sleeps (the test kills it with SIGKILL);
  exit  leaves the interpreter without closing the hub (atexit must stop the server).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from tests.e2e.mcp.servers import pid_of, tree_server

from iac_code.mcp import McpHub
from iac_code.tools.base import ToolContext


async def start(marker: str, pid_file: Path) -> dict[str, int]:
    hub = McpHub([tree_server("fixture", pid_file, "--linger", marker)], Path.cwd())
    hub.start()
    assert await hub.wait_ready(20), hub.status()
    tools = {tool.name: tool for tool in hub.tools()}
    ctx = ToolContext(workspace=Path.cwd())
    where = (await tools["mcp__fixture__whereami"].run({}, ctx)).text
    helper = (await tools["mcp__fixture__start_helper"].run({}, ctx)).text
    return {"server": pid_of(where), "helper": int(helper)}


def main(mode: str, marker: str, pid_file: str) -> None:
    loop = asyncio.new_event_loop()  # never closed: no task is cancelled, nothing cleans up but atexit
    print(json.dumps(loop.run_until_complete(start(marker, Path(pid_file)))), flush=True)
    if mode == "wait":
        time.sleep(600)
    sys.exit(0)


if __name__ == "__main__":
    main(*sys.argv[1:4])
