"""Helpers for the MCP tests: server specs, and finding processes in /proc."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from tests.e2e import npm
from tests.processes import wait_for_text

from iac_code.mcp import ChangeCallback, McpHub, ServerSpec, StdioServer

REPO = Path(__file__).resolve().parents[3]
SECRET = "s3cr3t-token-value"
EVERYTHING = npm.NpmPackage(
    "@modelcontextprotocol/server-everything@2026.8.31", bin="mcp-server-everything", min_node=(20, 0)
)


def fixture_server(name: str = "fixture", *args: str, events: Path | None = None) -> StdioServer:
    """The fixture server over stdio; `args` may hold --crash / --silent and a marker to find it by."""
    env = {"PYTHONPATH": str(REPO), "FIXTURE_SECRET": SECRET}
    if events is not None:
        env["FIXTURE_EVENTS"] = str(events)
    return StdioServer(name, sys.executable, ("-m", "tests.fakes.mcp_server", *args), env)


def tree_server(name: str, pid_file: Path, *args: str) -> StdioServer:
    """The fixture server starting, before it serves, a `setsid` child and a double-forked daemon
    (their pids and its own go to `pid_file`): a process tree its process group does not hold."""
    return fixture_server(name, f"--escapees={pid_file}", *args)


@contextlib.contextmanager
def tree_pids(pid_file: Path) -> Iterator[list[int]]:
    """The pids a tree_server wrote (server, setsid child, daemon); whatever is left of them when the
    test ends is killed, so a failing test leaves nothing running."""
    pids = list(json.loads(wait_for_text(pid_file, 60)).values())
    try:
        yield pids
    finally:
        for pid in pids:
            if any(word in _cmdline(pid) for word in (b"313", str(pid_file).encode())):  # not a reused pid
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


def everything_server(program: npm.NodeProgram, word: str) -> StdioServer:
    """The reference server over stdio; `word` marks its process."""
    return StdioServer("everything", str(program.node), (str(program.cli), "stdio", word))


def acp_form(spec: StdioServer) -> dict[str, Any]:
    """A stdio server as an ACP client sends it in session/new."""
    env = [{"name": name, "value": value} for name, value in spec.env.items()]
    return {"name": spec.name, "command": spec.command, "args": list(spec.args), "env": env}


def marker() -> str:
    """A unique command-line word, to find a server's processes in /proc."""
    return f"--marker={uuid.uuid4().hex}"


def processes_with(word: str) -> list[int]:
    """Live (non-zombie) processes whose command line contains `word`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if word.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def servers_with(word: str) -> list[int]:
    """processes_with(word) but the supervisors (system/reaper.py) that run the servers."""
    return [pid for pid in processes_with(word) if b"reaper.py" not in _cmdline(pid)]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # gone
        return b""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_until_gone(pids: list[int], timeout: float = 5) -> list[int]:
    """The pids still alive after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while (left := [p for p in pids if alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


def wait_for_event(events: Path, event: str, timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while not (events.exists() and event in events.read_text().splitlines()):
        assert time.monotonic() < deadline, f"the fixture server never recorded {event!r}"
        time.sleep(0.02)


def pid_of(whereami: str, which: str = "pid") -> int:
    """A pid the fixture's whereami told: its own ("pid"), its parent's ("ppid"), its group ("pgid")."""
    return int(dict(word.split("=", 1) for word in whereami.split())[which])


@contextlib.asynccontextmanager
async def ready_hub(spec: ServerSpec, cwd: Path, on_change: ChangeCallback | None = None) -> AsyncIterator[McpHub]:
    """A hub with one server, ready (and no problem reported) before the test runs; closed after it."""
    problems: list[tuple[str, str]] = []
    hub = McpHub([spec], cwd, on_problem=lambda *problem: problems.append(problem), on_change=on_change)
    hub.start()
    try:
        assert await hub.wait_ready(30), hub.status()
        assert hub.status() == {spec.name: "ready"}, problems
        yield hub
    finally:
        await hub.aclose()
    assert hub.status() == {spec.name: "closed"}
    assert problems == []
