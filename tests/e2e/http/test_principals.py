"""Who is asking, on one real server: principals from a tokens file made by `iac-code token add`, the
shared token, and JWTs checked against a JWKS file. B never sees, loads, prompts or streams A's sessions,
nor uses A's connection id; an admin does see and load them."""

from __future__ import annotations

import json
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from tests.e2e.http.client import INIT, AcpHttp, SseListener, agent_text, is_response
from tests.e2e.http.server_process import IAC_CODE, http_server

SHARED_TOKEN = "the-one-shared-token-of-this-server"
NOT_FOUND = {"code": -32602, "message": "Invalid params", "data": {"sessionId": "Session not found"}}
UNKNOWN_CONNECTION = "unknown Acp-Connection-Id: the connection was closed or never existed"


def add_token(tokens_file: Path, name: str, *extra: str) -> str:
    result = subprocess.run(
        [str(IAC_CODE), "token", "add", name, *extra],
        env={"IAC_CODE_TOKENS_FILE": str(tokens_file), "IAC_CODE_CONFIG_DIR": str(tokens_file.parent), "PATH": "/bin"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    token = result.stdout.strip()
    assert len(token) >= 40 and "\n" not in token
    assert name in result.stderr and token not in result.stderr
    return token


def test_token_add_prints_the_token_once_and_stores_only_its_digest(tmp_path):
    tokens_file = tmp_path / "tokens.json"
    alice = add_token(tokens_file, "alice")
    root = add_token(tokens_file, "root", "--admin")
    assert stat.S_IMODE(tokens_file.stat().st_mode) == 0o600
    text = tokens_file.read_text()
    assert alice not in text and root not in text
    entries = json.loads(text)["tokens"]
    assert [(e["name"], e.get("role")) for e in entries] == [("alice", None), ("root", "admin")]
    again = subprocess.run(
        [str(IAC_CODE), "token", "add", "alice"],
        env={"IAC_CODE_TOKENS_FILE": str(tokens_file), "IAC_CODE_CONFIG_DIR": str(tmp_path), "PATH": "/bin"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert again.returncode == 2 and "alice already has a token" in again.stderr and again.stdout == ""


class Client:
    """One principal's connection and its stream."""

    def __init__(self, url: str, token: str) -> None:
        self.acp = AcpHttp(url, headers={"Authorization": f"Bearer {token}"})
        self.stream: SseListener = self.acp.stream()
        self.next_id = 100

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        request_id = self.next_id
        response = self.acp.post({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        assert response.status_code == 202, response.text
        data: dict[str, Any] = self.stream.until(is_response(request_id))[-1]["data"]
        return data

    def listed(self) -> set[str]:
        return {s["sessionId"] for s in self.request("session/list", {})["result"]["sessions"]}

    def close(self) -> None:
        self.stream.close()
        self.acp.close()


def three_principals(tokens_file: Path) -> dict[str, str]:
    """The tokens of alice, bob and root (an admin), added to `tokens_file`."""
    return {name: add_token(tokens_file, name, *extra) for name, *extra in [["alice"], ["bob"], ["root", "--admin"]]}


def alice_and_bob(url: str, token: dict[str, str], cwd: str, model: Any) -> tuple[Client, Client, str, str]:
    """Alice with a session that holds a secret, Bob with one of his own: (alice, bob, hers, his)."""
    alice, bob = Client(url, token["alice"]), Client(url, token["bob"])
    theirs = alice.acp.new_session(alice.stream, cwd)
    model.add({"text": "alice's secret plan"})
    assert alice.acp.prompt(theirs, "hello").status_code == 202
    assert "secret plan" in agent_text(alice.stream.until(is_response(3)))
    return alice, bob, theirs, bob.acp.new_session(bob.stream, cwd)


def assert_foreign_connection_refused(url: str, token: str, connection_id: str, session_id: str) -> None:
    """Another principal's connection id gets no stream (connection or session), no POST and no DELETE."""
    as_other = {"Authorization": f"Bearer {token}", "Acp-Connection-Id": connection_id}
    with httpx.Client(timeout=10, headers=as_other) as http:
        for response in (
            http.get(url, headers={"Accept": "text/event-stream"}),
            http.get(url, headers={"Accept": "text/event-stream", "Acp-Session-Id": session_id}),
            http.post(url, json={"jsonrpc": "2.0", "id": 9, "method": "session/list", "params": {}}),
            http.delete(url),
        ):
            assert (response.status_code, response.json()) == (400, {"error": UNKNOWN_CONNECTION})


@pytest.fixture(scope="module")
def tokens(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    tokens_file = tmp_path_factory.mktemp("principals") / "tokens.json"
    return tokens_file, three_principals(tokens_file)


def test_two_principals_on_one_server(model, tokens):
    tokens_file, token = tokens
    env = {"IAC_CODE_TOKENS_FILE": str(tokens_file), "IACCODE_ACP_HTTP_TOKEN": SHARED_TOKEN}
    with http_server(model.url, env=env) as server:
        cwd = str(server.workspace)
        alice, bob, theirs, mine = alice_and_bob(server.url, token, cwd, model)

        # B's list holds B's sessions only; A's session answers B exactly like an id nobody has.
        assert bob.listed() == {mine} and alice.listed() == {theirs}
        unknown = "sess_" + "0" * 32
        for session_id in (theirs, unknown):
            assert (
                bob.request("session/load", {"sessionId": session_id, "cwd": cwd, "mcpServers": []})["error"]
                == NOT_FOUND
            )
            assert bob.request("session/resume", {"sessionId": session_id, "cwd": cwd})["error"] == NOT_FOUND
            assert bob.request("session/fork", {"sessionId": session_id, "cwd": cwd})["error"] == NOT_FOUND
            prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "tell me"}]}
            assert bob.request("session/prompt", prompt)["error"] == NOT_FOUND
            assert bob.request("session/close", {"sessionId": session_id})["error"] == NOT_FOUND
            assert bob.request("session/delete", {"sessionId": session_id})["result"] == {}
        assert alice.listed() == {theirs}  # B's delete did nothing

        # A's connection id alone gives B nothing: no stream, no POST, no DELETE.
        assert_foreign_connection_refused(server.url, token["bob"], alice.acp.connection_id, theirs)
        assert alice.listed() == {theirs}  # A's connection is untouched

        # An admin sees every session and may load A's, history included; the shared token is an admin too.
        root = Client(server.url, token["root"])
        assert root.listed() >= {theirs, mine}
        root.request("session/load", {"sessionId": theirs, "cwd": cwd, "mcpServers": []})
        shared = Client(server.url, SHARED_TOKEN)
        assert shared.listed() >= {theirs, mine}

        for client in (alice, bob, root, shared):
            client.close()
        log = server.log_text()
        assert "opened by alice" in log and "opened by bob" in log and "opened by shared" in log
        assert all(secret not in log for secret in (*token.values(), SHARED_TOKEN))


def test_a_token_added_while_serving_works_at_once(model, tmp_path):
    tokens_file = tmp_path / "tokens.json"
    add_token(tokens_file, "alice")
    with http_server(model.url, env={"IAC_CODE_TOKENS_FILE": str(tokens_file)}) as server:
        carol = add_token(tokens_file, "carol")
        with httpx.Client(timeout=10) as http:
            assert http.post(server.url, json=INIT, headers={"Authorization": f"Bearer {carol}"}).status_code == 200
            assert http.post(server.url, json=INIT, headers={"Authorization": "Bearer nope"}).status_code == 401


ISSUER, AUDIENCE = "https://id.example.test", "iac-code-tests"


@pytest.fixture(scope="module")
def signing_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def jwks_document(key: rsa.RSAPrivateKey) -> str:
    """The JWKS that holds `key`'s public half as key id k1."""
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    return json.dumps({"keys": [{**public, "kid": "k1", "use": "sig", "alg": "RS256"}]})


def jwks_file(directory: Path, key: rsa.RSAPrivateKey) -> Path:
    path = directory / "jwks.json"
    path.write_text(jwks_document(key))
    return path


def make_jwt(key: rsa.RSAPrivateKey, subject: str, **overrides: Any) -> str:
    now = int(time.time())
    claims = {"sub": subject, "iss": ISSUER, "aud": AUDIENCE, "iat": now, "exp": now + 300, **overrides}
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"})


def test_jwts_checked_against_a_jwks_file(model, tmp_path, signing_key):
    env = {
        "IAC_CODE_JWKS": str(jwks_file(tmp_path, signing_key)),
        "IAC_CODE_JWT_ISSUER": ISSUER,
        "IAC_CODE_JWT_AUDIENCE": AUDIENCE,
    }
    with http_server(model.url, env=env) as server:
        stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        refused = {
            "expired": make_jwt(signing_key, "dave", exp=int(time.time()) - 120),
            "wrong audience": make_jwt(signing_key, "dave", aud="someone-else"),
            "wrong issuer": make_jwt(signing_key, "dave", iss="https://evil.example"),
            "another key": make_jwt(stranger, "dave"),
            "a reserved name": make_jwt(signing_key, "shared"),
        }
        with httpx.Client(timeout=10) as http:
            for why, token in refused.items():
                response = http.post(server.url, json=INIT, headers={"Authorization": f"Bearer {token}"})
                assert response.status_code == 401, why
        cwd = str(server.workspace)
        dave = Client(server.url, make_jwt(signing_key, "dave"))
        erin = Client(server.url, make_jwt(signing_key, "erin"))
        boss = Client(server.url, make_jwt(signing_key, "boss", roles=["admin"]))
        daves = dave.acp.new_session(dave.stream, cwd)
        assert erin.listed() == set() and dave.listed() == {daves} and boss.listed() == {daves}
        for client in (dave, erin, boss):
            client.close()
        assert "opened by dave" in server.log_text()


def test_the_tokens_file_default_path_turns_authentication_on(model, tmp_path):
    config = tmp_path / "config"
    config.mkdir()
    add_token(config / "tokens.json", "alice")
    with http_server(model.url, env={"IAC_CODE_CONFIG_DIR": str(config)}) as server, httpx.Client(timeout=10) as http:
        assert http.post(server.url, json=INIT).status_code == 401
