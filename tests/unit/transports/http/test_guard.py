import asyncio

from iac_code.principals import LOCAL, Principal
from iac_code.transports.http.app import bind_refusal
from iac_code.transports.http.guard import Authenticator, host_allowed, origin_allowed


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
        assert asyncio.run(shared.principal(authorization)) == Principal("shared", admin=True)
    for refused in ("Bearer abd", "abc", None, "Bearer ünïcode", "Bearer "):
        assert asyncio.run(shared.principal(refused)) is None, refused


def test_without_any_authentication_everyone_is_the_local_user():
    assert asyncio.run(Authenticator().principal(None)) == LOCAL


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
