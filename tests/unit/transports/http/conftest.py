"""An in-process HTTP server (real uvicorn on 127.0.0.1, ephemeral port) around the fake agent."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from tests.unit.transports.http.fake_agent import serve_fake

from iac_code.transports.http.app import HttpOptions, create_app
from iac_code.transports.http.backend import Backend
from iac_code.transports.http.connections import ServeFn

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}


@dataclass
class LiveServer:
    url: str
    app: Starlette

    @property
    def registry(self):
        return self.app.state.registry


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self):  # tests own the process's signals
        yield


@contextlib.asynccontextmanager
async def live_server(
    options: HttpOptions | None = None, serve: ServeFn = serve_fake, backend: Backend | None = None
) -> AsyncIterator[LiveServer]:
    app = create_app(serve, options or HttpOptions(), backend)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, lifespan="on", timeout_graceful_shutdown=1)
    server = _QuietServer(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield LiveServer(f"http://127.0.0.1:{port}", app)
    finally:
        app.state.begin_shutdown()
        server.should_exit = True
        await task


@pytest.fixture
async def server() -> AsyncIterator[LiveServer]:
    async with live_server() as live:
        yield live


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as http:
        yield http


async def initialize(http: httpx.AsyncClient, url: str, **headers: str) -> str:
    response = await http.post(f"{url}/acp", json=INIT, headers=headers)
    assert response.status_code == 200, response.text
    return response.headers["acp-connection-id"]


async def post(
    http: httpx.AsyncClient, url: str, conn_id: str, message: dict[str, Any], **headers: str
) -> httpx.Response:
    return await http.post(f"{url}/acp", json=message, headers={"Acp-Connection-Id": conn_id, **headers})


class SseReader:
    """Reads SSE events (id, event, data) from an open streaming response."""

    def __init__(self, response: httpx.Response) -> None:
        self._lines = response.aiter_lines()
        self.comments: list[str] = []

    async def next_event(self, timeout: float = 5) -> dict[str, Any]:
        return await asyncio.wait_for(self._next_event(), timeout)

    async def _next_event(self) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        async for line in self._lines:
            if line == "":
                if fields:
                    if "data" in fields:
                        fields["data"] = json.loads(fields["data"])
                    return fields
                continue
            if line.startswith(":"):
                self.comments.append(line)
                continue
            name, _, value = line.partition(": ")
            fields[name] = value
        raise EOFError("stream ended")

    async def until(self, predicate, timeout: float = 5) -> list[dict[str, Any]]:
        """Events up to and including the first whose data satisfies `predicate`."""
        seen: list[dict[str, Any]] = []
        while True:
            event = await self.next_event(timeout)
            seen.append(event)
            if "data" in event and predicate(event["data"]):
                return seen


@contextlib.asynccontextmanager
async def open_stream(http: httpx.AsyncClient, url: str, conn_id: str, **headers: str) -> AsyncIterator[SseReader]:
    async with http.stream("GET", f"{url}/acp", headers={"Acp-Connection-Id": conn_id, **headers}) as response:
        assert response.status_code == 200, await response.aread()
        yield SseReader(response)


def new_session(request_id: int = 2) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}}


def prompt(session_id: str, text: str, request_id: int = 3) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "session/prompt",
        "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
    }


def is_response(request_id: int):
    return lambda data: data.get("id") == request_id and "method" not in data
