"""HTTP+SSE transport figures against the real `iac-code acp --transport http` process.

Prints: one-line prompt latency (p50/p99) with 1, 10 and 100 connections prompting at once against
an instant scripted model; server RSS with 1,000 idle connections each holding an open SSE stream;
events per second delivered on one stream. Run: .venv/bin/python bench/http.py
"""

from __future__ import annotations

import sys
from pathlib import Path

# This file is named like the stdlib `http` package: take its directory off the import path before
# anything imports `http`, and put the repository root on it instead.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

import asyncio  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import httpx  # noqa: E402
from tests.e2e.http.server_process import http_server  # noqa: E402
from tests.fakes.openai_server import ScriptedOpenAI  # noqa: E402

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}


class Connection:
    """One ACP connection with its SSE stream read into a queue of messages."""

    def __init__(self, http: httpx.AsyncClient, url: str, cwd: str = "/tmp") -> None:
        self.http = http
        self.url = url
        self.cwd = cwd
        self.id = ""
        self.inbox: asyncio.Queue[dict] = asyncio.Queue()
        self.reader: asyncio.Task[None] | None = None
        self.session_id = ""
        self._next_id = 10

    async def open(self, *, with_session: bool = True) -> None:
        response = await self.http.post(self.url, json=INIT)
        self.id = response.headers["Acp-Connection-Id"]
        opened = asyncio.Event()
        self.reader = asyncio.create_task(self._read(opened))
        await opened.wait()
        if with_session:
            created = await self.request("session/new", {"cwd": self.cwd, "mcpServers": []})
            if "result" not in created:
                raise RuntimeError(f"session/new failed: {created}")
            self.session_id = created["result"]["sessionId"]

    async def request(self, method: str, params: dict) -> dict:
        self._next_id += 1
        request_id = self._next_id
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        await self.http.post(self.url, json=message, headers={"Acp-Connection-Id": self.id})
        while True:
            incoming = await self.inbox.get()
            if incoming.get("id") == request_id and "method" not in incoming:
                return incoming

    async def prompt(self, text: str) -> dict:
        return await self.request(
            "session/prompt", {"sessionId": self.session_id, "prompt": [{"type": "text", "text": text}]}
        )

    async def _read(self, opened: asyncio.Event) -> None:
        try:
            async with self.http.stream("GET", self.url, headers={"Acp-Connection-Id": self.id}) as response:
                opened.set()
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        self.inbox.put_nowait(json.loads(line[6:]))
        except httpx.HTTPError:
            opened.set()  # the stream ended (closed by DELETE or the server)

    async def close(self) -> None:
        await self.http.delete(self.url, headers={"Acp-Connection-Id": self.id})
        if self.reader:
            self.reader.cancel()
            await asyncio.gather(self.reader, return_exceptions=True)


def client() -> httpx.AsyncClient:
    # Drop pooled sockets before uvicorn's 5 s keep-alive timeout closes them under a request.
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None, keepalive_expiry=2)
    return httpx.AsyncClient(timeout=httpx.Timeout(60, read=None), limits=limits)


async def prompt_latency(url: str, workspace: str, concurrency: int, rounds: int) -> list[float]:
    # Sessions open in the server's own (empty) workspace: in a shared directory such as /tmp, each
    # session's infrastructure summary walks whatever lies there, and IaC files of other programs
    # start the checkov and cfn-lint workers, which then compete for the cores being measured.
    # One HTTP client per connection, as so many independent clients would have: one client's pool
    # holding all 200 sockets is scanned whole on every request (httpcore), and that cost two thirds
    # of this process's CPU, more than the server it measures.
    async with contextlib.AsyncExitStack() as clients:
        https = [await clients.enter_async_context(client()) for _ in range(concurrency)]
        conns = [Connection(http, url, workspace) for http in https]
        await asyncio.gather(*(c.open() for c in conns))

        async def timed(conn: Connection) -> float:
            started = time.perf_counter()
            await conn.prompt("hello")
            return time.perf_counter() - started

        await asyncio.gather(*(timed(c) for c in conns))  # warm-up round
        samples: list[float] = []
        for _ in range(rounds):
            samples += await asyncio.gather(*(timed(c) for c in conns))
        await asyncio.gather(*(c.close() for c in conns))
    return samples


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


async def idle_streams_memory(url: str, pid: int, count: int) -> tuple[float, float, int]:
    before = rss_mb(pid)
    async with client() as http:
        conns = [Connection(http, url) for _ in range(count)]
        for start in range(0, count, 100):
            await asyncio.gather(*(c.open(with_session=False) for c in conns[start : start + 100]))
        await asyncio.sleep(1)
        health = (await http.get(url.removesuffix("/acp") + "/health")).json()
        held = rss_mb(pid)
        await asyncio.gather(*(c.close() for c in conns))
    return before, held, health["connections"]


async def events_per_second(url: str, text: str, expected_reply_id: int = 5) -> tuple[int, float]:
    """Send one prompt and count the events on the stream until its answer arrives."""
    async with client() as http:
        conn = Connection(http, url)
        await conn.open()
        started = time.perf_counter()
        params = {"sessionId": conn.session_id, "prompt": [{"type": "text", "text": text}]}
        message = {"jsonrpc": "2.0", "id": expected_reply_id, "method": "session/prompt", "params": params}
        await conn.http.post(url, json=message, headers={"Acp-Connection-Id": conn.id})
        events = 0
        while True:
            incoming = await conn.inbox.get()
            events += 1
            if incoming.get("id") == expected_reply_id:
                break
        elapsed = time.perf_counter() - started
        await conn.close()
    return events, events / elapsed


def serve_fake_agent(port: int) -> None:
    """Transport-only server: the HTTP app around the tests' fake SDK agent (no model, no tools)."""
    import uvicorn
    from tests.unit.transports.http.fake_agent import serve_fake

    from iac_code.transports.http.app import HttpOptions, create_app

    uvicorn.run(create_app(serve_fake, HttpOptions()), host="127.0.0.1", port=port, log_config=None, access_log=False)


async def transport_only_events_per_second(events: int) -> tuple[int, float]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, __file__, "--fake-agent-server", str(port)], stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/acp"
        async with client() as http:
            for _ in range(200):
                with contextlib.suppress(httpx.TransportError):
                    await http.get(url.removesuffix("/acp") + "/health")
                    break
                await asyncio.sleep(0.05)
        return await events_per_second(url, f"count {events}")
    finally:
        process.terminate()
        process.wait(10)


async def main() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(soft, 8192), hard), hard))
    with ScriptedOpenAI(default={"text": "ok"}) as model, http_server(model.url) as server:
        print("iac-code HTTP+SSE transport (real server process, instant scripted model, 127.0.0.1)")
        for concurrency, rounds in ((1, 50), (10, 10), (100, 3)):
            samples = await prompt_latency(server.url, str(server.workspace), concurrency, rounds)
            print(
                f"  one-line prompt, {concurrency:>3} connection(s) at once: "
                f"p50 {percentile(samples, 0.5) * 1000:7.1f} ms   p99 {percentile(samples, 0.99) * 1000:7.1f} ms"
                f"   ({len(samples)} prompts)"
            )
        before, held, open_connections = await idle_streams_memory(server.url, server.process.pid, 1000)
        print(
            f"  server RSS: {before:.0f} MB before, {held:.0f} MB with {open_connections} idle connections "
            f"each holding an open SSE stream (goal < 300 MB)"
        )
        model.add({"text": "x" * 20_000, "chunk_chars": 1})
        events, rate = await events_per_second(server.url, "stream")
        print(
            f"  events delivered, real agent: {events} on one stream at {rate:,.0f} events/s "
            "(a 20,000-chunk model stream; the agent merges chunks)"
        )
    events, rate = await transport_only_events_per_second(50_000)
    print(f"  events delivered, transport only (fake SDK agent): {events} on one stream at {rate:,.0f} events/s")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--fake-agent-server"]:
        serve_fake_agent(int(sys.argv[2]))
    else:
        asyncio.run(main())
