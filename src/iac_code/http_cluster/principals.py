"""Who opened each connection, in `iac_connections.principal`, so that every instance serves a connection
only to its principal, whichever instance a request lands on (see transports/http/backend.py)."""

from __future__ import annotations

from typing import Any

from iac_code.database.json_text import from_json_text, to_json_text
from iac_code.database.pool import Pool
from iac_code.principals import Principal
from iac_code.transports.http.backend import unknown_connection


class ConnectionPrincipals:
    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    async def record(self, connection_id: str, principal: Principal) -> None:
        """Who opened the connection (its row exists: ConnectionOwnership.open made it)."""
        text = to_json_text({"name": principal.name, "admin": principal.admin})
        query = "UPDATE iac_connections SET principal = %s WHERE connection_id = %s"
        async with self.pool.connection() as conn:
            await conn.execute(query, [text, connection_id])

    async def of(self, connection_id: str) -> Principal | None:
        """Who opened it; None when the connection is unknown, or was opened before principals existed."""
        query = "SELECT principal FROM iac_connections WHERE connection_id = %s"
        async with self.pool.connection() as conn:
            cursor = await conn.execute(query, [connection_id])
            row = await cursor.fetchone()
        if row is None or row[0] is None:
            return None
        data: Any = from_json_text(row[0])
        return Principal(str(data["name"]), admin=bool(data["admin"]))

    async def check(self, connection_id: str, principal: Principal) -> None:
        """Refuse, as an unknown connection, anyone but the principal that opened it."""
        opener = await self.of(connection_id)
        if opener is None or opener.name != principal.name:
            raise unknown_connection(connection_id)
