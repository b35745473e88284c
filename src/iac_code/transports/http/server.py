"""Running the HTTP app: its options from the command line and settings, the bind check, and uvicorn on the
listening socket (its h11 protocol with a head deadline and a socket cap: sockets.py; graceful shutdown that
ends SSE streams and WebSockets first)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import uvicorn
from starlette.applications import Starlette

from iac_code.config import Settings
from iac_code.transports.http.app import SHUTDOWN_GRACE_SECONDS, HttpOptions, create_app
from iac_code.transports.http.auth import TOKEN_ENV, Authenticator, is_loopback_host
from iac_code.transports.http.backend import Backend
from iac_code.transports.http.connections import ServeFn
from iac_code.transports.http.sockets import AcceptErrorsThrottled, bounded_h11, socket_cap
from iac_code.transports.http.websocket import AcpWebSockets

logger = logging.getLogger(__name__)


def options_from_args(args: argparse.Namespace, settings: Settings) -> HttpOptions:
    if args.insecure_jwks:
        settings = replace(settings, insecure_jwks=True)
    authenticator = Authenticator.from_settings(settings)
    per_principal = authenticator.required  # without authentication there is one principal: no such limit
    return HttpOptions(
        authenticator=authenticator,
        allowed_origins=list(args.allowed_origin),
        loopback_only=is_loopback_host(args.host),
        allowed_hosts=list(args.allowed_host),
        max_body_bytes=args.max_body_bytes,
        idle_timeout=args.idle_timeout,
        max_connections=args.max_connections,
        header_timeout=settings.http_header_timeout,
        max_sockets=settings.http_max_sockets,
        principal_connections=settings.http_principal_connections if per_principal else None,
        principal_requests=settings.http_principal_requests if per_principal else None,
        websocket_without_acp=settings.websocket_without_acp,
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
        self._loop.set_exception_handler(AcceptErrorsThrottled(self._loop))
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
        http=bounded_h11(options.header_timeout, socket_cap(options.max_sockets)),
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
