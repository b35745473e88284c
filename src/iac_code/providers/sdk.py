"""What the two official SDKs (openai, anthropic) have in common, kept out of either provider so that
using one never imports the other: their errors, turned into ProviderError, and tool-argument JSON."""

from __future__ import annotations

import logging
from types import ModuleType
from typing import Any

import httpx2

from iac_code.providers.base import ProviderAuthError, ProviderError
from iac_code.safe_json import loads

logger = logging.getLogger(__name__)


def provider_error(
    sdk: ModuleType, exc: Exception, *, name: str, model: str, endpoint: str, key_env: str
) -> ProviderError:
    """A failure after the SDK's own retries, as a message safe to show (never key material)."""
    if isinstance(exc, (sdk.AuthenticationError, sdk.PermissionDeniedError)):
        also = f" (or {key_env})" if key_env else ""
        return ProviderAuthError(f"authentication failed for provider {name}: check IAC_CODE_API_KEY{also}")
    if isinstance(exc, sdk.APIStatusError):
        return ProviderError(f"{name} returned HTTP {exc.status_code}: {_api_message(exc)}")
    if isinstance(exc, sdk.APITimeoutError):
        return ProviderError(f"{name} timed out (model {model})")
    if isinstance(exc, sdk.APIConnectionError):
        return ProviderError(f"cannot reach {name} at {endpoint}")
    return ProviderError(f"{name} stream failed: {type(exc).__name__}")


def sdk_errors(sdk: ModuleType) -> tuple[type[Exception], ...]:
    """The exceptions `provider_error` translates."""
    return (sdk.APIError, httpx2.HTTPError)  # the SDKs' transport: a connection lost mid-stream


def _api_message(exc: Any) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(exc.message)


def parse_arguments(raw: str) -> dict[str, Any]:
    """Streamed tool-call arguments; unparseable JSON becomes {} (the tool then reports what is missing)."""
    try:
        parsed = loads(raw) if raw.strip() else {}  # too deep or NaN count as unparseable
    except ValueError:
        logger.warning("tool call arguments are not valid JSON (%d chars); using {}", len(raw))
        return {}
    return parsed if isinstance(parsed, dict) else {}
