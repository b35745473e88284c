"""The web client's files on a live in-process server: headers (a strict CSP, types, validators), what is
refused (unknown files, other types, traversal, symlinks out), the public paths AuthMiddleware lets through, and the package."""

from __future__ import annotations

import gzip
import re
import tomllib
from pathlib import Path

import httpx
import pytest
from tests.unit.transports.http.conftest import INIT, live_server

from iac_code.transports.http import static
from iac_code.transports.http.app import HttpOptions
from iac_code.transports.http.auth import Authenticator, is_public
from iac_code.transports.http.static import CONTENT_SECURITY_POLICY, WEB_ROOT, WebFiles

REPOSITORY = Path(__file__).parents[4]


def asset_file(name: str) -> Path | None:
    """The file `name` names under WEB_ROOT, as the server finds it, or None (it would answer 404)."""
    full_path, stat_result = WebFiles().lookup_path(name)
    return Path(full_path) if stat_result is not None and Path(full_path).is_file() else None


JS = "text/javascript; charset=utf-8"


async def test_the_page_and_its_files_come_with_a_strict_policy_and_their_types(server, client):
    expected = {
        "/": "text/html; charset=utf-8",
        "/web/app.js": JS,
        "/web/style.css": "text/css; charset=utf-8",
        "/web/icon.svg": "image/svg+xml",
        "/web/vendor/dompurify/purify.es.mjs": JS,
        "/web/vendor/diff/diff/line.js": JS,
    }
    for path, content_type in expected.items():
        response = await client.get(server.url + path, headers={"accept-encoding": "identity"})
        assert response.status_code == 200, path
        assert response.headers["content-type"] == content_type, path
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "no-referrer"
        assert response.headers["cache-control"] == "no-cache" and response.headers["etag"]
    page = await client.get(server.url + "/")
    assert page.content == (WEB_ROOT / "index.html").read_bytes()


def test_the_policy_allows_nothing_from_elsewhere_and_nothing_inline():
    directives = dict(part.strip().split(" ", 1) for part in CONTENT_SECURITY_POLICY.split(";"))
    assert directives["default-src"] == "'self'"
    assert directives["img-src"] == "'self' data: blob:"  # pasted images, shown before they are sent
    assert "unsafe" not in CONTENT_SECURITY_POLICY and "*" not in CONTENT_SECURITY_POLICY
    assert not {"script-src", "style-src", "connect-src"} & set(directives)  # all fall back to 'self'


async def test_a_reload_costs_a_304_and_gzip_is_sent_to_who_takes_it(server, client):
    url = f"{server.url}/web/vendor/marked/marked.esm.js"
    plain = await client.get(url, headers={"accept-encoding": "identity"})
    assert "content-encoding" not in plain.headers
    again = await client.get(url, headers={"accept-encoding": "identity", "if-none-match": plain.headers["etag"]})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == plain.headers["etag"]

    async with httpx.AsyncClient() as raw:  # decodes nothing itself: read the bytes as sent
        request = raw.build_request("GET", url, headers={"accept-encoding": "gzip, br;q=0.5"})
        zipped = await raw.send(request, stream=True)
        body = b"".join([chunk async for chunk in zipped.aiter_raw()])
    assert zipped.headers["content-encoding"] == "gzip" and zipped.headers["vary"].lower() == "accept-encoding"
    assert gzip.decompress(body) == plain.content
    stale = await client.get(url, headers={"accept-encoding": "identity", "if-none-match": '"other"'})
    assert stale.status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/web/missing.js",
        "/web/vendor/README.md",  # not a type the page loads
        "/web/vendor/marked/LICENSE",
        "/web/",
        "/web/vendor",
        "/web/.hidden.js",
        "/web/%2e%2e/static.py",
        "/web/..%2fstatic.py",
        "/web/vendor/..%2f..%2fapp.py",
        "/web/%2fetc%2fpasswd",
        "/web/app.js%00.js",
    ],
)
async def test_anything_else_is_not_found(server, client, path):
    response = await client.get(server.url + path)
    assert response.status_code == 404, path
    assert response.headers["x-content-type-options"] == "nosniff"


def test_nothing_outside_the_web_directory_is_served(tmp_path, monkeypatch):
    root = tmp_path / "web"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "ok.js").write_text("export {};")
    (tmp_path / "secret.js").write_text("secret")
    (root / "out.js").symlink_to(tmp_path / "secret.js")
    (root / "in.js").symlink_to(root / "sub" / "ok.js")
    (root / ".hidden.js").write_text("export {};")
    monkeypatch.setattr(static, "WEB_ROOT", root)
    assert asset_file("sub/ok.js") == root / "sub" / "ok.js"
    assert asset_file("in.js") == root / "sub" / "ok.js"
    for refused in (
        ".hidden.js",
        "out.js",
        "../secret.js",
        "sub/../../secret.js",
        str(tmp_path / "secret.js"),
        "sub",
        "",
    ):
        assert asset_file(refused) is None, refused


async def test_head_reads_the_headers_only(server, client):
    response = await client.head(server.url + "/")
    assert response.status_code == 200 and response.content == b""
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY


async def test_with_a_token_the_page_is_public_and_everything_else_is_not(client):
    async with live_server(HttpOptions(authenticator=Authenticator(shared_token="s3cret"))) as server:
        for public in ("/", "/web/app.js", "/web/vendor/marked/marked.esm.js"):
            assert (await client.get(server.url + public)).status_code == 200, public
        assert (await client.head(server.url + "/")).status_code == 200
        assert (await client.get(server.url + "/web/missing.js")).status_code == 404
        for guarded in ("/acp", "/health", "/metrics", "/web", "/webapp.js", "/index.html", "/acp/web/app.js"):
            assert (await client.get(server.url + guarded)).status_code == 401, guarded
        assert (await client.post(server.url + "/", json=INIT)).status_code == 401
        assert (await client.post(server.url + "/acp", json=INIT)).status_code == 401
        authorized = await client.post(server.url + "/acp", json=INIT, headers={"authorization": "Bearer s3cret"})
        assert authorized.status_code == 200


def test_only_reading_the_page_and_its_files_is_public():
    assert is_public({"type": "http", "method": "GET", "path": "/"})
    assert is_public({"type": "http", "method": "HEAD", "path": "/web/app.js"})
    assert not is_public({"type": "websocket", "path": "/"})  # a socket is no page: the token is needed
    assert not is_public({"type": "websocket", "path": "/web/app.js"})
    assert not is_public({"type": "http", "method": "PUT", "path": "/web/app.js"})


async def test_the_page_is_still_refused_to_a_foreign_host_or_origin(client):
    async with live_server(HttpOptions(loopback_only=True)) as server:
        assert (await client.get(server.url + "/", headers={"host": "evil.example"})).status_code == 403
        assert (await client.get(server.url + "/", headers={"origin": "https://evil.example"})).status_code == 403


def test_the_page_runs_nothing_inline_and_loads_only_files_that_exist():
    html = (WEB_ROOT / "index.html").read_text()
    assert not re.search(r"<script(?![^>]*\bsrc=)", html), "an inline script"
    assert not re.search(r"\s(on\w+|style)=", html), "an inline handler or style"
    for reference in re.findall(r'(?:src|href)="(/[^"]*)"', html):
        assert asset_file(reference.removeprefix("/web/")) is not None, reference


def test_every_module_import_names_a_file_that_is_served():
    for module in [*WEB_ROOT.glob("*.js")]:
        for target in re.findall(r'from "(\./[^"]+)"', module.read_text()):
            resolved = (module.parent / target).resolve()
            assert asset_file(str(resolved.relative_to(WEB_ROOT.resolve()))) is not None, f"{module.name}: {target}"


def test_the_page_preloads_every_module_but_the_one_it_runs():
    # Without it the browser finds each level of imports only after fetching the one before.
    html = (WEB_ROOT / "index.html").read_text()
    preloaded = set(re.findall(r'<link rel="modulepreload" href="/web/([^"]+)">', html))
    modules = {str(p.relative_to(WEB_ROOT)) for p in WEB_ROOT.rglob("*") if p.suffix in (".js", ".mjs")}
    assert preloaded == modules - {"app.js"}


def test_every_web_file_ships_in_the_package():
    config = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())
    package = REPOSITORY / "src" / "iac_code"
    shipped = {
        path for pattern in config["tool"]["setuptools"]["package-data"]["iac_code"] for path in package.glob(pattern)
    }
    files = {path for path in WEB_ROOT.rglob("*") if path.is_file() and "__pycache__" not in path.parts}
    assert files <= shipped, sorted(str(path.relative_to(WEB_ROOT)) for path in files - shipped)
