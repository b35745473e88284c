"""Who may call the HTTP server: Host and Origin checks (web pages, DNS rebinding) and the optional token.

A web page that rebinds its own name to 127.0.0.1 makes same-origin requests, and browsers send no
Origin on a same-origin GET; its Host header still carries the attacker's name. So a server bound to
loopback also insists on a loopback Host.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from iac_code.config import ENV_KEYS

TOKEN_ENV = ENV_KEYS["http_token"]  # named in the messages that ask for it
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def origin_allowed(origin: str | None, allowed_origins: frozenset[str]) -> bool:
    """No Origin (curl, SDKs), a loopback page on any port, or one the operator allowed."""
    if origin is None:
        return True
    if _normalise_origin(origin) in allowed_origins:
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.hostname in _LOCAL_HOSTS


def host_allowed(host_header: str | None, allowed_hosts: frozenset[str] = frozenset()) -> bool:
    """Host names a loopback address (any port: localhost, 127.x.y.z, [::1]) or an allowed name."""
    if not host_header:
        return False
    host = urlsplit(f"//{host_header.strip()}").hostname or ""
    return host in allowed_hosts or is_loopback_host(host)


def is_loopback_host(host: str) -> bool:
    """`localhost` or a loopback address (127.x.y.z, ::1, bracketed or not)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def token_matches(authorization: str | None, token: str) -> bool:
    if not authorization:
        return False
    scheme, _, presented = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return False
    # Compare bytes: str compare_digest rejects non-ASCII input with an exception.
    return hmac.compare_digest(presented.strip().encode(), token.encode())


def _normalise_origin(origin: str) -> str:
    return origin.strip().rstrip("/").lower()


class GuardMiddleware:
    """Rejects a foreign Host (loopback servers) or Origin with 403, then a missing/wrong token with 401."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str,
        allowed_origins: list[str],
        loopback_only: bool = False,
        allowed_hosts: list[str] | None = None,
    ) -> None:
        self._app = app
        self._token = token
        self._loopback_only = loopback_only
        self._allowed_hosts = frozenset(host.strip().lower() for host in allowed_hosts or [])
        self._allowed_origins = frozenset(_normalise_origin(origin) for origin in allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if self._loopback_only and not host_allowed(headers.get("host"), self._allowed_hosts):
            await _reject(send, 403, "Host not allowed")
            return
        if not origin_allowed(headers.get("origin"), self._allowed_origins):
            await _reject(send, 403, "Origin not allowed")
            return
        if self._token and not token_matches(headers.get("authorization"), self._token):
            await _reject(send, 401, "Unauthorized", extra=[(b"www-authenticate", b"Bearer")])
            return
        await self._app(scope, receive, send)


async def _reject(send: Send, status: int, message: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
