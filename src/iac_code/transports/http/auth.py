"""Who may call the HTTP server: Host and Origin checks (web pages, DNS rebinding), then who is asking.

A request's principal comes from its bearer token: the one shared token (principal `shared`, an admin of
its server, as every holder of it was before principals existed), a token of the tokens file, or a JWT
checked against the JWKS. A server with none of them configured serves everyone as the local user.

A web page that rebinds its own name to 127.0.0.1 makes same-origin requests, and browsers send no
Origin on a same-origin GET; its Host header still carries the attacker's name. So a server bound to
loopback also insists on a loopback Host.

WebSocket upgrades (GET /acp) pass the same checks. A browser cannot set headers on a WebSocket, so
there the token may also come as a subprotocol, `bearer.<the token in base64url, unpadded>`, offered
beside `acp` (never in a query string: URLs end up in logs and histories).

A credential holds for the life of what it opened, not only at its start: a WebSocket checks it again on
every message it receives, and a WebSocket or an SSE stream ends when it no longer holds
(`Authenticator.until_invalid`: a JWT at its `exp`, a token of the tokens file once the file drops it).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import ipaddress
import json
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from iac_code.config import ENV_KEYS, Settings
from iac_code.principals import LOCAL, Principal
from iac_code.transports.http.jwts import JwtVerifier
from iac_code.transports.http.static import ASSETS_PREFIX, PAGE_PATH
from iac_code.transports.http.tokens import SHARED, TokensFile

TOKEN_ENV = ENV_KEYS["http_token"]  # named in the messages that ask for it
_CREDENTIAL_KEY = "iac_code.credential"  # where AuthMiddleware leaves a request's credential in its ASGI scope
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
BEARER_SUBPROTOCOL_PREFIX = "bearer."
_BASE64URL = re.compile(r"[A-Za-z0-9_-]+")
_POLICY_VIOLATION = 1008  # the close code of an upgrade refused where no HTTP answer can be given
RECHECK_SECONDS = 5.0  # how often an open stream asks the tokens file again whether its token still stands


def origin_allowed(origin: str | None, allowed_origins: frozenset[str], host: str | None = None) -> bool:
    """No Origin (curl, SDKs), a loopback page on any port, a page of this server (the Origin names the
    `host` the request was sent to), or one the operator allowed.

    AuthMiddleware names `host` only when a rebinding page cannot pass for one of this server's: a loopback or
    allowed name, or a server that demands a token the page lacks (AuthMiddleware._own_host)."""
    if origin is None:
        return True
    normalised = _normalise_origin(origin)
    if normalised in allowed_origins:
        return True
    if host and normalised in {f"{scheme}://{host.strip().lower()}" for scheme in ("http", "https")}:
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


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, presented = authorization.partition(" ")
    return presented.strip() if scheme.lower() == "bearer" else None


def subprotocol_token(subprotocols: Iterable[str]) -> str | None:
    """The token of the first `bearer.` subprotocol offered; None when none is, or it is not base64url text."""
    for offered in subprotocols:
        if not offered.startswith(BEARER_SUBPROTOCOL_PREFIX):
            continue
        encoded = offered.removeprefix(BEARER_SUBPROTOCOL_PREFIX)
        if not _BASE64URL.fullmatch(encoded):
            return None
        try:
            return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):  # a length no encoding has, or not UTF-8
            return None
    return None


def presented_token(scope: Scope, headers: Headers) -> str | None:
    """The bearer token of a request: its Authorization header, or for a WebSocket without one, its
    `bearer.` subprotocol."""
    authorization = headers.get("authorization")
    if authorization is None and scope["type"] == "websocket":
        return subprotocol_token(scope.get("subprotocols", ()))
    return bearer_token(authorization)


class Source(Enum):
    """Where a credential came from, which says how it can stop holding."""

    NONE = "none"  # no authentication configured: the local user, for good
    SHARED = "shared"  # the shared token, fixed for the life of the server
    TOKENS_FILE = "tokens file"  # until the file drops the token (or changes its principal)
    JWT = "jwt"  # until its exp


@dataclass(frozen=True)
class Credential:
    """Who a request is, and what it presented to be it (kept to ask again while a stream lasts)."""

    principal: Principal
    source: Source
    token: str = field(default="", repr=False)
    expires_at: float | None = None  # a JWT's exp, seconds since the epoch

    @property
    def can_end(self) -> bool:
        return self.source in (Source.TOKENS_FILE, Source.JWT)


LOCAL_CREDENTIAL = Credential(LOCAL, Source.NONE)


def found_credential(scope: Scope) -> Credential | None:
    """The credential AuthMiddleware found for this request; None for a public file (or no HTTP request)."""
    credential: Credential | None = scope.get(_CREDENTIAL_KEY)
    return credential


def request_credential(scope: Scope) -> Credential:
    """The credential AuthMiddleware found for this request."""
    credential: Credential = scope[_CREDENTIAL_KEY]
    return credential


def request_principal(scope: Scope) -> Principal:
    """The principal AuthMiddleware found for this request."""
    return request_credential(scope).principal


@dataclass
class Authenticator:
    """Who a bearer token stands for. Without any way to authenticate, everyone is the local user."""

    shared_token: str = ""
    tokens: TokensFile | None = None
    jwts: JwtVerifier | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Authenticator:
        """ConfigError for a bad tokens file or JWKS (found at start-up, exit 2)."""
        path = settings.tokens_path
        return cls(
            shared_token=settings.http_token.strip(),
            tokens=TokensFile(path) if settings.tokens_file or path.exists() else None,
            jwts=JwtVerifier(settings) if settings.jwks else None,
        )

    @property
    def required(self) -> bool:
        return bool(self.shared_token or self.tokens is not None or self.jwts is not None)

    async def authenticate(self, presented: str | None) -> Credential | None:
        """The credential of the bearer token the caller `presented`; None: refuse (401)."""
        if not self.required:
            return LOCAL_CREDENTIAL
        if not presented:
            return None
        # Compare bytes: str compare_digest rejects non-ASCII input with an exception.
        if self.shared_token and hmac.compare_digest(presented.encode(), self.shared_token.encode()):
            return Credential(Principal(SHARED, admin=True), Source.SHARED)
        if self.tokens is not None and (found := self.tokens.principal(presented)) is not None:
            return Credential(found, Source.TOKENS_FILE, presented)
        if self.jwts is not None and presented.count(".") == 2 and (verified := await self.jwts.verify(presented)):
            return Credential(verified[0], Source.JWT, presented, expires_at=verified[1])
        return None

    def still_valid(self, credential: Credential) -> bool:
        """Whether `credential` still stands for its principal: its JWT has not expired, the tokens file still
        gives its token the same principal (a role taken away counts too)."""
        if credential.source is Source.JWT:
            return credential.expires_at is not None and time.time() < credential.expires_at
        if credential.source is Source.TOKENS_FILE:
            return self.tokens is not None and self.tokens.principal(credential.token) == credential.principal
        return True

    async def until_invalid(self, credential: Credential) -> str:
        """Wait until `credential` stops holding (only for one that `can_end`); the reason, for a close."""
        if credential.expires_at is not None:
            await asyncio.sleep(max(0.0, credential.expires_at - time.time()))
            return "the token expired"
        while self.still_valid(credential):
            await asyncio.sleep(RECHECK_SECONDS)
        return "the token was revoked"


def is_public(scope: Scope) -> bool:
    """The web client's page and files: a browser loads them before it has the token the page asks for, and
    they hold no secret. Only reading them, at exactly these paths; no principal is set (they need none)."""
    path: str = scope["path"]
    reading = scope["type"] == "http" and scope["method"] in ("GET", "HEAD")  # a WebSocket to / is no page
    return reading and (path == PAGE_PATH or path.startswith(ASSETS_PREFIX))


def _normalise_origin(origin: str) -> str:
    return origin.strip().rstrip("/").lower()


class AuthMiddleware:
    """Rejects a foreign Host (loopback servers) or Origin with 403, then a request no principal stands
    for with 401 (HTTP requests and WebSocket upgrades alike; not the web client's files: `is_public`);
    leaves the credential in the scope (`request_credential`, `request_principal`)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        authenticator: Authenticator,
        allowed_origins: list[str],
        loopback_only: bool = False,
        allowed_hosts: list[str] | None = None,
    ) -> None:
        self._app = app
        self._authenticator = authenticator
        self._loopback_only = loopback_only
        self._allowed_hosts = frozenset(host.strip().lower() for host in allowed_hosts or [])
        self._allowed_origins = frozenset(_normalise_origin(origin) for origin in allowed_origins)

    def _own_host(self, host: str | None) -> str | None:
        """The Host whose pages count as this server's: a rebinding page names its own host, so without a token
        to stop it, only a loopback or allowed name (--allow-insecure-bind on another address: none)."""
        if self._authenticator.required or host_allowed(host, self._allowed_hosts):
            return host
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self._app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host")
        if self._loopback_only and not host_allowed(host, self._allowed_hosts):
            await refuse(scope, receive, send, 403, "Host not allowed")
            return
        if not origin_allowed(headers.get("origin"), self._allowed_origins, self._own_host(host)):
            await refuse(scope, receive, send, 403, "Origin not allowed")
            return
        if is_public(scope):
            await self._app(scope, receive, send)
            return
        credential = await self._authenticator.authenticate(presented_token(scope, headers))
        if credential is None:
            await refuse(scope, receive, send, 401, "Unauthorized", extra=[(b"www-authenticate", b"Bearer")])
            return
        scope[_CREDENTIAL_KEY] = credential
        await self._app(scope, receive, send)


async def refuse(
    scope: Scope,
    receive: Receive,
    send: Send,
    status: int,
    message: str,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """Answer `status` with `{"error": message}`; a WebSocket upgrade gets that HTTP answer instead of
    being accepted (a server without ASGI's denial-response extension answers 403)."""
    prefix = ""
    if scope["type"] == "websocket":
        await receive()  # websocket.connect: the upgrade is answered after it
        if "websocket.http.response" not in scope.get("extensions", {}):
            await send({"type": "websocket.close", "code": _POLICY_VIOLATION})
            return
        prefix = "websocket."
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *(extra or [])]
    await send({"type": f"{prefix}http.response.start", "status": status, "headers": headers})
    await send({"type": f"{prefix}http.response.body", "body": body})
