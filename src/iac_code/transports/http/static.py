"""The web client's files from `web/`: `/` is its page, `/web/<file>` its modules, styles and vendored libraries.

They are public (the guard lets GET and HEAD of exactly these paths through without a token: the page is
what asks for it; `/acp` still needs one). Every answer carries a strict Content-Security-Policy (the page
loads nothing from another origin and runs nothing inline), `nosniff` and no referrer; files are
revalidated on every load with their ETag (a reload costs a 304 per file) and sent gzipped when the
browser takes it. Only files with a known type are served, and nothing outside `web/` or hidden.
"""

from __future__ import annotations

import gzip
import hashlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

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
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
_COMPRESSIBLE = (".html", ".js", ".mjs", ".css", ".svg")
_MIN_GZIP_BYTES = 1024  # smaller files gain less than the header costs


@dataclass(frozen=True)
class _Loaded:
    """One file as read, keyed by its size and mtime so that an edited file (an editable install) is read again."""

    stamp: tuple[int, int]
    body: bytes
    gzipped: bytes | None
    digest: str


_loaded: dict[Path, _Loaded] = {}


def static_routes() -> list[Route]:
    return [
        Route(PAGE_PATH, page, methods=["GET"]),  # Starlette adds HEAD to GET routes
        Route(ASSETS_PREFIX + "{name:path}", asset, methods=["GET"]),
    ]


async def page(request: Request) -> Response:
    return _serve(request, "index.html")


async def asset(request: Request) -> Response:
    return _serve(request, request.path_params["name"])


def asset_file(name: str) -> Path | None:
    """The file `name` names under WEB_ROOT, or None: an unknown type, a hidden or parent part, or no such file."""
    parts = PurePosixPath(name).parts
    if not parts or any(part.startswith(".") or "\\" in part or "\0" in part for part in parts):
        return None
    if PurePosixPath(name).suffix not in CONTENT_TYPES:
        return None
    root = WEB_ROOT.resolve()
    path = root.joinpath(*parts).resolve()
    if not path.is_relative_to(root) or not path.is_file():  # a symlink out of web/ is refused too
        return None
    return path


def _serve(request: Request, name: str) -> Response:
    path = asset_file(name)
    if path is None:
        return Response("Not Found", status_code=404, media_type="text/plain", headers=SECURITY_HEADERS)
    loaded = _load(path)
    headers = {**SECURITY_HEADERS, "cache-control": "no-cache", "vary": "accept-encoding"}
    body = loaded.body
    etag = f'"{loaded.digest}"'
    if loaded.gzipped is not None and _accepts_gzip(request.headers.get("accept-encoding", "")):
        body = loaded.gzipped
        etag = f'"{loaded.digest}-gzip"'  # a strong validator names one representation
        headers["content-encoding"] = "gzip"
    headers["etag"] = etag
    if etag in _validators(request.headers.get("if-none-match", "")):
        headers.pop("content-encoding", None)
        return Response(status_code=304, headers=headers)
    return Response(body, headers={**headers, "content-type": CONTENT_TYPES[path.suffix]})


def _load(path: Path) -> _Loaded:
    stat = path.stat()
    stamp = (stat.st_size, stat.st_mtime_ns)
    cached = _loaded.get(path)
    if cached is not None and cached.stamp == stamp:
        return cached
    body = path.read_bytes()
    compress = path.suffix in _COMPRESSIBLE and len(body) >= _MIN_GZIP_BYTES
    gzipped = gzip.compress(body, mtime=0) if compress else None
    loaded = _Loaded(stamp, body, gzipped, hashlib.sha256(body).hexdigest()[:32])
    _loaded[path] = loaded
    return loaded


def _accepts_gzip(accept_encoding: str) -> bool:
    for item in accept_encoding.split(","):
        coding, _, params = item.strip().partition(";")
        if coding.strip().lower() == "gzip":
            return params.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000")
    return False


def _validators(if_none_match: str) -> set[str]:
    return {tag.strip().removeprefix("W/") for tag in if_none_match.split(",") if tag.strip()}
