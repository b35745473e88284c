"""Which MCP servers a client may start on a shared server (issue 37). The editor's own user (stdio, or an HTTP
server without authentication) is not held: its list is passed on as sent.

A principal of a shared server runs a stdio server only when its command, found as exec would find it (on
the PATH of the server's environment, the client's `env` included; a relative path in the session's cwd), is
one of the absolute paths the operator lists in `client_mcp_commands`; the server is then started by that
exact path, so nothing found later on a PATH runs instead. An http/sse server's host must resolve to
addresses `Reach` allows (and every connection is judged again: mcp/checked_http.py). An admin (the
operator's own) is not held by either; each client stdio server's start is audited all the same
(host/client_mcp.py).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from iac_code.config import Settings
from iac_code.mcp.addresses import Reach, Unreachable
from iac_code.mcp.config import InvalidServer, ServerSpec, StdioServer, from_acp
from iac_code.principals import Principal, is_shared
from iac_code.system.processes import command_environment


class ServerRefused(Exception):
    """A client's MCP server this principal may not start; `name` is the server's, the message says why."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"MCP server '{name}' refused: {reason}")
        self.name = name


@dataclasses.dataclass(frozen=True)
class ClientServerRules:
    commands: frozenset[str]  # normalised absolute paths
    reach: Reach

    @classmethod
    def from_settings(cls, settings: Settings) -> ClientServerRules:
        """The settings' lists (load_settings checked them: absolute paths, networks)."""
        commands = frozenset(os.path.normpath(os.path.expanduser(c)) for c in settings.client_mcp_commands)
        return cls(commands, Reach.from_setting(settings.client_mcp_networks))

    async def admitted(self, principal: Principal, cwd: Path, servers: Iterable[Any]) -> list[Any]:
        """The servers as they will be started: the client's list as sent for the local user; for a shared
        server's principal, checked specs (commands by their resolved path, http held to `reach`).
        ServerRefused for the first one it may not start."""
        if not is_shared(principal):
            return list(servers)
        return [await self._admitted(principal, cwd, spec) for spec in from_acp(servers)]

    async def _admitted(self, principal: Principal, cwd: Path, spec: ServerSpec) -> ServerSpec:
        if isinstance(spec, InvalidServer) or principal.admin:
            return spec
        if isinstance(spec, StdioServer):
            path = resolved_command(spec, cwd)
            if path is None or path not in self.commands:
                shown = spec.command if path is None or path == spec.command else f"{spec.command} ({path})"
                raise ServerRefused(spec.name, f"its command {shown} is not in the server's client_mcp_commands")
            return dataclasses.replace(spec, command=path)
        parts = urlsplit(spec.url)
        try:
            await self.reach.checked_addresses(parts.hostname or "", parts.port or _default_port(parts.scheme))
        except Unreachable as exc:
            raise ServerRefused(spec.name, f"{exc}; only the server's client_mcp_networks are reached there") from None
        return dataclasses.replace(spec, reach=self.reach)


def resolved_command(spec: StdioServer, cwd: Path) -> str | None:
    """The absolute path exec would run for `spec` (its PATH is the server's environment's), or None."""
    command = spec.command
    if os.sep not in command:
        env = {**command_environment(guarded=False), **spec.env}
        found = shutil.which(command, path=os.pathsep.join(os.get_exec_path(env)))
        if found is None:
            return None
        command = found
    return os.path.normpath(os.path.join(cwd, command))


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80
