"""GET /metrics (Prometheus text format) and the count of every HTTP response by route, method and status.

The metrics themselves live in observability/ (the agent and the store feed them too); the app enables
them when it is built, so prometheus_client is imported when an HTTP server starts, never on stdio.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from iac_code.observability.metrics import exposition
from iac_code.observability.record import http_request


async def metrics_endpoint(request: Request) -> Response:
    body, content_type = exposition()
    return Response(body, headers={"content-type": content_type})


class RequestMetrics:
    """Counts each response as it starts (refusals by AuthMiddleware included: it sits outside it), and
    each WebSocket upgrade's answer as a GET: 101 when accepted, else the status it was refused with.
    A path that is not a route counts as "other", so a scan cannot add a label per path."""

    def __init__(self, app: ASGIApp, *, routes: frozenset[str]) -> None:
        self._app = app
        self._routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self._app(scope, receive, send)
            return
        route = scope["path"] if scope["path"] in self._routes else "other"
        method = scope.get("method", "GET")  # an upgrade is a GET; its scope has no method
        answered = False

        async def counting_send(message: Message) -> None:
            nonlocal answered
            status = _answer_status(message)
            if status is not None and not answered:
                answered = True
                http_request(route, method, status)
            await send(message)

        await self._app(scope, receive, counting_send)


def _answer_status(message: Message) -> int | None:
    """The status a message starts an answer with, if it starts one (a close before an accept: 403)."""
    kind = message["type"]
    if kind in ("http.response.start", "websocket.http.response.start"):
        return int(message["status"])
    return {"websocket.accept": 101, "websocket.close": 403}.get(kind)
