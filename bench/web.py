"""The web client and the WebSocket transport, measured against the real `iac-code acp --transport http` process.

Prints: the page's first load at `/` to an interactive prompt, measured in Debian's Chromium (the client marks
`iac-code:interactive` when its prompt can be used; goal ≤ 300 ms on loopback); a one-line prompt's round trip over a
WebSocket and over HTTP+SSE, sequential on one connection each (goal: WebSocket no slower); the server's RSS with
1,000 idle WebSocket connections, each initialized (goal ≤ 150 MB). Run: .venv/bin/python bench/web.py
"""

from __future__ import annotations

import asyncio
import json
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.http import Connection, client, rss_mb
from selenium.webdriver.remote.webdriver import WebDriver
from tests.e2e.http.server_process import http_server
from tests.e2e.web.conftest import start_browser
from tests.fakes.openai_server import ScriptedOpenAI
from websockets.asyncio.client import ClientConnection, connect

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}


class Socket:
    """One ACP connection over a WebSocket."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket
        self.session_id = ""
        self._next_id = 10

    @classmethod
    async def open(cls, url: str, cwd: str | None = None) -> Socket:
        opened = cls(await connect(url.replace("http://", "ws://"), subprotocols=["acp"], max_size=None))  # type: ignore[list-item]
        await opened.request("initialize", INIT["params"])
        if cwd is not None:
            created = await opened.request("session/new", {"cwd": cwd, "mcpServers": []})
            opened.session_id = created["result"]["sessionId"]
        return opened

    async def request(self, method: str, params: dict) -> dict:
        self._next_id += 1
        request_id = self._next_id
        await self.socket.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
        while True:
            incoming = json.loads(await self.socket.recv())
            if incoming.get("id") == request_id and "method" not in incoming:
                return incoming

    async def prompt(self, text: str) -> dict:
        return await self.request(
            "session/prompt", {"sessionId": self.session_id, "prompt": [{"type": "text", "text": text}]}
        )


async def timed(prompt: Callable[[str], Awaitable[dict]]) -> float:
    started = time.perf_counter()
    await prompt("hello")
    return time.perf_counter() - started


async def round_trips(url: str, workspace: str, rounds: int) -> tuple[list[float], list[float]]:
    """Seconds per one-line prompt over a WebSocket and over HTTP+SSE, one connection each, taken in turns
    (alternating which goes first) so that the machine's drift weighs on both alike."""
    socket = await Socket.open(url, workspace)
    async with client() as http:
        sse = Connection(http, url, workspace)
        await sse.open()
        await socket.prompt("warm up")
        await sse.prompt("warm up")
        over_socket, over_sse = [], []
        for round_number in range(rounds):
            if round_number % 2:
                over_sse.append(await timed(sse.prompt))
                over_socket.append(await timed(socket.prompt))
            else:
                over_socket.append(await timed(socket.prompt))
                over_sse.append(await timed(sse.prompt))
        await sse.close()
    await socket.socket.close()
    return over_socket, over_sse


async def idle_sockets_memory(url: str, pid: int, count: int) -> tuple[float, float, int]:
    before = rss_mb(pid)
    sockets: list[Socket] = []
    for start in range(0, count, 100):
        sockets += await asyncio.gather(*(Socket.open(url) for _ in range(start, min(count, start + 100))))
    await asyncio.sleep(1)
    async with client() as http:
        health = (await http.get(url.removesuffix("/acp") + "/health")).json()
    held = rss_mb(pid)
    await asyncio.gather(*(s.socket.close() for s in sockets))
    return before, held, health["connections"]


def interactive_after(driver: WebDriver, url: str) -> float:
    """Load `url`; milliseconds from navigation start to the client's `iac-code:interactive` mark."""
    driver.get("about:blank")
    driver.get(url)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        mark = driver.execute_script(
            "const m = performance.getEntriesByName('iac-code:interactive'); return m.length ? m[0].startTime : null"
        )
        if mark is not None:
            return float(mark)
        time.sleep(0.005)
    raise RuntimeError("the page never marked iac-code:interactive")


def first_loads(base_url: str, cold: int, warm: int) -> tuple[list[float], list[float]]:
    """Loads of `/` in a new browser profile each (nothing cached), then reloads in one profile."""
    cold_samples = []
    for _ in range(cold):
        with tempfile.TemporaryDirectory() as profile:
            driver = start_browser(Path(profile))
            try:
                cold_samples.append(interactive_after(driver, base_url + "/"))
            finally:
                driver.quit()
    with tempfile.TemporaryDirectory() as profile:
        driver = start_browser(Path(profile))
        try:
            warm_samples = [interactive_after(driver, base_url + "/") for _ in range(warm)]
        finally:
            driver.quit()
    return cold_samples, warm_samples


async def main() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(soft, 8192), hard), hard))
    with ScriptedOpenAI(default={"text": "ok"}) as model, http_server(model.url) as server:
        print("iac-code web client and WebSocket transport (real server process, instant scripted model, 127.0.0.1)")
        base = server.url.removesuffix("/acp")
        cold, warm = await asyncio.to_thread(first_loads, base, 10, 20)
        print(
            f"  / to an interactive prompt in Chromium: first load (empty cache) median {statistics.median(cold):.0f} ms, "
            f"max {max(cold):.0f} ms over {len(cold)}; reload median {statistics.median(warm):.0f} ms over {len(warm)} "
            "(goal ≤ 300 ms)"
        )
        workspace = str(server.workspace)
        rounds = 200
        ws, sse = await round_trips(server.url, workspace, rounds)
        ws_ms, sse_ms = statistics.median(ws) * 1000, statistics.median(sse) * 1000
        print(
            f"  one-line prompt round trip, median of {rounds} each, taken in turns: WebSocket {ws_ms:.1f} ms, HTTP+SSE {sse_ms:.1f} ms "
            f"(WebSocket/SSE = {ws_ms / sse_ms:.2f}; goal ≤ 1)"
        )
        before, held, open_connections = await idle_sockets_memory(server.url, server.process.pid, 1000)
        print(
            f"  server RSS: {before:.0f} MB before, {held:.0f} MB with {open_connections} idle WebSocket connections "
            f"(+{held - before:.0f} MB; goal ≤ 150 MB)"
        )


if __name__ == "__main__":
    asyncio.run(main())
