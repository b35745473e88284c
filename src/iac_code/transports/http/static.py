"""The web client's files from `web/`: `/` is its page, `/web/<file>` its modules, styles and vendored libraries.

They are public (auth.AuthMiddleware lets GET and HEAD of exactly these paths through without a token: the page is
what asks for it; `/acp` still needs one). Starlette serves them: `StaticFiles` keeps every path inside
`web/` (a symlink out is refused) and answers a reload's If-None-Match with 304; `GZipMiddleware` compresses
what the browser takes gzipped. Narrowed here to the types the page loads, no hidden files, and every answer,
a 404 included, carries a strict Content-Security-Policy (nothing from another origin, nothing inline),
`nosniff` and no referrer.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import NotModifiedResponse, StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from iac_code.transports.http.backend import ResponseHeaders

WEB_ROOT = Path(__file__).with_name("web")
PAGE_PATH = "/"
ASSETS_PREFIX = "/web/"

# connect-src falls back to default-src: 'self' covers the same host's ws:// and wss:// (CSP level 3).
# img-src adds data: and blob: for the images a user pastes or picks before sending them.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}
# Named here, not guessed: Python 3.11 without /etc/mime.types calls .js application/javascript.
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
_MIN_GZIP_BYTES = 1024  # smaller files gain less than the header costs


class WebFiles(StaticFiles):
    """The files under WEB_ROOT of a type the page loads, revalidated on every load (a reload costs a 304)."""

    def __init__(self) -> None:
        super().__init__(directory=WEB_ROOT)

    async def get_response(self, path: str, scope: Scope) -> Response:
        try:
            return await super().get_response(path, scope)
        except HTTPException as refusal:  # answered here, so that it carries the security headers too
            return PlainTextResponse(refusal.detail, refusal.status_code, refusal.headers)

    def lookup_path(self, path: str) -> tuple[str, os.stat_result | None]:
        parts = PurePosixPath(path).parts
        if any(part.startswith(".") for part in parts) or PurePosixPath(path).suffix not in CONTENT_TYPES:
            return "", None
        return super().lookup_path(path)

    def file_response(
        self, full_path: str | os.PathLike[str], stat_result: os.stat_result, scope: Scope, status_code: int = 200
    ) -> Response:
        media_type = CONTENT_TYPES[Path(full_path).suffix]
        headers = {"cache-control": "no-cache"}
        response = FileResponse(full_path, status_code, headers, media_type, stat_result=stat_result)
        if self.is_not_modified(response.headers, Headers(scope=scope)):
            return NotModifiedResponse(response.headers)
        return response


class _Page:
    """`/`: the page, index.html."""

    def __init__(self, files: WebFiles) -> None:
        self._files = files

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self._files.get_response("index.html", scope)
        await response(scope, receive, send)


def _served(app: ASGIApp) -> ASGIApp:
    headers = [(name.encode(), value.encode()) for name, value in SECURITY_HEADERS.items()]
    return ResponseHeaders(GZipMiddleware(app, minimum_size=_MIN_GZIP_BYTES), headers=headers)


def static_routes() -> list[BaseRoute]:
    files = WebFiles()
    return [
        Route(PAGE_PATH, _served(_Page(files)), methods=["GET", "HEAD"]),
        Mount(ASSETS_PREFIX.rstrip("/"), _served(files)),
    ]
