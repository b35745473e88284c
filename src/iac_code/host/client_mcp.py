"""The MCP servers a client sends with session/new, load, resume and fork, as one connection's principal may
start them (mcp/client_servers.py): a refusal is InvalidParams on `mcpServers` naming the server (-32602), and
on a shared server each start of a client's stdio server is an audit row (principal, argv) written before it
starts: a start that cannot be recorded does not happen (Unavailable).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from iac_code.agent.audit import record_server_start
from iac_code.config import Settings
from iac_code.errors import InvalidParams, Unavailable
from iac_code.mcp import StdioServer
from iac_code.mcp.client_servers import ClientServerRules, ServerRefused
from iac_code.principals import Principal, is_shared
from iac_code.sessions.audit import Audited, AuditUnavailable
from iac_code.sessions.store import SessionStore

logger = logging.getLogger(__name__)


class ClientMcp:
    def __init__(self, settings: Settings, principal: Principal, store: Callable[[], Awaitable[SessionStore]]) -> None:
        self._principal = principal
        self._store = store  # the host's, where the audit trail is
        self._rules = ClientServerRules.from_settings(settings)

    async def admitted(self, servers: list[Any], workspace: Path) -> list[Any]:
        """The client's servers as they will be started; InvalidParams naming one that may not be."""
        try:
            return await self._rules.admitted(self._principal, workspace, servers)
        except ServerRefused as exc:
            logger.warning("%s: %r", self._principal.name, str(exc))  # the client chose the names in it
            raise InvalidParams("mcpServers", str(exc)) from None

    async def record_starts(self, session_id: str, servers: Sequence[Any]) -> None:
        """Audit each client stdio server of a shared server's session, before the session starts them."""
        stdio = [spec for spec in servers if isinstance(spec, StdioServer)]
        if not stdio or not is_shared(self._principal) or not isinstance(store := await self._store(), Audited):
            return
        source = "admin" if self._principal.admin else "config:client_mcp_commands"
        trail = store.audit_trail()
        for spec in stdio:
            try:
                argv = [spec.command, *spec.args]
                await record_server_start(trail, self._principal.name, session_id, spec.name, argv, source)
            except AuditUnavailable as exc:
                raise Unavailable(f"the audit trail could not be written: {exc}", {"audit": str(exc)}) from None
            logger.info(
                "%s starts MCP server %r in session %s (%s)", self._principal.name, spec.name, session_id, source
            )
