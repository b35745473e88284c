"""An asyncio WebSocket client for e2e tests (the `websockets` package): JSON-RPC messages on one socket."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from tests import evidence
from tests.acp_schema import check
from tests.e2e.http.client import INIT, agent_text, is_response
from websockets.asyncio.client import ClientConnection, connect


def ws_url(http_url: str) -> str:
    return "ws" + http_url.removeprefix("http")


def bearer_subprotocol(token: str) -> str:
    """How a browser presents a token on a WebSocket: base64url, without '=' padding."""
    return "bearer." + base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")


class AcpSocket:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.transcript = evidence.Transcript()
        self.conformance = check.Conformance("WebSocket client")
        evidence.watch(self)

    def evidence_title(self) -> str:
        return f"WebSocket client (connection {self.connection_id})"

    def evidence(self) -> str:
        return f"last protocol messages:\n{self.transcript.text()}"

    def finished(self) -> bool:
        return self.ws.close_code is not None

    @property
    def connection_id(self) -> str:
        return self.ws.response.headers["Acp-Connection-Id"]

    @property
    def headers(self):
        return self.ws.response.headers

    async def send(self, message: dict[str, Any]) -> None:
        self.transcript.sent(message)
        self.conformance.sent(message)
        await self.ws.send(json.dumps(message))

    async def next(self, timeout: float = 15) -> dict[str, Any]:
        message = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
        self.transcript.received(message)
        violation = self.conformance.received(message)
        if violation is not None:
            raise violation
        return message

    async def until(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 15) -> list[dict[str, Any]]:
        """Messages up to and including the first that satisfies `predicate`."""
        seen = []
        while True:
            seen.append(await self.next(timeout))
            if predicate(seen[-1]):
                return seen

    async def initialize(self) -> dict[str, Any]:
        await self.send(INIT)
        return (await self.until(is_response(1)))[-1]

    async def new_session(self, cwd: str, request_id: int = 2) -> str:
        await self.send(
            {"jsonrpc": "2.0", "id": request_id, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}}
        )
        return (await self.until(is_response(request_id)))[-1]["result"]["sessionId"]

    async def prompt(self, session_id: str, text: str, request_id: int = 3) -> None:
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params})

    async def answer_permission(self, asked: dict[str, Any], kind: str) -> None:
        """Answer a session/request_permission with its option of `kind` (allow_once, reject_once…)."""
        option = next(o for o in asked["params"]["options"] if o["kind"] == kind)
        outcome = {"outcome": "selected", "optionId": option["optionId"]}
        await self.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"outcome": outcome}})


@contextlib.asynccontextmanager
async def acp_socket(
    url: str,
    *,
    headers: dict[str, str] | None = None,
    subprotocols: list[str] | None = None,
    initialize: bool = True,
    **options: Any,
) -> AsyncIterator[AcpSocket]:
    """A socket on `url` (the server's http://…/acp), initialized unless told not to."""
    offered = ["acp"] if subprotocols is None else subprotocols
    async with connect(
        ws_url(url), additional_headers=headers, subprotocols=offered or None, max_size=None, **options
    ) as ws:
        socket = AcpSocket(ws)
        if initialize:
            await socket.initialize()
        yield socket


def text_of(messages: list[dict[str, Any]]) -> str:
    """The agent's message text among socket messages."""
    return agent_text([{"data": m} for m in messages])


def is_method(method: str) -> Callable[[dict[str, Any]], bool]:
    return lambda message: message.get("method") == method
