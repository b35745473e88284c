import asyncio
import base64

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.testclient import TestClient

from iac_code.principals import LOCAL, Principal
from iac_code.transports.http.auth import (
    Authenticator,
    AuthMiddleware,
    bearer_token,
    host_allowed,
    origin_allowed,
    presented_token,
    subprotocol_token,
)
from iac_code.transports.http.server import bind_refusal


def test_origins():
    extra = frozenset({"https://ide.example.com"})
    assert origin_allowed(None, extra)
    for ok in ("http://localhost:3000", "http://127.0.0.1", "https://[::1]:8443", "https://IDE.example.com/"):
        assert origin_allowed(ok, extra), ok
    for bad in ("https://evil.example", "null", "http://localhost.evil.example", "file://", "http://127.0.0.2"):
        assert not origin_allowed(bad, extra), bad


def test_the_shared_token_is_one_admin_principal():
    shared = Authenticator(shared_token="abc")
    for authorization in ("Bearer abc", "bearer abc"):
        credential = asyncio.run(shared.authenticate(bearer_token(authorization)))
        assert credential is not None and credential.principal == Principal("shared", admin=True)
        assert not credential.can_end and shared.still_valid(credential)
    for refused in ("Bearer abd", "abc", None, "Bearer ünïcode", "Bearer "):
        assert asyncio.run(shared.authenticate(bearer_token(refused))) is None, refused


def test_without_any_authentication_everyone_is_the_local_user():
    credential = asyncio.run(Authenticator().authenticate(None))
    assert credential is not None and credential.principal == LOCAL and not credential.can_end


def test_bind_refusal():
    assert bind_refusal("127.0.0.1", False, False) is None
    assert bind_refusal("::1", False, False) is None
    assert bind_refusal("localhost", False, False) is None
    assert "IACCODE_ACP_HTTP_TOKEN" in bind_refusal("0.0.0.0", False, False)
    assert bind_refusal("192.168.1.5", False, False)
    assert bind_refusal("0.0.0.0", True, False) is None
    assert bind_refusal("0.0.0.0", False, True) is None


def test_host_header_must_be_loopback_for_a_loopback_server():
    for ok in ("127.0.0.1:8765", "localhost:8765", "localhost", "[::1]:8765", "127.0.0.1"):
        assert host_allowed(ok), ok
    for bad in ("evil.example:8765", "localhost.evil.example", "10.0.0.1:8765", "", None, "[fe80::1]:1"):
        assert not host_allowed(bad), bad
    assert host_allowed("agent.corp.example:443", frozenset({"agent.corp.example"}))


def test_a_page_of_this_server_is_same_origin():
    for host, origin in (("iac.example.com", "https://iac.example.com"), ("Box:8765", "http://box:8765/")):
        assert origin_allowed(origin, frozenset(), host), (host, origin)
    for host, origin in (
        ("iac.example.com", "https://evil.example"),
        ("iac.example.com", "https://iac.example.com:444"),
        ("iac.example.com", "ftp://iac.example.com"),
        (None, "https://iac.example.com"),
    ):
        assert not origin_allowed(origin, frozenset(), host), (host, origin)


def test_the_token_offered_as_a_websocket_subprotocol():
    encoded = base64.urlsafe_b64encode("tøken/+?".encode()).decode().rstrip("=")
    assert "=" not in encoded and ("-" in encoded or "_" in encoded)
    assert subprotocol_token(["acp", f"bearer.{encoded}"]) == "tøken/+?"
    assert subprotocol_token([f"bearer.{encoded}", "bearer.b3RoZXI"]) == "tøken/+?"  # the first one counts
    for refused in (
        ["acp"],
        [],
        ["bearer."],
        ["bearer.a"],
        ["bearer.dG9rZW4="],
        ["bearer.dG9r+W4"],
        ["Bearer.dG9rZW4"],
    ):
        assert subprotocol_token(refused) is None, refused
    assert subprotocol_token(["bearer." + base64.urlsafe_b64encode(b"\xff\xfe").decode()]) is None  # not UTF-8


def test_a_websocket_presents_its_token_by_header_or_else_by_subprotocol():
    offered = ["acp", "bearer.c3VicHJvdG9jb2w"]  # "subprotocol"
    websocket = {"type": "websocket", "subprotocols": offered, "headers": []}
    assert presented_token(websocket, Headers(scope=websocket)) == "subprotocol"
    with_header = {**websocket, "headers": [(b"authorization", b"Bearer header")]}
    assert presented_token(with_header, Headers(scope=with_header)) == "header"
    http = {"type": "http", "subprotocols": offered, "headers": []}  # no such thing over plain HTTP
    assert presented_token(http, Headers(scope=http)) is None


def _status_of_a_page_request(auth: AuthMiddleware, host: str, origin: str, token: str | None = None) -> int:
    async def app(scope, receive, send):
        await PlainTextResponse("ok")(scope, receive, send)

    auth._app = app
    headers = {"host": host, "origin": origin, **({"authorization": f"Bearer {token}"} if token else {})}
    return TestClient(auth, base_url=f"http://{host}").post("/acp", headers=headers).status_code


def test_a_page_that_names_its_own_host_passes_only_where_rebinding_cannot_use_it():
    # Without a token, on an address anyone may name (--allow-insecure-bind), a rebinding page's Origin
    # equals its Host: not same-origin there. With a token, or under an allowed name, it is.
    def auth(**options) -> AuthMiddleware:
        return AuthMiddleware(lambda *_: None, allowed_origins=[], **options)  # type: ignore[arg-type]

    assert _status_of_a_page_request(auth(authenticator=Authenticator()), "evil.example", "http://evil.example") == 403
    with_token = auth(authenticator=Authenticator(shared_token="t"))
    assert _status_of_a_page_request(with_token, "10.0.0.5:8765", "http://10.0.0.5:8765", token="t") == 200
    named = auth(authenticator=Authenticator(), allowed_hosts=["iac.example.com"])
    assert _status_of_a_page_request(named, "iac.example.com", "http://iac.example.com") == 200
