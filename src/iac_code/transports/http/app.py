"""`iac-code acp --transport http`: ACP over HTTP+SSE (Starlette on Uvicorn), all routes at `/acp`.

POST `initialize` opens a connection and answers in the body with `Acp-Connection-Id`; every other
POST needs that header and answers 202, its result arriving on the connection's SSE stream (GET).
DELETE closes the connection. A GET with `Upgrade: websocket` carries the same messages both ways on one
socket (websocket.py). Also usable unchanged by the official SDK's Streamable HTTP and WebSocket clients.
The web client is served beside it (static.py): its page at `/`, its files under `/web/`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from acp.http.protocol import CONNECTION_ID_HEADER, SESSION_ID_HEADER, is_initialize_request
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.types import Receive, Scope, Send

from iac_code import __version__
from iac_code.config import Settings
from iac_code.observability import metrics
from iac_code.observability.record import stream_closed, stream_opened
from iac_code.transports.http.backend import Backend, OpenStream, Refusal, ResponseHeaders
from iac_code.transports.http.connections import MAX_REQUESTS_IN_FLIGHT, ServeFn
from iac_code.transports.http.events import KEEPALIVE_FRAME, EventLimits, last_event_id
from iac_code.transports.http.guard import (
    TOKEN_ENV,
    Authenticator,
    GuardMiddleware,
    is_loopback_host,
    request_principal,
)
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
        backend, initialize_timeout=options.initialize_timeout, keepalive_seconds=options.keepalive_seconds
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
    app.add_middleware(
        GuardMiddleware,
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
    try:
        connection_id = request.headers.get(CONNECTION_ID_HEADER)
        opened = await backend.open_stream(connection_id, stream, after, request_principal(request.scope))
    except Refusal as refusal:
        return _error(refusal.status, refusal.message)
    return EventStream(opened, options.keepalive_seconds)


class EventStream:
    """The SSE response of one stream; it notices a client disconnect at once, not at the next write."""

    headers = [
        (b"content-type", b"text/event-stream; charset=utf-8"),
        (b"cache-control", b"no-cache"),
        (b"x-accel-buffering", b"no"),
    ]

    def __init__(self, opened: OpenStream, keepalive: float) -> None:
        self._opened = opened
        self._reader = opened.reader
        self._replay = opened.replay
        self._keepalive = keepalive

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        stream_opened()
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.headers})
            pump = asyncio.create_task(self._pump(send))
            watch = asyncio.create_task(_wait_for_disconnect(receive))
            try:
                done, _ = await asyncio.wait({pump, watch}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (pump, watch):
                    task.cancel()
                await asyncio.gather(pump, watch, return_exceptions=True)
            if pump in done and pump.exception() is None:
                with contextlib.suppress(OSError):
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
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


# -- running it ---------------------------------------------------------------------------------


def options_from_args(args: argparse.Namespace, settings: Settings) -> HttpOptions:
    return HttpOptions(
        authenticator=Authenticator.from_settings(settings),
        allowed_origins=list(args.allowed_origin),
        loopback_only=is_loopback_host(args.host),
        allowed_hosts=list(args.allowed_host),
        max_body_bytes=args.max_body_bytes,
        idle_timeout=args.idle_timeout,
        max_connections=args.max_connections,
    )


def bind_refusal(host: str, authenticated: bool, allow_insecure_bind: bool) -> str | None:
    """Why binding `host` is refused, or None: a non-loopback address needs authentication (a token, a
    tokens file or a JWKS) or the explicit flag."""
    if authenticated or allow_insecure_bind or is_loopback_host(host):
        return None
    return (
        f"refusing to serve on {host} without authentication: set {TOKEN_ENV} (or add tokens, or a JWKS), "
        "or pass --allow-insecure-bind to accept that anyone who can reach the port can drive the agent"
    )


class _Server(uvicorn.Server):
    """Uvicorn that ends SSE streams and WebSockets on SIGTERM/SIGINT (else they block its graceful shutdown)."""

    def __init__(self, config: uvicorn.Config, app: Starlette, token_set: bool) -> None:
        super().__init__(config)
        self._begin_shutdown: Callable[[], None] = app.state.begin_shutdown
        self._websockets: AcpWebSockets = app.state.websockets
        self._token_set = token_set
        self._loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: Any = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().startup(sockets)
        for server in self.servers:
            for sock in server.sockets:
                host, port = sock.getsockname()[:2]
                shown = f"[{host}]" if ":" in host else host
                auth = "bearer token required" if self._token_set else f"no auth ({TOKEN_ENV} not set): all local"
                logger.info(
                    "iac-code ACP over HTTP+SSE: http://%s:%s/acp (health: /health, metrics: /metrics; %s)",
                    shown,
                    port,
                    auth,
                )
                logger.info("web client: http://%s:%s/", shown, port)

    def handle_exit(self, sig: int, frame: Any) -> None:
        super().handle_exit(sig, frame)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._begin_shutdown)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # Uvicorn's own shutdown closes the sockets still open with 1012 (service restart): let them
        # close themselves first with 1001 (going away), which begin_shutdown asked for.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(SHUTDOWN_GRACE_SECONDS):
                await self._websockets.all_closed()
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Any:
        # Uvicorn re-raises the captured signal after shutdown, which would kill us with SIGTERM's
        # default action instead of returning an exit code; install the handlers without that.
        import signal

        previous = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


class _QueryStringsHidden(logging.Filter):
    """Uvicorn logs each WebSocket upgrade (and with --debug each request) with its query string; a client
    may have put a token there (the server never reads one from it): the log keeps the path only."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(_path_only(arg) for arg in record.args)
        return True


def _path_only(arg: object) -> object:
    if isinstance(arg, str) and arg.startswith("/") and "?" in arg:
        return arg.partition("?")[0] + "?…"
    return arg


_QUERY_STRINGS_HIDDEN = _QueryStringsHidden()


async def serve_http(
    serve: ServeFn, options: HttpOptions, backend: Backend | None, listener: socket.socket, *, host: str, port: int
) -> None:
    """Serve the app on `listener` until SIGTERM/SIGINT (see create_app for `serve` and `backend`)."""
    app = create_app(serve, options, backend)
    for name in ("uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).addFilter(_QUERY_STRINGS_HIDDEN)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_config=None,
        lifespan="on",
        access_log=logger.isEnabledFor(logging.DEBUG),
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
        # The modern protocol of the websockets package (its legacy one is deprecated): no task per socket.
        ws="websockets-sansio",
        ws_max_size=options.max_body_bytes,  # a larger frame is closed with 1009, as a POST body gets 413
        ws_ping_interval=options.keepalive_seconds,  # what keeps an idle socket open, as SSE keepalives do
        # No permessage-deflate: its zlib state costs ~45 KB per socket, idle or not (1,000 sockets: +45 MB
        # of the server's memory), and SSE responses go uncompressed too.
        ws_per_message_deflate=False,
    )
    await _Server(config, app, token_set=options.authenticator.required).serve(sockets=[listener])
