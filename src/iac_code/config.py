"""Settings: environment variables over `$IAC_CODE_CONFIG_DIR/config.json` over defaults.

The variable names are the original iac-code's, so its users can switch without changes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

ENV_KEYS = {
    "provider": "IAC_CODE_PROVIDER",
    "model": "IAC_CODE_MODEL",
    "base_url": "IAC_CODE_BASE_URL",
    "api_key": "IAC_CODE_API_KEY",
    "max_turns": "IAC_CODE_MAX_TURNS",
    "max_tokens": "IAC_CODE_MAX_TOKENS",
    "context_window": "IAC_CODE_CONTEXT_WINDOW",
    "compact_threshold": "IAC_CODE_COMPACT_THRESHOLD",
    "script": "IAC_CODE_SCRIPT",
    "session_idle_seconds": "IAC_CODE_SESSION_IDLE_SECONDS",
    "database_url": "IAC_CODE_DATABASE_URL",
    "instance_id": "IAC_CODE_INSTANCE_ID",
    "heartbeat_seconds": "IAC_CODE_HEARTBEAT_SECONDS",
    "lease_seconds": "IAC_CODE_LEASE_SECONDS",
}


class ConfigError(Exception):
    """A misconfiguration, phrased as one line naming what to set."""


@dataclass
class Settings:
    config_dir: Path = field(default_factory=lambda: Path.home() / ".iac-code")
    provider: str = ""  # empty: no model configured → the offline demo script
    model: str = ""  # empty: the provider preset's default model
    base_url: str = ""
    api_key: str = ""
    script: str = ""  # path of a script for the `scripted` provider
    max_turns: int = 50  # model calls per prompt before stopReason max_turn_requests
    max_tokens: int = 8192  # output tokens per model call
    context_window: int = 0  # 0: the provider's own figure
    compact_threshold: float = 0.8  # compact when the context passes this share of the window
    session_idle_seconds: float = 1800  # an idle session's runtime leaves memory after this; reloaded on use
    database_url: str = field(default="", repr=False)  # postgresql://…: sessions in PostgreSQL (may hold a password)
    instance_id: str = ""  # with a database: this server's name among its peers ([a-z0-9_]; default: generated)
    heartbeat_seconds: float = 5.0  # with a database: how often an instance says it is alive and renews its leases
    lease_seconds: float = 15.0  # with a database: how long a dead instance's sessions stay locked
    env: Mapping[str, str] = field(default_factory=dict, repr=False)  # for provider key lookups

    @property
    def sessions_dir(self) -> Path:
        return self.config_dir / "sessions"

    @property
    def model_configured(self) -> bool:
        return bool(self.provider)


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    env = dict(os.environ if env is None else env)
    config_dir = Path(env.get("IAC_CODE_CONFIG_DIR") or Path.home() / ".iac-code").expanduser()
    values: dict[str, Any] = _read_config_file(config_dir / "config.json")
    for name, var in ENV_KEYS.items():
        if env.get(var):
            values[name] = env[var]
    settings = Settings(config_dir=config_dir, env=env)
    types = {f.name: f.type for f in fields(Settings)}
    for name, raw in values.items():
        if name not in ENV_KEYS:
            continue
        setattr(settings, name, _coerce(name, raw, types[name]))
    return settings


def _read_config_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a JSON object")
    return data


def _coerce(name: str, raw: Any, type_name: Any) -> Any:
    try:
        if type_name in ("int", int):
            return int(raw)
        if type_name in ("float", float):
            return float(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"{ENV_KEYS[name]} must be a number, got {raw!r}") from None
    return str(raw)
