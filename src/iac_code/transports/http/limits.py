"""What one principal may hold of a shared server, so that no principal can fill the server's pools alone.

- ACP connections: `principal_connections` open at once (`IAC_CODE_HTTP_PRINCIPAL_CONNECTIONS`); past it
  `initialize` (a POST, or the first frame of a WebSocket) is refused with 429 (`connections_refusal`, by the
  backend where it creates a connection: `LocalBackend.new_connection`).
- Requests open at once: `principal_requests` (`IAC_CODE_HTTP_PRINCIPAL_REQUESTS`): SSE streams, WebSockets and
  requests being read or answered; past it 429 (`PrincipalRequests`, a middleware inside auth.AuthMiddleware).

Without authentication everyone is the one local user, so there is no principal to hold apart: no limit here
(`--max-connections` and the socket cap still hold).
"""

from __future__ import annotations

import logging
from collections import Counter

from starlette.types import ASGIApp, Receive, Scope, Send

from iac_code.principals import Principal
from iac_code.transports.http.auth import Source, found_credential, refuse

logger = logging.getLogger(__name__)


def connections_refusal(principal: Principal, limit: int) -> str:
    return (
        f"too many connections for {principal.name} ({limit}, IAC_CODE_HTTP_PRINCIPAL_CONNECTIONS): "
        "close one (DELETE /acp, or end its WebSocket) or retry later"
    )


class PrincipalRequests:
    """At most `limit` requests of one principal open at once; past it 429, with a body saying so."""

    def __init__(self, app: ASGIApp, *, limit: int) -> None:
        self._app = app
        self._limit = limit
        self._open: Counter[str] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        credential = found_credential(scope)
        if credential is None or credential.source is Source.NONE:  # public files; or no authentication at all
            await self._app(scope, receive, send)
            return
        name = credential.principal.name
        if self._open[name] >= self._limit:
            logger.warning("refused a request of %s: %d of its requests are open, the limit", name, self._open[name])
            message = (
                f"too many open requests for {name} ({self._limit}, IAC_CODE_HTTP_PRINCIPAL_REQUESTS: "
                "streams, WebSockets and requests in progress); close a stream or retry later"
            )
            await refuse(scope, receive, send, 429, message)
            return
        self._open[name] += 1
        try:
            await self._app(scope, receive, send)
        finally:
            self._open[name] -= 1
            if not self._open[name]:
                del self._open[name]
