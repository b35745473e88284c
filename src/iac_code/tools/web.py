"""web_fetch: read a public web page as text, without becoming a door into the host's network.

The tool runs without asking (it is read-only), so it must not reach what the host can reach but
the world cannot: loopback, private and link-local ranges, and the cloud metadata services that
hand out credentials. The host name is resolved once, every address is vetted, and the connection
goes to the vetted address (the Host header and TLS SNI keep the name), so a DNS answer that
changes between check and connect cannot swap it. Redirects are followed by hand, each hop vetted.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import re
import socket
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from iac_code.addresses import IpAddress, refusal
from iac_code.tools.base import (
    MAX_OUTPUT_CHARS,
    Access,
    Category,
    Kind,
    ToolContext,
    ToolError,
    ToolResult,
    integer_arg,
    required_text,
)
from iac_code.tools.workspace import shorten

if TYPE_CHECKING:  # imported by the functions that fetch: ~50 ms that every session's start need not pay
    import httpx

MAX_REDIRECTS = 5
MAX_BYTES = 2 * 1024 * 1024
TIME_LIMIT = 20.0  # seconds for the whole fetch, redirects included
MAX_CHARS_LIMIT = 100_000
USER_AGENT = "iac-code/0.1 (web_fetch)"
REDIRECT_STATUSES = {301, 302, 303, 307, 308}


def is_forbidden_address(ip: IpAddress) -> bool:
    """True for every address that is not plainly public unicast (iac_code/addresses.py)."""
    return refusal(ip) is not None


async def resolve_host(host: str, port: int) -> list[IpAddress]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ToolError(f"cannot resolve host {host!r}: {exc.strerror}") from None
    # Scope ids ("fe80::1%eth0") are dropped: such addresses are refused anyway.
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]


class WebFetchTool:
    name = "web_fetch"
    description = (
        "Fetch an http(s) URL and return its content as text: HTML is turned into readable text "
        "(headings, lists, links kept), JSON and plain text are returned as they are. Public addresses "
        f"only; up to {MAX_REDIRECTS} redirects, {MAX_BYTES // (1024 * 1024)} MB and {TIME_LIMIT:.0f} s. "
        f"Output is cut at `max_chars` (default {MAX_OUTPUT_CHARS:,})."
    )
    parameters = {
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "The http:// or https:// URL to fetch."},
            "max_chars": {
                "type": "integer",
                "minimum": 1000,
                "maximum": MAX_CHARS_LIMIT,
                "description": "Maximum characters of text to return.",
            },
        },
        "required": ["url"],
    }
    category: Category = "read"
    kind: Kind = "fetch"

    def access(self, args: dict[str, Any]) -> Access:
        return "read"

    def __init__(self, allow_private: bool = False) -> None:
        # Tests point the tool at a server on 127.0.0.1; nothing else should set this.
        self.allow_private = allow_private

    def title(self, args: dict[str, Any]) -> str:
        return f"Fetch {shorten(str(args.get('url', '')))}"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return []

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        import httpx

        url = required_text(args, "url")
        max_chars = integer_arg(args, "max_chars", MAX_OUTPUT_CHARS, low=1000, high=MAX_CHARS_LIMIT, clamp=True)
        try:
            async with asyncio.timeout(TIME_LIMIT):
                final_url, response, body, cut = await self._fetch(_parse_url(url))
        except TimeoutError:
            raise ToolError(f"fetching {url} took longer than {TIME_LIMIT:.0f} s") from None
        except httpx.HTTPError as exc:
            raise ToolError(f"fetching {url} failed: {exc}") from None
        return _result(final_url, response, body, cut, max_chars)

    async def _fetch(self, url: httpx.URL) -> tuple[httpx.URL, httpx.Response, bytes, bool]:
        import httpx

        # trust_env=False: an HTTP(S)_PROXY would resolve and connect on its own, outside our checks.
        async with httpx.AsyncClient(trust_env=False, follow_redirects=False, timeout=10.0) as client:
            for _ in range(MAX_REDIRECTS + 1):
                address = await self._vetted_address(url)
                request = client.build_request(
                    "GET",
                    url.copy_with(host=str(address)),
                    headers={"Host": _host_header(url), "User-Agent": USER_AGENT, "Accept": "*/*"},
                    extensions={"sni_hostname": _ascii_host(url)} if url.scheme == "https" else {},
                )
                response = await client.send(request, stream=True)
                try:
                    location = response.headers.get("location")
                    if response.status_code in REDIRECT_STATUSES and location:
                        url = _parse_url(str(url.join(location)))
                        continue
                    body, cut = await _read_capped(response)
                    return url, response, body, cut
                finally:
                    await response.aclose()
        raise ToolError(f"more than {MAX_REDIRECTS} redirects")

    async def _vetted_address(self, url: httpx.URL) -> IpAddress:
        addresses = await resolve_host(_ascii_host(url), url.port or (443 if url.scheme == "https" else 80))
        if not addresses:
            raise ToolError(f"cannot resolve host {url.host!r}")
        # One bad answer condemns the name: otherwise a rebinding server could mix good and bad ones.
        forbidden = [a for a in addresses if is_forbidden_address(a)]
        if forbidden and not self.allow_private:
            raise ToolError(
                f"refusing to fetch {url.host}: it resolves to {forbidden[0]}, a private, loopback, "
                "link-local or metadata address"
            )
        return addresses[0]


def _parse_url(raw: str) -> httpx.URL:
    import httpx

    try:
        url = httpx.URL(raw)
    except httpx.InvalidURL as exc:
        raise ToolError(f"invalid URL {raw!r}: {exc}") from None
    if url.scheme not in ("http", "https"):
        raise ToolError(f"only http and https URLs can be fetched, not {url.scheme or 'a relative'!s} URLs")
    if not url.host:
        raise ToolError(f"URL {raw!r} has no host")
    return url


def _ascii_host(url: httpx.URL) -> str:
    """The host as DNS, TLS and HTTP see it: an internationalised name in its punycode form."""
    return url.raw_host.decode("ascii")


def _host_header(url: httpx.URL) -> str:
    host = _ascii_host(url)
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{url.port}" if url.port else host


async def _read_capped(response: httpx.Response) -> tuple[bytes, bool]:
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > MAX_BYTES:
            return bytes(body[:MAX_BYTES]), True
    return bytes(body), False


def _result(url: httpx.URL, response: httpx.Response, body: bytes, cut: bool, max_chars: int) -> ToolResult:
    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    text = body.decode(response.charset_encoding or "utf-8", errors="replace")
    if content_type in ("text/html", "application/xhtml+xml") or (not content_type and "<html" in text[:1000].lower()):
        text = html_to_text(text, base_url=str(url))
    elif content_type == "application/json" or content_type.endswith("+json"):
        text = _pretty_json(text)
    elif not (content_type.startswith("text/") or content_type.endswith(("+xml", "/xml")) or not content_type):
        raise ToolError(f"{url} returned {content_type}, which is not text")
    if cut:
        text += f"\n\n[Download stopped at {MAX_BYTES // (1024 * 1024)} MB.]"
    if len(text) > max_chars:
        text = text[:max_chars] + f"\n\n[... {len(text) - max_chars:,} more characters not shown]"
    header = f"URL: {url}\nStatus: {response.status_code} {response.reason_phrase}\n\n"
    return ToolResult(header + text, is_error=response.status_code >= 400)


def _pretty_json(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


PRESERVE = "\x00"
SKIPPED_TAGS = {"script", "style", "noscript", "template", "svg", "head", "iframe", "object"}
BLOCK_TAGS = {
    "p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "blockquote", "table",
    "tr", "ul", "ol", "dl", "dt", "dd", "form", "figure", "figcaption", "hr", "br", "h1", "h2",
    "h3", "h4", "h5", "h6", "li", "pre",
}  # fmt: skip


class _TextExtractor(HTMLParser):
    """HTML to plain text that keeps the structure a reader needs: headings, list items, links, code."""

    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.parts: list[str] = []
        self.skipping = 0  # depth inside script/style/...
        self.in_pre = 0
        self.link: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in SKIPPED_TAGS:
            self.skipping += 1
        elif self.skipping:
            return
        elif tag in BLOCK_TAGS:
            self.parts.append("\n")
            if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
                self.parts.append("#" * int(tag[1]) + " ")
            elif tag == "li":
                self.parts.append("- ")
            elif tag == "pre":
                self.in_pre += 1
        elif tag == "a":
            href = dict(attrs).get("href") or ""
            self.link = urljoin(self.base_url, href) if href and not href.startswith(("#", "javascript:")) else None
        elif tag in ("td", "th"):
            self.parts.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIPPED_TAGS:
            self.skipping = max(0, self.skipping - 1)
        elif self.skipping:
            return
        elif tag == "a" and self.link:
            self.parts.append(f" ({self.link})")
            self.link = None
        elif tag in BLOCK_TAGS and tag != "li":  # the next item's own newline is enough
            self.in_pre = max(0, self.in_pre - 1) if tag == "pre" else self.in_pre
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.skipping:
            return
        data = data.replace(PRESERVE, "")
        if self.in_pre:  # PRESERVE marks lines whose indentation must survive the final clean-up
            self.parts.append(PRESERVE + data.replace("\n", "\n" + PRESERVE))
        else:
            self.parts.append(re.sub(r"\s+", " ", data))


def html_to_text(html: str, base_url: str = "") -> str:
    extractor = _TextExtractor(base_url)
    extractor.feed(html)
    extractor.close()
    lines = (
        line.replace(PRESERVE, "").rstrip() if PRESERVE in line else line.strip()
        for line in "".join(extractor.parts).split("\n")
    )
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")
