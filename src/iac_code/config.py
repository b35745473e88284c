"""Settings: environment variables over `$IAC_CODE_CONFIG_DIR/config.json` over defaults.

The one source of every setting: nothing else in src/ reads the environment for one (the start-up hands
what each part needs down, e.g. to the warm workers). The variable names are the original iac-code's, so
its users can switch without changes; the HTTP token keeps its own prefix, as DESIGN.md fixes it, and is
also read under the project's prefix (IAC_CODE_ACP_HTTP_TOKEN), so that the spelling the rule suggests never
starts an open server. config.json's key for a setting is its variable's name without `IAC_CODE_`, lower-case
(`config_key`); the spellings earlier versions read there are still accepted.
"""

from __future__ import annotations

import difflib
import ipaddress
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from iac_code.stored_credentials import credentials_path, stored_api_key

ENV_KEYS = {
    "provider": "IAC_CODE_PROVIDER",
    "model": "IAC_CODE_MODEL",
    "base_url": "IAC_CODE_BASE_URL",
    "api_key": "IAC_CODE_API_KEY",
    "max_turns": "IAC_CODE_MAX_TURNS",
    "max_tokens": "IAC_CODE_MAX_TOKENS",
    "context_window": "IAC_CODE_CONTEXT_WINDOW",
    "compact_threshold": "IAC_CODE_COMPACT_THRESHOLD",
    "tools_share": "IAC_CODE_TOOLS_SHARE",
    "script": "IAC_CODE_SCRIPT",
    "cache_ttl": "IAC_CODE_CACHE_TTL",
    "prompt_cache_key": "IAC_CODE_PROMPT_CACHE_KEY",
    "session_idle_seconds": "IAC_CODE_SESSION_IDLE_SECONDS",
    "images": "IAC_CODE_IMAGES",
    "mcp_timeout_seconds": "IAC_CODE_MCP_TIMEOUT",
    "database_url": "IAC_CODE_DATABASE_URL",
    "instance_id": "IAC_CODE_INSTANCE_ID",
    "heartbeat_seconds": "IAC_CODE_HEARTBEAT_SECONDS",
    "lease_seconds": "IAC_CODE_LEASE_SECONDS",
    "worker_idle_seconds": "IAC_CODE_WORKER_IDLE_SECONDS",
    "http_token": "IACCODE_ACP_HTTP_TOKEN",
    # Who is asking (issue 21, USERS): the HTTP server's principals besides the one shared token.
    "tokens_file": "IAC_CODE_TOKENS_FILE",
    "jwks": "IAC_CODE_JWKS",
    "jwt_issuer": "IAC_CODE_JWT_ISSUER",
    "jwt_audience": "IAC_CODE_JWT_AUDIENCE",
    "jwt_roles_claim": "IAC_CODE_JWT_ROLES_CLAIM",
    "jwt_admin_role": "IAC_CODE_JWT_ADMIN_ROLE",
    # A shared server (issue 37): where a principal may open sessions, what a client's MCP servers may run and reach.
    "workspace_roots": "IAC_CODE_WORKSPACE_ROOTS",
    "client_mcp_commands": "IAC_CODE_CLIENT_MCP_COMMANDS",
    "client_mcp_networks": "IAC_CODE_CLIENT_MCP_NETWORKS",
    # Hardening of the shared HTTP server (issue 37): credentials, sockets and per-principal limits.
    "insecure_jwks": "IAC_CODE_INSECURE_JWKS",
    "http_header_timeout": "IAC_CODE_HTTP_HEADER_TIMEOUT",
    "http_max_sockets": "IAC_CODE_HTTP_MAX_SOCKETS",
    "http_principal_connections": "IAC_CODE_HTTP_PRINCIPAL_CONNECTIONS",
    "http_principal_requests": "IAC_CODE_HTTP_PRINCIPAL_REQUESTS",
    "websocket_without_acp": "IAC_CODE_WEBSOCKET_WITHOUT_ACP",
    # The per-user warm process of `iac-code acp` on stdio (issue 24, warm/): the launcher reads IAC_CODE_WARM
    # (and config.json's "warm") itself, before this module is imported.
    "warm": "IAC_CODE_WARM",
    "warm_idle_seconds": "IAC_CODE_WARM_IDLE_SECONDS",
}
PREFIX = "IAC_CODE_"
# Other names of a setting's variable: the first wins when both are set (and must agree).
ENV_ALIASES: dict[str, tuple[str, ...]] = {"http_token": ("IAC_CODE_ACP_HTTP_TOKEN",)}
# config.json keys of earlier versions (the Settings fields' names), still read.
OLD_FILE_KEYS = ("mcp_timeout_seconds", "http_token")
# Settings that only config.json holds, in the shape editors use for them.
FILE_ONLY_KEYS = ("mcpServers", "permissions", "trustedProjects", "prices")
WARM_MODES = ("auto", "off")


def config_key(name: str) -> str:
    """config.json's key for the setting `name`: its variable without the IAC_CODE_ prefix, lower-case."""
    variable = next(v for v in (ENV_KEYS[name], *ENV_ALIASES.get(name, ())) if v.startswith(PREFIX))
    return variable.removeprefix(PREFIX).lower()


# config.json key → the setting it fills
FILE_KEYS = {config_key(name): name for name in ENV_KEYS} | {key: key for key in OLD_FILE_KEYS}


logger = logging.getLogger(__name__)


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
    # When the tools' schemas (built-in and MCP) would pass this share of the window, the MCP tools are found
    # through `tool_search` instead of all being listed (agent/tool_offer.py)
    tools_share: float = 0.10
    cache_ttl: str = "5m"  # how long Anthropic keeps the prompt cache: "5m" or "1h" (writes cost more)
    # whether OpenAI-style requests carry `prompt_cache_key`; None: the preset decides (api.openai.com only)
    prompt_cache_key: bool | None = None
    session_idle_seconds: float = 1800  # an idle session's runtime leaves memory after this; reloaded on use
    images: bool | None = None  # whether prompts may carry images; None: the model table decides
    mcp_timeout_seconds: float = 120  # one MCP tool call's limit
    # config.json's `mcpServers` as written (the editors' shape); iac_code.mcp.config validates it.
    mcp_servers: Any = field(default_factory=dict, repr=False)  # env and headers may hold secrets
    database_url: str = field(default="", repr=False)  # postgresql://…: sessions in PostgreSQL (may hold a password)
    instance_id: str = ""  # with a database: this server's name among its peers ([a-z0-9_]; default: generated)
    heartbeat_seconds: float = 5.0  # with a database: how often an instance says it is alive and renews its leases
    lease_seconds: float = 15.0  # with a database: how long a dead instance's sessions stay locked
    worker_idle_seconds: float = 1800  # an iac_check warm worker (checkov, cfn-lint) idle this long exits
    http_token: str = field(default="", repr=False)  # the bearer token the HTTP server requires (empty: none)
    # Who is asking (issue 21, USERS): the HTTP server's principals besides the one shared token.
    tokens_file: str = ""  # {"tokens": [{"name", "sha256", "role"?}]}; empty: $IAC_CODE_CONFIG_DIR/tokens.json
    jwks: str = ""  # bearer JWTs are checked against this JWKS: a file path or an https:// URL (empty: no JWTs)
    jwt_issuer: str = ""  # the `iss` a JWT must carry (required with jwks)
    jwt_audience: str = ""  # the `aud` a JWT must carry (required with jwks)
    jwt_roles_claim: str = "roles"  # the claim listing a JWT's roles (a list of strings, or one string)
    jwt_admin_role: str = "admin"  # the role in it that makes the principal an admin
    # A shared server (issue 37; the local user of stdio, or of an HTTP server without authentication, is never
    # held by these): the directories each principal may open sessions under, by principal name, "*" for the
    # others (an admin only when named); absolute paths of the commands a client's stdio MCP servers may run;
    # addresses and networks (CIDR) a client's http/sse MCP servers may reach though private, loopback, ….
    workspace_roots: dict[str, tuple[str, ...]] = field(default_factory=dict)
    client_mcp_commands: tuple[str, ...] = ()
    client_mcp_networks: tuple[str, ...] = ()
    # Hardening of the shared HTTP server (issue 37): credentials, sockets and per-principal limits.
    insecure_jwks: bool = False  # allow a JWKS fetched over http:// (tests only: anyone on the path could swap it)
    http_header_timeout: float = 10.0  # seconds a socket has to send a whole request head, else it is closed
    http_max_sockets: int = 0  # open sockets at once, past it new ones are closed at once; 0: from the fd limit
    http_principal_connections: int = 256  # ACP connections one principal holds at once; past it 429
    http_principal_requests: int = 1024  # requests one principal has open at once (streams, sockets); past it 429
    websocket_without_acp: bool = False  # accept WebSocket upgrades that do not offer the `acp` subprotocol
    warm: str = "auto"  # "auto": `iac-code acp` on stdio hands off to a warm process (started if none); "off"
    warm_idle_seconds: float = 600  # a warm process with no launch for this long exits
    env: Mapping[str, str] = field(default_factory=dict, repr=False)  # for provider key lookups
    # Not a setting: ACP's `logout` ran and no `authenticate` since, so no key is used (providers/sign_in.py).
    signed_out: bool = False
    # Permission rules (issue 21, RULES): config.json's `permissions` ({"deny", "ask", "allow"} lists of rules)
    # and `trustedProjects` (directories whose .iac-code/settings.json allow rules apply), as written;
    # agent/rules.py checks them at start-up.
    permissions: Any = None
    trusted_projects: Any = None
    # config.json's `prices` ({"<model id>": {"input", "output", "cache_read", "cache_write", "currency"}}),
    # as written; providers/prices.py checks it against the bundled table's shape.
    prices: Any = None

    @property
    def sessions_dir(self) -> Path:
        """The file store of earlier versions, imported into the database once (sessions/import_files.py)."""
        return self.config_dir / "sessions"

    @property
    def store_path(self) -> Path:
        """The embedded database: sessions (and, later, the audit trail)."""
        return self.config_dir / "iac-code.db"

    @property
    def tokens_path(self) -> Path:
        """The tokens file (`iac-code token add` writes it; the HTTP server reads it when it exists)."""
        return Path(self.tokens_file).expanduser() if self.tokens_file else self.config_dir / "tokens.json"

    @property
    def iac_cache_path(self) -> Path:
        """iac_check's results, kept across sessions and processes (iac/cache.py)."""
        return self.config_dir / "cache" / "iac-check.sqlite"

    @property
    def provider_schema_cache_path(self) -> Path:
        """provider_schema's schemas, one row per type, kept across sessions (iac/schemas/store.py)."""
        return self.config_dir / "cache" / "provider-schemas.sqlite"

    @property
    def model_configured(self) -> bool:
        return bool(self.provider)

    # Monitoring (issue 21, metrics and traces): OpenTelemetry's own standard variables configure traces, and
    # its SDK reads them itself; whether they ask for spans at all decides if it is even imported.
    @property
    def tracing_configured(self) -> bool:
        """An OTLP endpoint or a traces exporter is set (and OpenTelemetry is not switched off)."""
        exporter = self.env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
        if exporter == "none" or self.env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
            return False
        endpoints = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        return bool(exporter) or any(self.env.get(name, "").strip() for name in endpoints)


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    env = dict(os.environ if env is None else env)
    config_dir = Path(env.get("IAC_CODE_CONFIG_DIR") or Path.home() / ".iac-code").expanduser()
    config_file = config_dir / "config.json"
    from_file = _read_config_file(config_file)
    settings = Settings(config_dir=config_dir, env=env)
    # Checked where it is used (iac_code.mcp.config), so one bad server entry breaks nothing else.
    settings.mcp_servers = from_file.pop("mcpServers", {})
    settings.permissions = from_file.pop("permissions", None)
    settings.trusted_projects = from_file.pop("trustedProjects", None)
    settings.prices = from_file.pop("prices", None)
    # name → (raw value, where it came from, as the user would look for it)
    values = {FILE_KEYS[key]: (raw, f"{key} in {config_file}") for key, raw in from_file.items()}
    if stored_key := stored_api_key(config_dir):  # a sign-in's key wins over config.json's, not the environment's
        values["api_key"] = (stored_key, str(credentials_path(config_dir)))
    for name, var in ENV_KEYS.items():
        if found := _from_environment(env, (var, *ENV_ALIASES.get(name, ()))):
            values[name] = found
    types = {f.name: f.type for f in fields(Settings)}
    for name, (raw, source) in values.items():
        setattr(settings, name, _coerce(source, raw, types[name]))
    if settings.warm not in WARM_MODES:
        source = values["warm"][1]
        raise ConfigError(f"{source} must be one of {', '.join(WARM_MODES)}, got {settings.warm!r}")
    _check_shared_server_lists(settings, {name: source for name, (_, source) in values.items()})
    return settings


def _check_shared_server_lists(settings: Settings, sources: Mapping[str, str]) -> None:
    """A shared server's lists hold what they say (found at start-up, not at a principal's first request)."""
    paths = [*settings.client_mcp_commands, *(p for roots in settings.workspace_roots.values() for p in roots)]
    for path in paths:
        if not os.path.isabs(os.path.expanduser(path)):
            where = "client_mcp_commands" if path in settings.client_mcp_commands else "workspace_roots"
            raise ConfigError(f"{sources.get(where, where)} must hold absolute paths, got {path!r}")
    for entry in settings.client_mcp_networks:
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            source = sources.get("client_mcp_networks", "client_mcp_networks")
            raise ConfigError(f"{source} must hold addresses or CIDR networks, got {entry!r}") from None


def _from_environment(env: Mapping[str, str], variables: tuple[str, ...]) -> tuple[str, str] | None:
    """(value, variable) of the first of a setting's variables that is set; two that disagree are an error,
    since either choice would surprise someone (a token the other spelling did not set, say)."""
    given = [(env[var], var) for var in variables if env.get(var)]
    if len({value for value, _ in given}) > 1:
        raise ConfigError(f"{' and '.join(var for _, var in given)} are both set, to different values: keep one")
    return given[0] if given else None


def _read_config_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a JSON object")
    known = [*FILE_KEYS, *FILE_ONLY_KEYS]
    for key in sorted(data.keys() - set(known)):
        closest = difflib.get_close_matches(key, known, n=1)
        valid = [*(config_key(name) for name in ENV_KEYS), *FILE_ONLY_KEYS]
        hint = f" (did you mean {closest[0]!r}?)" if closest else f" (valid keys: {', '.join(valid)})"
        logger.warning("%s: unknown key %r ignored%s", path, key, hint)
    return {key: value for key, value in data.items() if key in known and value is not None}


def _coerce(source: str, raw: Any, type_name: Any) -> Any:
    if type_name in ("bool | None", "bool"):
        return _switch(source, raw)
    if type_name == "tuple[str, ...]":
        return _strings(source, raw)
    if type_name == "dict[str, tuple[str, ...]]":
        return _strings_by_name(source, raw)
    try:
        if type_name in ("int", int):
            return int(raw)
        if type_name in ("float", float):
            return float(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"{source} must be a number, got {raw!r}") from None
    return str(raw)


def _strings(source: str, raw: Any) -> tuple[str, ...]:
    """A list setting: a JSON list of strings in config.json, comma-separated in the environment."""
    items = raw.split(",") if isinstance(raw, str) else raw
    if not isinstance(items, list | tuple) or not all(isinstance(item, str) for item in items):
        raise ConfigError(f"{source} must be a list of strings, got {raw!r}")
    return tuple(item.strip() for item in items if item.strip())


def _strings_by_name(source: str, raw: Any) -> dict[str, tuple[str, ...]]:
    """Lists by principal name: a JSON object of lists, or one list (the environment's form) for "*", everyone."""
    if not isinstance(raw, dict):
        return {"*": _strings(source, raw)}
    if not all(isinstance(name, str) for name in raw):
        raise ConfigError(f"{source} must map principal names to lists")
    return {name: _strings(f"{source} ({name})", items) for name, items in raw.items()}


def _switch(source: str, raw: Any) -> bool:
    """On/off from the environment ("1", "0", "true", …) or from JSON (true/false)."""
    word = str(raw).strip().lower()
    if word in ("1", "true", "yes", "on"):
        return True
    if word in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{source} must be 1 or 0, got {raw!r}")
