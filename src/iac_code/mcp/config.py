"""Which MCP servers a session gets: the client's list (ACP shapes) merged over the settings file's.

ACP (`session/new` and friends) sends a list: stdio `{name, command, args, env: [{name, value}]}`,
`{type: "http"|"sse", name, url, headers: [{name, value}]}`, as `acp.schema` models or plain dicts.
`config.json` uses the editors' map: `"mcpServers": {"name": {"command", "args", "env": {..}}}` or
`{"url", "headers": {..}, "type": "http"|"sse"}` (type defaults to http).

A client server and a settings server with the same name: the client's wins (it knows the project
at hand). An entry that cannot be used becomes an `InvalidServer`, reported through the hub's
problem callback, so one typo never hides the other servers.

Trust: `"trusted": true` on a config.json entry says the user vouches for the server's annotations, so
its tools marked read-only run in every mode (mcp/access.py). Only the user's own file can say so: ACP
has no such field, a client's server is never trusted (a `trusted` key in its JSON is ignored), and a
client's server that replaces a trusted one of the same name is not trusted either.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel

from iac_code.config import Settings
from iac_code.mcp.addresses import Reach


@dataclass(frozen=True)
class StdioServer:
    name: str
    command: str
    args: tuple[str, ...] = field(default=(), repr=False)  # may hold a token
    env: Mapping[str, str] = field(default_factory=dict, repr=False)  # may hold secrets
    trusted: bool = False  # the user's config.json vouches for its annotations


@dataclass(frozen=True)
class HttpServer:
    name: str
    url: str = field(repr=False)  # its query or user info may hold a token
    transport: Literal["http", "sse"] = "http"
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)  # may hold secrets
    trusted: bool = False  # the user's config.json vouches for its annotations
    # a shared server's client-sent server: only these addresses may be connected to (mcp/addresses.py)
    reach: Reach | None = field(default=None, repr=False)


@dataclass(frozen=True)
class InvalidServer:
    """An entry we could not use; `problem` says why, in words for the user."""

    name: str
    problem: str


ServerSpec = StdioServer | HttpServer | InvalidServer


def server_specs(settings: Settings, client_servers: Iterable[Any] = ()) -> list[ServerSpec]:
    """The session's servers: the settings file's, then the client's, the client winning on a name."""
    merged = {spec.name: spec for spec in from_settings(settings.mcp_servers)}
    merged.update((spec.name, spec) for spec in from_acp(client_servers))
    return list(merged.values())


def from_acp(servers: Iterable[Any]) -> list[ServerSpec]:
    """Servers as ACP sends them: acp.schema models (McpServerStdio, HttpMcpServer, SseMcpServer) or dicts."""
    specs: list[ServerSpec] = []
    for index, raw in enumerate(servers):
        if isinstance(raw, StdioServer | HttpServer | InvalidServer):  # already checked (mcp/client_servers.py)
            specs.append(raw)
            continue
        entry = raw.model_dump(by_alias=True) if isinstance(raw, BaseModel) else raw
        if not isinstance(entry, Mapping):
            specs.append(InvalidServer(f"server {index + 1}", "an MCP server must be a JSON object"))
            continue
        name = entry.get("name")
        name = name if isinstance(name, str) and name.strip() else f"server {index + 1}"
        kind = entry.get("type") or ("stdio" if "command" in entry else None)
        if kind == "stdio":
            specs.append(_stdio(name, entry.get("command"), entry.get("args"), _pairs(entry.get("env"))))
        elif kind in ("http", "sse"):
            specs.append(_http(name, entry.get("url"), _transport(kind), _pairs(entry.get("headers"))))
        else:
            specs.append(InvalidServer(name, f"unknown MCP server type {kind!r} (expected stdio, http or sse)"))
    return specs


def from_settings(servers: Any) -> list[ServerSpec]:
    """Servers in config.json's `mcpServers` map (the shape Claude Desktop, Cursor and Zed use)."""
    if not servers:
        return []
    if not isinstance(servers, Mapping):
        return [InvalidServer("mcpServers", "`mcpServers` in config.json must be an object of servers by name")]
    specs: list[ServerSpec] = []
    for name, entry in servers.items():
        if not isinstance(entry, Mapping):
            specs.append(InvalidServer(str(name), "an MCP server entry must be a JSON object"))
        elif not isinstance(entry.get("trusted", False), bool):
            specs.append(InvalidServer(str(name), "`trusted` must be true or false"))
        else:
            specs.append(_settings_server(str(name), entry))
    return specs


def _settings_server(name: str, entry: Mapping[str, Any]) -> ServerSpec:
    trusted = entry.get("trusted", False)
    if "command" in entry:
        return _stdio(name, entry.get("command"), entry.get("args"), entry.get("env"), trusted=trusted)
    if "url" in entry:
        kind = entry.get("type") or entry.get("transport") or "http"
        kind = "http" if kind == "streamable-http" else kind
        if kind not in ("http", "sse"):
            return InvalidServer(name, f"unknown MCP server type {kind!r} (expected http or sse)")
        return _http(name, entry.get("url"), _transport(kind), entry.get("headers"), trusted=trusted)
    return InvalidServer(name, "an MCP server needs either a `command` or a `url`")


def describe(spec: ServerSpec) -> str:
    """How a server is shown in logs and messages: never env values, header values, args or URL queries."""
    if isinstance(spec, InvalidServer):
        return "invalid"
    trust = ", trusted" if spec.trusted else ""
    if isinstance(spec, StdioServer):
        extra = f", env: {', '.join(sorted(spec.env))}" if spec.env else ""
        return f"stdio `{spec.command}` ({len(spec.args)} arguments{extra}){trust}"
    return f"{spec.transport} {safe_url(spec.url)}{trust}"


def safe_url(url: str) -> str:
    """The URL without user info, query or fragment: any of them may carry a token."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _stdio(name: str, command: Any, args: Any, env: Any, *, trusted: bool = False) -> ServerSpec:
    if not isinstance(command, str) or not command.strip():
        return InvalidServer(name, "a stdio MCP server needs a `command`")
    if args is None:
        args = []
    if not isinstance(args, Sequence) or isinstance(args, str) or not all(isinstance(a, str) for a in args):
        return InvalidServer(name, "`args` must be a list of strings")
    variables = _string_map(env)
    if variables is None:
        return InvalidServer(name, "`env` must map names to strings")
    return StdioServer(name, command, tuple(args), variables, trusted)


def _http(name: str, url: Any, kind: Literal["http", "sse"], headers: Any, *, trusted: bool = False) -> ServerSpec:
    if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
        return InvalidServer(name, f"an {kind} MCP server needs an http(s) `url`")
    values = _string_map(headers)
    if values is None:
        return InvalidServer(name, "`headers` must map names to strings")
    return HttpServer(name, url, kind, values, trusted)


def _transport(kind: str) -> Literal["http", "sse"]:
    return "sse" if kind == "sse" else "http"


def _pairs(items: Any) -> Any:
    """ACP's `[{name, value}]` lists as a map; anything else is passed on for `_string_map` to refuse."""
    if isinstance(items, list) and all(isinstance(i, Mapping) and "name" in i for i in items):
        return {i["name"]: i.get("value") for i in items}
    return items


def _string_map(values: Any) -> dict[str, str] | None:
    if values is None:
        return {}
    if not isinstance(values, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in values.items()):
        return None
    return dict(values)
