"""What finding a request's principal costs the HTTP server (issue 21): the shared token, a token of a
tokens file of 200 principals (a stat of the file and every digest compared), and a JWT checked against a
JWKS file (an ES256 and an RS256 signature). Medians of N calls each, in microseconds.
Run: .venv/bin/python -P bench/principals.py [N]  (-P: bench/http.py would shadow the standard http)
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from iac_code.config import Settings
from iac_code.transports.http.auth import Authenticator, bearer_token
from iac_code.transports.http.jwts import JwtVerifier
from iac_code.transports.http.tokens import TokensFile, add_token

ISSUER, AUDIENCE = "https://id.example", "iac-code"


async def _median_us(authenticator: Authenticator, authorization: str, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        assert await authenticator.principal(bearer_token(authorization)) is not None
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def _jwt_case(
    directory: Path, name: str, key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
) -> tuple[Authenticator, str]:
    algorithm, codec = (
        ("ES256", jwt.algorithms.ECAlgorithm) if name == "es256" else ("RS256", jwt.algorithms.RSAAlgorithm)
    )
    public = json.loads(codec.to_jwk(key.public_key()))
    path = directory / f"{name}.json"
    path.write_text(json.dumps({"keys": [{**public, "kid": "k", "alg": algorithm}]}))
    verifier = JwtVerifier(Settings(jwks=str(path), jwt_issuer=ISSUER, jwt_audience=AUDIENCE))
    claims = {"sub": "dave", "iss": ISSUER, "aud": AUDIENCE, "exp": int(time.time()) + 3600}
    return Authenticator(jwts=verifier), jwt.encode(claims, key, algorithm=algorithm, headers={"kid": "k"})


async def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        tokens = [add_token(directory / "tokens.json", f"user{n}", admin=False) for n in range(200)]
        cases = {
            "shared token": (Authenticator(shared_token="s" * 43), "s" * 43),
            "tokens file, 200 principals": (Authenticator(tokens=TokensFile(directory / "tokens.json")), tokens[-1]),
            "JWT ES256 (JWKS file)": _jwt_case(directory, "es256", ec.generate_private_key(ec.SECP256R1())),
            "JWT RS256 (JWKS file)": _jwt_case(directory, "rs256", rsa.generate_private_key(65537, 2048)),
        }
        for label, (authenticator, token) in cases.items():
            print(f"{label:30} {await _median_us(authenticator, f'Bearer {token}', rounds):8.1f} µs per request")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
