"""Bearer JWTs checked against a JWKS (a file, or an https URL fetched and cached by PyJWT): signature,
issuer, audience and expiry. The principal is the `sub` claim, which must follow the principals' name rule
(tokens.is_principal_name: it is printed in logs and the audit trail); it is an admin when the roles claim
(`IAC_CODE_JWT_ROLES_CLAIM`, default `roles`: a list of strings or one string) holds the admin role
(`IAC_CODE_JWT_ADMIN_ROLE`, default `admin`).

A JWKS fetched over plain http could be swapped by anyone on the path, who would then sign any token: only
https, unless the operator says `--insecure-jwks` (`IAC_CODE_INSECURE_JWKS`, for tests)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import jwt

from iac_code.config import ConfigError, Settings
from iac_code.principals import Principal
from iac_code.transports.http.tokens import NAME_RULE, is_principal_name

logger = logging.getLogger(__name__)

ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
LEEWAY_SECONDS = 30  # clocks differ a little between the issuer and this server


class JwtVerifier:
    def __init__(self, settings: Settings) -> None:
        if not settings.jwt_issuer or not settings.jwt_audience:
            raise ConfigError("IAC_CODE_JWKS needs IAC_CODE_JWT_ISSUER and IAC_CODE_JWT_AUDIENCE")
        self._issuer = settings.jwt_issuer
        self._audience = settings.jwt_audience
        self._roles_claim = settings.jwt_roles_claim
        self._admin_role = settings.jwt_admin_role
        self._keys: jwt.PyJWKSet | None = None
        self._client: jwt.PyJWKClient | None = None
        if settings.jwks.startswith("http://") and not settings.insecure_jwks:
            raise ConfigError(
                "IAC_CODE_JWKS must be an https:// URL or a file: a JWKS over http:// can be replaced on its way "
                "(--insecure-jwks or IAC_CODE_INSECURE_JWKS=true allows it, for tests)"
            )
        if settings.jwks.startswith(("https://", "http://")):
            self._client = jwt.PyJWKClient(settings.jwks, cache_keys=True, lifespan=300)
        else:
            self._keys = _read_jwks(Path(settings.jwks).expanduser())

    async def verify(self, token: str) -> tuple[Principal, float] | None:
        """The token's principal and its expiry (`exp`, seconds since the epoch), or None when it does not
        pass (the reason is logged, the token never)."""
        try:
            key = await self._signing_key(token)
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=ALGORITHMS,
                audience=self._audience,
                issuer=self._issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except (jwt.PyJWTError, ValueError) as exc:
            logger.info("bearer JWT refused: %s", exc)
            return None
        subject = claims["sub"]
        if not is_principal_name(subject):  # never logged: it may carry newlines that forge log lines
            logger.info("bearer JWT refused: its sub must be %s", NAME_RULE)
            return None
        roles = claims.get(self._roles_claim, [])
        roles = [roles] if isinstance(roles, str) else roles
        return Principal(subject, admin=isinstance(roles, list) and self._admin_role in roles), float(claims["exp"])

    async def _signing_key(self, token: str) -> Any:
        if self._client is not None:  # may fetch the JWKS: off the event loop
            return (await asyncio.to_thread(self._client.get_signing_key_from_jwt, token)).key
        assert self._keys is not None
        key_id = jwt.get_unverified_header(token).get("kid")
        for candidate in self._keys.keys:
            if key_id is None or candidate.key_id == key_id:
                return candidate.key
        raise ValueError(f"no key {key_id!r} in the JWKS")


def _read_jwks(path: Path) -> jwt.PyJWKSet:
    try:
        return jwt.PyJWKSet.from_json(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read the JWKS {path}: {exc.strerror}") from None
    except (jwt.PyJWTError, ValueError) as exc:
        raise ConfigError(f"the JWKS {path} is not usable: {exc}") from None
