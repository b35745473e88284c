"""The answer to `initialize`, as plain JSON.

It lives apart from the SDK on purpose: loading the SDK's schema (~280 pydantic models) takes most of a
second, so the stdio server answers the handshake from here while the SDK loads in a thread. The
agent's own `initialize` handler validates this same dict into the SDK's `InitializeResponse`, and a
unit test checks that the two agree, so there is one source for the answer.
"""

from __future__ import annotations

import os
from typing import Any

from iac_code import __version__
from iac_code.config import ConfigError, Settings
from iac_code.providers.images import images_enabled
from iac_code.providers.presets import check_settings

PROTOCOL_VERSION = 1  # the only ACP wire version; the SDK's acp.PROTOCOL_VERSION agrees (tested)
# The server's working directory, in `_meta` (ACP's place for what its schema has no field for): a client on
# another machine, the web client, offers it as the directory of a new session.
CWD_META_KEY = "iac-code/cwd"
# Capabilities ACP has only in its unstable schema (`schema.unstable.json`; the TS SDK's stable client drops
# them): kept out of the stable fields, named here under `sessionCapabilities._meta` for a client that looks.
UNSTABLE_META_KEY = "iac-code/unstable"

_ENV_AUTH_HOW = "Set these variables in the agent's environment (or ~/.iac-code/config.json), then restart it."
_ENV_AUTH = {
    "type": "env_var",
    "id": "env",
    "name": "Model settings",
    "description": _ENV_AUTH_HOW,
    "vars": [
        {
            "name": "IAC_CODE_PROVIDER",
            "label": "Provider (openai, anthropic, dashscope, deepseek, ...)",
            "secret": False,
        },
        {"name": "IAC_CODE_API_KEY", "label": "API key"},
        {"name": "IAC_CODE_MODEL", "label": "Model id", "secret": False, "optional": True},
        {"name": "IAC_CODE_BASE_URL", "label": "Endpoint URL", "secret": False, "optional": True},
    ],
}
# What `authenticate` accepts: the methods the agent has (it lists them when the model cannot be used as set).
AUTH_METHOD_IDS = frozenset({str(_ENV_AUTH["id"])})


def negotiate(requested: Any) -> int:
    """The client's version if we speak it, else our latest (the spec's rule)."""
    if isinstance(requested, int) and not isinstance(requested, bool) and 1 <= requested <= PROTOCOL_VERSION:
        return requested
    return PROTOCOL_VERSION


def initialize_result(settings: Settings, requested_version: Any) -> dict[str, Any]:
    return {
        "protocolVersion": negotiate(requested_version),
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"embeddedContext": True, "image": images_enabled(settings), "audio": False},
            "sessionCapabilities": {
                "list": {},
                "close": {},
                "resume": {},
                "delete": {},
                "additionalDirectories": {},
                "_meta": {UNSTABLE_META_KEY: {"fork": {}}},  # session/fork works; it is not stable ACP yet
            },
            "mcpCapabilities": {"http": True, "sse": True},  # stdio needs no flag: every agent takes it
            "auth": {"logout": {}},  # forgets the credentials stored for the user (providers/sign_in.py)
        },
        "agentInfo": {"name": "iac-code", "title": "iac-code", "version": __version__},
        "authMethods": _auth_methods(settings),
        **_meta(),
    }


def _auth_methods(settings: Settings) -> list[dict[str, Any]]:
    """The env-var method whenever the model cannot be used as configured, so that the -32000
    session/new then answers points at something the client can show; none once it can."""
    if not settings.model_configured:
        return [_ENV_AUTH]  # the offline demo answers meanwhile
    try:
        check_settings(settings)
    except ConfigError as exc:
        return [{**_ENV_AUTH, "description": f"{exc}. {_ENV_AUTH_HOW}"}]
    return []


def _meta() -> dict[str, Any]:
    try:
        return {"_meta": {CWD_META_KEY: os.getcwd()}}
    except OSError:  # the directory was removed under the server: nothing to offer
        return {}


def is_plain_initialize(message: dict[str, Any]) -> bool:
    """A well-formed initialize request; anything odd is left to the SDK so it errors the usual way."""
    params = message.get("params")
    return (
        message.get("method") == "initialize"
        and "id" in message
        and isinstance(params, dict)
        and isinstance(params.get("protocolVersion"), (int, str))
    )
