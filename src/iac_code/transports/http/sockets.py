"""The HTTP server's sockets before any request: a deadline for the request head, a cap on open sockets, and
accept errors logged once per interval.

A socket costs a file descriptor from the moment it is accepted, whoever opened it and whether it ever says
anything. Uvicorn's h11 protocol has a keep-alive timeout between requests but none for a head that never
comes (or never ends), and `limit_concurrency` answers 503 only once a request has arrived, the socket still
open. So each socket here has `header_timeout` seconds to send a whole request head (the first, and each
later one on a kept-alive socket, counted from its first byte), else it is closed; a socket accepted while
`max_sockets` are open is closed at once; and when accept() itself fails (EMFILE: no descriptor left),
asyncio's one log line with a traceback per retry becomes one line per `ACCEPT_ERROR_INTERVAL`.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

logger = logging.getLogger(__name__)

ACCEPT_ERROR_INTERVAL = 60.0  # seconds between two log lines about failing accepts
CAP_LOG_INTERVAL = 60.0  # seconds between two log lines about sockets closed at the cap
# Descriptors left for what is not a client's socket: the store, logs, the agent's commands and their pipes.
RESERVED_DESCRIPTORS = 256
_ACCEPT_FAILED = "socket.accept() out of system resource"  # asyncio's message (selector_events.py)


def socket_cap(configured: int) -> int:
    """The open sockets allowed at once: `configured`, or (0) what the descriptor limit leaves room for."""
    if configured > 0:
        return configured
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 65536
    return max(soft - RESERVED_DESCRIPTORS, soft // 2)


class _Throttled:
    """Says whether to log now, and how many times it kept quiet since it last did."""

    def __init__(self, interval: float) -> None:
        self._interval = interval
        self._last: float | None = None
        self.quiet = 0

    def due(self) -> bool:
        now = time.monotonic()
        if self._last is not None and now - self._last < self._interval:
            self.quiet += 1
            return False
        self._last = now
        return True


def bounded_h11(header_timeout: float, max_sockets: int) -> type[H11Protocol]:
    """Uvicorn's h11 protocol with a deadline for each request head and a cap on the server's open sockets."""
    at_cap = _Throttled(CAP_LOG_INTERVAL)

    class GuardedH11Protocol(H11Protocol):
        _head_deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            # Uvicorn's set of open sockets holds WebSockets too (they replace their h11 protocol in it).
            if len(self.connections) >= max_sockets:
                if at_cap.due():
                    logger.warning(
                        "closing new sockets at once: %d are open, the limit (IAC_CODE_HTTP_MAX_SOCKETS); "
                        "%d closed so since the last line",
                        len(self.connections),
                        at_cap.quiet,
                    )
                    at_cap.quiet = 0
                self.transport = transport
                transport.abort()
                return
            super().connection_made(transport)
            self._arm_head_deadline()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._waiting_for_head():
                self._arm_head_deadline()  # the first bytes of a head after a kept-alive answer
            else:
                self._disarm_head_deadline()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm_head_deadline()
            if self.flow is None:  # closed at the cap: it was never one of the open sockets
                return
            super().connection_lost(exc)

        def _waiting_for_head(self) -> bool:
            return self.conn.their_state is h11.IDLE and not self.transport.is_closing()

        def _arm_head_deadline(self) -> None:
            if self._head_deadline is None:
                self._head_deadline = self.loop.call_later(header_timeout, self._head_too_late)

        def _disarm_head_deadline(self) -> None:
            if self._head_deadline is not None:
                self._head_deadline.cancel()
                self._head_deadline = None

        def _head_too_late(self) -> None:
            self._head_deadline = None
            if self._waiting_for_head() and (self.cycle is None or self.cycle.response_complete):
                logger.debug("closed a socket that sent no whole request head within %gs", header_timeout)
                self.transport.abort()

    return GuardedH11Protocol


class AcceptErrorsThrottled:
    """The event loop's exception handler: a failing accept() logged once per interval (with how many were not
    logged), everything else handed to the handler it replaces."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._previous = loop.get_exception_handler()
        self._throttled = _Throttled(ACCEPT_ERROR_INTERVAL)

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") != _ACCEPT_FAILED:
            if self._previous is not None:
                self._previous(loop, context)
            else:
                loop.default_exception_handler(context)
            return
        if self._throttled.due():
            logger.error(
                "accepting sockets fails: %s (asyncio retries every second; %d failures not logged since the last "
                "line; next line in %gs at the earliest)",
                context.get("exception"),
                self._throttled.quiet,
                ACCEPT_ERROR_INTERVAL,
            )
            self._throttled.quiet = 0
