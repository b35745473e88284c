"""Who a bearer token stands for: the tokens file (read, checked, followed while serving) and JWTs
against a JWKS given as a file or as a URL."""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from tests.loopback import served_json

from iac_code.config import ConfigError, Settings
from iac_code.principals import Principal
from iac_code.transports.http.auth import Authenticator
from iac_code.transports.http.jwts import JwtVerifier
from iac_code.transports.http.tokens import TokensFile, add_token, read_tokens

ISSUER, AUDIENCE = "https://id.example.test", "iac-code"


def write_tokens(path: Path, entries: Any) -> None:
    path.write_text(json.dumps({"tokens": entries}))


@pytest.mark.parametrize(
    ("entries", "problem"),
    [
        ([{"name": "alice"}], "tokens[0]: sha256 must be"),
        ([{"name": "alice", "sha256": "ab" * 32}, {"name": "local", "sha256": "ab" * 32}], "tokens[1]: name"),
        ([{"name": "a b", "sha256": "ab" * 32}], "tokens[0]: name"),
        ([{"name": "bob", "sha256": "ab" * 32, "role": "root"}], 'tokens[0]: role must be "admin"'),
        ("all", "must hold"),
    ],
)
def test_a_bad_tokens_file_names_the_entry(tmp_path: Path, entries: Any, problem: str) -> None:
    path = tmp_path / "tokens.json"
    write_tokens(path, entries)
    with pytest.raises(ConfigError, match=re.escape(problem)):
        read_tokens(path)


def test_a_token_stands_for_its_principal_and_the_file_is_followed(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    alice = add_token(path, "alice", admin=False)
    tokens = TokensFile(path)
    assert tokens.principal(alice) == Principal("alice")
    assert tokens.principal(alice + "x") is None and tokens.principal("") is None
    root = add_token(path, "root", admin=True)
    assert tokens.principal(root) == Principal("root", admin=True)  # added while serving: works at once
    path.write_text("{not json")  # a bad edit while serving keeps the tokens read before
    assert tokens.principal(alice) == Principal("alice")
    write_tokens(path, [{"name": "carol", "sha256": hashlib.sha256(b"plain").hexdigest().upper()}])
    assert tokens.principal("plain") == Principal("carol") and tokens.principal(alice) is None


def test_token_add_refuses_a_reserved_or_taken_name(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    add_token(path, "alice", admin=False)
    for name in ("alice", "shared", "local", "", "a/b"):
        with pytest.raises(ValueError):
            add_token(path, name, admin=False)
    assert [entry.principal.name for entry in read_tokens(path)] == ["alice"]


@pytest.fixture(scope="module")
def key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def jwks(key: ec.EllipticCurvePrivateKey) -> str:
    public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
    return json.dumps({"keys": [{**public, "kid": "k1", "alg": "ES256"}]})


def token(key: ec.EllipticCurvePrivateKey, **claims: Any) -> str:
    now = int(time.time())
    defaults = {"sub": "dave", "iss": ISSUER, "aud": AUDIENCE, "exp": now + 60}
    return jwt.encode({**defaults, **claims}, key, algorithm="ES256", headers={"kid": "k1"})


def settings(jwks_location: str, **fields: Any) -> Settings:
    return Settings(jwks=jwks_location, jwt_issuer=ISSUER, jwt_audience=AUDIENCE, **fields)


async def principal_of(verifier: JwtVerifier, presented: str) -> Principal | None:
    verified = await verifier.verify(presented)
    return None if verified is None else verified[0]


async def test_jwt_claims_decide_the_principal(tmp_path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    (tmp_path / "jwks.json").write_text(jwks(key))
    verifier = JwtVerifier(settings(str(tmp_path / "jwks.json"), jwt_roles_claim="groups", jwt_admin_role="ops"))
    assert await principal_of(verifier, token(key)) == Principal("dave")
    assert await principal_of(verifier, token(key, groups="ops")) == Principal("dave", admin=True)
    assert await principal_of(verifier, token(key, groups=["dev", "ops"])) == Principal("dave", admin=True)
    assert await principal_of(verifier, token(key, roles=["ops"])) == Principal("dave")  # another claim
    now = int(time.time())
    assert await verifier.verify(token(key, exp=now + 60)) == (Principal("dave"), now + 60)
    for refused in (
        token(key, exp=now - 120),
        token(key, aud="other"),
        token(key, iss="https://other"),
        token(key, sub="local"),
        token(key, sub="dave\n2026-12-03T10:00:00Z  root  sess_1  allowed"),  # would forge lines in logs and audit
        token(key, sub="dave smith"),
        token(key, sub=""),
        token(key, sub=["dave"]),
        jwt.encode({"sub": "dave", "iss": ISSUER, "aud": AUDIENCE}, key, algorithm="ES256"),  # no expiry
        jwt.encode({"sub": "dave", "iss": ISSUER, "aud": AUDIENCE, "exp": now + 60}, "x" * 32, algorithm="HS256"),
        "not.a.jwt",
    ):
        assert await verifier.verify(refused) is None


@pytest.fixture
def jwks_url(key: ec.EllipticCurvePrivateKey) -> Iterator[str]:
    with served_json(jwks(key).encode()) as url:
        yield url


async def test_a_jwks_url_is_fetched_over_http_only_when_insecure_jwks_says_so(
    jwks_url: str, key: ec.EllipticCurvePrivateKey
) -> None:
    with pytest.raises(ConfigError, match="https://"):
        JwtVerifier(settings(jwks_url))
    authenticator = Authenticator(jwts=JwtVerifier(settings(jwks_url, insecure_jwks=True)))
    erin = await authenticator.authenticate(token(key, sub="erin"))
    assert erin is not None and erin.principal == Principal("erin")
    assert await authenticator.authenticate(token(key, aud="x")) is None


def test_a_jwks_needs_its_issuer_and_audience_and_a_readable_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="IAC_CODE_JWT_ISSUER"):
        JwtVerifier(Settings(jwks=str(tmp_path / "jwks.json"), jwt_audience=AUDIENCE))
    with pytest.raises(ConfigError, match="cannot read the JWKS"):
        JwtVerifier(settings(str(tmp_path / "missing.json")))
    (tmp_path / "bad.json").write_text('{"keys": 5}')
    with pytest.raises(ConfigError, match="not usable"):
        JwtVerifier(settings(str(tmp_path / "bad.json")))
