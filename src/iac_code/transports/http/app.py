"""`iac-code acp --transport http`: ACP over HTTP+SSE (Starlette on Uvicorn), all routes at `/acp`.

POST `initialize` opens a connection and answers in the body with `Acp-Connection-Id`; every other
POST needs that header and answers 202, its result arriving on the connection's SSE stream (GET).
DELETE closes the connection. A GET with `Upgrade: websocket` carries the same messages both ways on one
socket (websocket.py). Also usable unchanged by the official SDK's Streamable HTTP and WebSocket clients.
The web client is served beside it (static.py): its page at `/`, its files under `/web/`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from acp.http.protocol import CONNECTION_ID_HEADER, SESSION_ID_HEADER, is_initialize_request
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.types import Receive, Scope, Send

from iac_code import __version__
from iac_code.observability import metrics
from iac_code.observability.record import stream_closed, stream_opened
from iac_code.transports.http.auth import (
    Authenticator,
    AuthMiddleware,
    request_credential,
    request_principal,
)
from iac_code.transports.http.backend import Backend, OpenStream, Refusal, ResponseHeaders
from iac_code.transports.http.connections import MAX_REQUESTS_IN_FLIGHT, ServeFn
from iac_code.transports.http.events import KEEPALIVE_FRAME, EventLimits, last_event_id
from iac_code.transports.http.limits import PrincipalRequests
from iac_code.transports.http.local import LocalBackend
from iac_code.transports.http.metrics import RequestMetrics, metrics_endpoint
from iac_code.transports.http.static import static_routes
from iac_code.transports.http.websocket import AcpWebSockets
from iac_code.transports.jsonrpc import parse_message

logger = logging.getLogger(__name__)

SHUTDOWN_GRACE_SECONDS = 2


@dataclass
class HttpOptions:
    authenticator: Authenticator = field(default_factory=Authenticator)  # no way to authenticate: all local
    allowed_origins: list[str] = field(default_factory=list)
    loopback_only: bool = False  # bound to a loopback address: only loopback Host headers are served
    allowed_hosts: list[str] = field(default_factory=list)  # … and these names (a reverse proxy's)
    max_body_bytes: int = 16 * 1024 * 1024
    idle_timeout: float = 600.0
    max_connections: int = 4096  # each holds an agent task and its buffers; past it initialize gets 503
    max_requests_in_flight: int = MAX_REQUESTS_IN_FLIGHT  # per connection, queued + running; past it 429
    initialize_timeout: float = 30.0
    keepalive_seconds: float = 15.0
    limits: EventLimits = field(default_factory=EventLimits)
    header_timeout: float = 10.0  # seconds a socket has to send a whole request head
    max_sockets: int = 0  # open sockets at once (0: from the descriptor limit, sockets.socket_cap)
    # What one principal may hold at once (limits.py); None: no limit (no authentication: all are local).
    principal_connections: int | None = None
    principal_requests: int | None = None
    websocket_without_acp: bool = False  # accept upgrades that do not offer the `acp` subprotocol


def create_app(serve: ServeFn, options: HttpOptions, backend: Backend | None = None) -> Starlette:
    """The ASGI app; `serve(transport)` runs one ACP connection until its transport says EOF. Connections
    live in this process unless another `backend` is given (cluster.py, which brings its own `serve`)."""
    if backend is None:
        backend = LocalBackend(
            serve,
            idle_timeout=options.idle_timeout,
            max_connections=options.max_connections,
            limits=options.limits,
            max_in_flight=options.max_requests_in_flight,
            principal_connections=options.principal_connections,
        )
    started = time.monotonic()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await backend.start()
        try:
            yield
        finally:
            await backend.stop("the server is shutting down")

    async def health(request: Request) -> Response:
        status, fields = await backend.health()
        body: dict[str, Any] = {"status": "ok" if status == 200 else "unavailable", "version": __version__}
        body["uptimeSeconds"] = round(time.monotonic() - started, 3)
        return JSONResponse({**body, **fields}, status_code=status)

    async def post(request: Request) -> Response:
        return await _post(request, backend, options)

    async def get(request: Request) -> Response | EventStream:
        return await _get(request, backend, options)

    async def delete(request: Request) -> Response:
        try:
            await backend.close(request.headers.get(CONNECTION_ID_HEADER), request_principal(request.scope))
        except Refusal as refusal:
            return _error(refusal.status, refusal.message)
        return JSONResponse({"status": "closed"})

    websockets = AcpWebSockets(
        backend,
        options.authenticator,
        initialize_timeout=options.initialize_timeout,
        keepalive_seconds=options.keepalive_seconds,
        require_acp=not options.websocket_without_acp,
    )

    def begin_shutdown() -> None:
        backend.begin_shutdown()
        websockets.begin_shutdown()

    routes: list[BaseRoute] = [
        Route("/acp", post, methods=["POST"]),
        Route("/acp", get, methods=["GET"]),
        Route("/acp", delete, methods=["DELETE"]),
        WebSocketRoute("/acp", websockets.serve),
        Route("/health", health, methods=["GET"]),
        Route("/metrics", metrics_endpoint, methods=["GET"]),
        *static_routes(),  # the web client: its page at / and its files under /web/
    ]
    registry = backend.registry
    metrics.watch_connections(lambda: len(registry), lambda: registry.session_count)
    app = Starlette(routes=routes, lifespan=lifespan)
    if options.principal_requests is not None:  # inside AuthMiddleware: it counts its principals
        app.add_middleware(PrincipalRequests, limit=options.principal_requests)
    app.add_middleware(
        AuthMiddleware,
        authenticator=options.authenticator,
        allowed_origins=options.allowed_origins,
        loopback_only=options.loopback_only,
        allowed_hosts=options.allowed_hosts,
    )
    if backend.response_headers:
        app.add_middleware(ResponseHeaders, headers=backend.response_headers)
    paths = frozenset(route.path for route in routes if isinstance(route, Route | WebSocketRoute))
    app.add_middleware(RequestMetrics, routes=paths)  # outermost: counts all
    app.state.backend = backend
    app.state.registry = backend.registry
    app.state.begin_shutdown = begin_shutdown  # synchronous: ends every stream, socket and agent loop
    app.state.websockets = websockets
    return app


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _post(request: Request, backend: Backend, options: HttpOptions) -> Response:
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json":
        return _error(415, "Content-Type must be application/json")
    try:
        body = await _read_body(request, options.max_body_bytes)
    except _BodyTooLarge:
        return _error(413, f"request body exceeds {options.max_body_bytes} bytes")
    except ClientDisconnect:
        return Response(status_code=400)
    message, problem = parse_message(body)
    if message is None:
        return JSONResponse({"error": problem[1], "code": problem[0]}, status_code=400)
    try:
        if message.get("method") == "initialize":
            if not is_initialize_request(message):
                return _error(400, "initialize must be a request with an id")
            principal = request_principal(request.scope)
            connection_id, response = await backend.initialize(message, options.initialize_timeout, principal)
            return JSONResponse(response, headers={CONNECTION_ID_HEADER: connection_id})
        await backend.post(request.headers.get(CONNECTION_ID_HEADER), message, request_principal(request.scope))
    except Refusal as refusal:
        return _error(refusal.status, refusal.message)
    return Response(status_code=202)


class _BodyTooLarge(Exception):
    pass


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)


async def _get(request: Request, backend: Backend, options: HttpOptions) -> Response | EventStream:
    accept = request.headers.get("accept", "*/*")
    if not any(kind in accept for kind in ("text/event-stream", "*/*", "text/*")):
        return _error(406, "GET /acp serves text/event-stream")
    try:
        after = last_event_id(request.headers.get("last-event-id"))
    except ValueError as exc:
        return _error(400, str(exc))
    stream = request.headers.get(SESSION_ID_HEADER) or None
    credential = request_credential(request.scope)
    try:
        connection_id = request.headers.get(CONNECTION_ID_HEADER)
        opened = await backend.open_stream(connection_id, stream, after, credential.principal)
    except Refusal as refusal:
        return _error(refusal.status, refusal.message)
    authenticator = options.authenticator
    ending = functools.partial(authenticator.until_invalid, credential) if credential.can_end else None
    return EventStream(opened, options.keepalive_seconds, ending)


class EventStream:
    """The SSE response of one stream; it notices a client disconnect at once, not at the next write, and ends
    when `ending` returns (the credential stopped holding: the reason goes out as a comment first)."""

    headers = [
        (b"content-type", b"text/event-stream; charset=utf-8"),
        (b"cache-control", b"no-cache"),
        (b"x-accel-buffering", b"no"),
    ]

    def __init__(
        self, opened: OpenStream, keepalive: float, ending: Callable[[], Coroutine[Any, Any, str]] | None
    ) -> None:
        self._opened = opened
        self._ending = ending
        self._reader = opened.reader
        self._replay = opened.replay
        self._keepalive = keepalive
        self._farewell: bytes | None = None  # the comment that ends a stream whose credential stopped holding

    async def _until_credential_ends(self, ending: Callable[[], Coroutine[Any, Any, str]]) -> None:
        self._farewell = b": %s: the stream ends\n\n" % (await ending()).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        stream_opened()
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.headers})
            pump = asyncio.create_task(self._pump(send))
            tasks = {pump, asyncio.create_task(_wait_for_disconnect(receive))}
            if self._ending is not None:
                tasks.add(asyncio.create_task(self._until_credential_ends(self._ending)))
            try:
                done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
            if self._farewell is None and (pump not in done or pump.exception() is not None):
                return  # the client left, or the stream broke: nothing more to send
            with contextlib.suppress(OSError):
                await send({"type": "http.response.body", "body": self._farewell or b"", "more_body": False})
        finally:
            stream_closed()
            self._reader.detach()
            self._opened.on_end()

    async def _pump(self, send: Send) -> None:
        if self._replay:
            replayed = b"".join(e.frame for e in self._replay)
            await send({"type": "http.response.body", "body": replayed, "more_body": True})
        while (batch := await self._reader.next_batch(self._keepalive)) is not None:
            if not batch:
                await send({"type": "http.response.body", "body": KEEPALIVE_FRAME, "more_body": True})
                continue
            try:
                await send({"type": "http.response.body", "body": b"".join(e.frame for e in batch), "more_body": True})
            except BaseException:
                self._reader.give_back(batch)
                raise
            self._reader.delivered(batch)


async def _wait_for_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
