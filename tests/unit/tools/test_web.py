import ipaddress
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from iac_code.tools import web
from iac_code.tools.base import ToolContext, ToolError
from iac_code.tools.web import WebFetchTool, html_to_text, is_forbidden_address

PAGE = b"""<html><head><title>t</title><style>body{color:red}</style></head><body>
<h1>Terraform   docs</h1><script>var secret = 1;</script>
<p>Use <a href="/providers">providers</a> &amp; modules.</p>
<ul><li>init</li><li>plan</li></ul>
</body></html>"""


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        routes = {
            "/page": (200, "text/html; charset=utf-8", PAGE),
            "/data": (200, "application/json", b'{"b": [1, 2], "a": "x"}'),
            "/missing": (404, "text/plain", b"no such page"),
            "/image": (200, "image/png", b"\x89PNG\r\n\x1a\n"),
            "/host": (200, "text/plain", (self.headers.get("Host") or "").encode()),
            "/big": (200, "text/plain", b"y" * (3 * 1024 * 1024)),
        }
        redirects = {
            "/to-page": "/page",
            "/to-metadata": "http://169.254.169.254/latest/meta-data/",
            "/to-private": "http://10.0.0.1/",
            "/loop": "/loop",
        }
        if self.path in redirects:
            self.send_response(302)
            self.send_header("Location", redirects[self.path])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        status, content_type, body = routes.get(self.path, (404, "text/plain", b"?"))
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture
def loopback_is_public(monkeypatch: pytest.MonkeyPatch) -> None:
    """Treat 127.0.0.1 as a public address, so the default tool can reach the test server."""
    real_check = web.is_forbidden_address
    loopback = ipaddress.ip_address("127.0.0.1")
    monkeypatch.setattr(web, "is_forbidden_address", lambda ip: ip != loopback and real_check(ip))


async def fetch(url: str, ctx: ToolContext, tool: WebFetchTool | None = None, **args: object):
    return await (tool or WebFetchTool(allow_private=True)).run({"url": url, **args}, ctx)


async def test_html_is_turned_into_text(server: str, ctx: ToolContext) -> None:
    result = await fetch(f"{server}/page", ctx)
    assert not result.is_error
    assert result.text.startswith(f"URL: {server}/page\nStatus: 200 OK\n")
    body = result.text.split("\n\n", 1)[1]
    assert body == f"# Terraform docs\n\nUse providers ({server}/providers) & modules.\n\n- init\n- plan"


async def test_json_and_http_errors(server: str, ctx: ToolContext) -> None:
    data = await fetch(f"{server}/data", ctx)
    assert '"b": [\n    1,' in data.text
    missing = await fetch(f"{server}/missing", ctx)
    assert missing.is_error and "Status: 404" in missing.text and "no such page" in missing.text


async def test_binary_content_is_refused(server: str, ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="not text"):
        await fetch(f"{server}/image", ctx)


async def test_output_and_download_limits(server: str, ctx: ToolContext) -> None:
    result = await fetch(f"{server}/big", ctx, max_chars=5000)
    assert result.text.count("y") == 5000
    assert "more characters not shown" in result.text


async def test_follows_redirects_and_gives_up_on_loops(server: str, ctx: ToolContext) -> None:
    result = await fetch(f"{server}/to-page", ctx)
    assert result.text.startswith(f"URL: {server}/page\n") and "# Terraform docs" in result.text
    with pytest.raises(ToolError, match="redirects"):
        await fetch(f"{server}/loop", ctx)


async def test_connects_to_the_vetted_address_and_keeps_the_host_name(
    server: str, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def fake_resolve(host: str, port: int) -> list:
        assert host == "docs.example.test"
        return [ipaddress.ip_address("127.0.0.1")]

    monkeypatch.setattr(web, "resolve_host", fake_resolve)
    port = server.rsplit(":", 1)[1]
    result = await fetch(f"http://docs.example.test:{port}/host", ctx)
    assert result.text.endswith(f"docs.example.test:{port}")


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://127.1.2.3:8080/x",
        "http://10.1.2.3/",
        "http://192.168.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://100.100.100.200/latest/meta-data/",
        "http://[::1]/",
        "http://[fd00:ec2::254]/",
        "http://[::ffff:127.0.0.1]/",
        "http://0.0.0.0/",
        "http://localhost/",
    ],
)
async def test_private_addresses_are_refused_by_default(url: str, ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="refusing"):
        await WebFetchTool().run({"url": url}, ctx)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "gopher://x/", "/relative"])
async def test_other_schemes_are_refused(url: str, ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="only http and https"):
        await WebFetchTool().run({"url": url}, ctx)


@pytest.mark.usefixtures("loopback_is_public")
@pytest.mark.parametrize("path", ["/to-metadata", "/to-private"])
async def test_redirect_to_a_private_address_is_refused(server: str, ctx: ToolContext, path: str) -> None:
    assert "# Terraform docs" in (await fetch(f"{server}/to-page", ctx, WebFetchTool())).text
    with pytest.raises(ToolError, match="refusing"):
        await fetch(f"{server}{path}", ctx, WebFetchTool())


async def test_a_name_with_any_private_answer_is_refused(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    async def rebinding(host: str, port: int) -> list:
        return [ipaddress.ip_address("93.184.216.34"), ipaddress.ip_address("127.0.0.1")]

    monkeypatch.setattr(web, "resolve_host", rebinding)
    with pytest.raises(ToolError, match="refusing"):
        await WebFetchTool().run({"url": "http://mixed.example.test/"}, ctx)


def test_address_policy() -> None:
    public = ["93.184.216.34", "2606:4700:4700::1111", "8.8.8.8"]
    forbidden = ["224.0.0.1", "240.0.0.1", "100.64.0.1", "fe80::1", "64:ff9b::a00:1", "255.255.255.255"]
    assert not any(is_forbidden_address(ipaddress.ip_address(a)) for a in public)
    assert all(is_forbidden_address(ipaddress.ip_address(a)) for a in forbidden)


def test_html_to_text_keeps_preformatted_text_and_drops_scripts() -> None:
    html = "<div><pre>  a\n    b</pre><noscript>x</noscript><script>y</script><h2>T</h2></div>"
    assert html_to_text(html) == "  a\n    b\n\n## T"


def test_title() -> None:
    assert WebFetchTool().title({"url": "https://registry.terraform.io/"}) == "Fetch https://registry.terraform.io/"
