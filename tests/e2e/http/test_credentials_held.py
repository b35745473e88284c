"""A credential holds for the life of what it opened, on one real server with two kinds of principals: a
tokens file (alice, bob) and JWTs checked against a JWKS the test serves. A socket or a stream whose token
the tokens file drops, or whose JWT reaches its `exp`, ends (WebSocket close 4401 with the reason); the other
principals' go on. A JWT's `sub` must follow the principals' name rule, and a JWKS over plain http needs
`--insecure-jwks`."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from tests.e2e.http.client import INIT, AcpHttp
from tests.e2e.http.server_process import ServerProcess, http_server
from tests.e2e.http.test_principals import AUDIENCE, ISSUER, add_token, jwks_document, make_jwt
from tests.e2e.http.ws_client import acp_socket
from tests.loopback import served_json
from websockets.exceptions import ConnectionClosed

CREDENTIALS_ENDED = 4401


@pytest.fixture(scope="module")
def signing_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def principals(model, signing_key, tmp_path_factory) -> Iterator[tuple[ServerProcess, Path, dict[str, str]]]:
    tokens_file = tmp_path_factory.mktemp("held") / "tokens.json"
    token = {name: add_token(tokens_file, name) for name in ("alice", "bob")}
    with served_json(jwks_document(signing_key).encode()) as jwks_url:
        env = {
            "IAC_CODE_TOKENS_FILE": str(tokens_file),
            "IAC_CODE_JWKS": jwks_url,
            "IAC_CODE_JWT_ISSUER": ISSUER,
            "IAC_CODE_JWT_AUDIENCE": AUDIENCE,
        }
        with http_server(model.url, "--insecure-jwks", env=env) as server:
            yield server, tokens_file, token


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def closed_with(socket, timeout: float = 30) -> tuple[int, str]:
    """The close code and reason of a socket the server ends (what it sent before is skipped)."""
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            await socket.next(timeout)
    assert closed.value.rcvd is not None, "the server sent no close frame"
    return closed.value.rcvd.code, closed.value.rcvd.reason


def stream_ended(stream, timeout: float = 30) -> bool:
    """Whether the SSE stream ends (its events up to then skipped)."""
    while "eof" not in stream.next(timeout):
        pass
    return True


def test_a_jwks_over_plain_http_needs_insecure_jwks(model, signing_key):
    with served_json(jwks_document(signing_key).encode()) as jwks_url:
        env = {"IAC_CODE_JWKS": jwks_url, "IAC_CODE_JWT_ISSUER": ISSUER, "IAC_CODE_JWT_AUDIENCE": AUDIENCE}
        with pytest.raises(RuntimeError, match=r"exited \(2\)[\s\S]*https://"):
            with http_server(model.url, env=env):
                pass


async def test_a_dropped_token_ends_its_socket_and_its_stream_and_nobody_elses(principals):
    server, tokens_file, token = principals
    cwd = str(server.workspace)
    alices_http = AcpHttp(server.url, bearer(token["alice"]))
    alices_stream = alices_http.stream()
    async with (
        acp_socket(server.url, headers=bearer(token["alice"])) as idle,
        acp_socket(server.url, headers=bearer(token["alice"])) as busy,
        acp_socket(server.url, headers=bearer(token["bob"])) as bobs,
    ):
        assert await busy.new_session(cwd)
        entries = json.loads(tokens_file.read_text())["tokens"]
        tokens_file.write_text(json.dumps({"tokens": [e for e in entries if e["name"] != "alice"]}))

        # A frame after the drop is not served: the socket closes before any answer.
        await busy.send({"jsonrpc": "2.0", "id": 7, "method": "session/list", "params": {}})
        assert await closed_with(busy) == (CREDENTIALS_ENDED, "the token was revoked")
        # A socket that says nothing, and an SSE stream, end too.
        assert await closed_with(idle) == (CREDENTIALS_ENDED, "the token was revoked")
        assert stream_ended(alices_stream)

        assert await bobs.new_session(cwd)
    with httpx.Client(timeout=10) as http:
        assert http.post(server.url, json=INIT, headers=bearer(token["alice"])).status_code == 401
    alices_stream.close()
    alices_http.close()
    log = server.log_text()
    assert "of alice: closing its WebSocket: the token was revoked" in log
    assert token["alice"] not in log


async def test_a_jwt_socket_and_stream_end_at_its_exp(principals, signing_key):
    server, _, _ = principals
    soon = make_jwt(signing_key, "dave", exp=int(time.time()) + 4)
    later = make_jwt(signing_key, "erin")
    daves_http = AcpHttp(server.url, bearer(soon))
    daves_stream = daves_http.stream()
    async with (
        acp_socket(server.url, headers=bearer(soon)) as daves,
        acp_socket(server.url, headers=bearer(later)) as erins,
    ):
        assert await closed_with(daves) == (CREDENTIALS_ENDED, "the token expired")
        assert stream_ended(daves_stream)
        assert await erins.new_session(str(server.workspace))
    daves_stream.close()
    daves_http.close()


def test_a_jwt_sub_outside_the_name_rule_is_refused(principals, signing_key):
    server, _, _ = principals
    forged = "mallory\n2026-12-03T09:00:00Z  root  sess_1  allowed  rule:config.json:allow[0]  bash"
    with httpx.Client(timeout=10) as http:
        for subject in (forged, "mallory smith", "mal\x1b[2Klory", "x" * 129):
            response = http.post(server.url, json=INIT, headers=bearer(make_jwt(signing_key, subject)))
            assert response.status_code == 401, repr(subject)
        assert http.post(server.url, json=INIT, headers=bearer(make_jwt(signing_key, "mallory"))).status_code == 200
    log = server.log_text()
    assert "root  sess_1" not in log and "mallory smith" not in log
