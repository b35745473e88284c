"""Which instance holds each HTTP connection's event stream (its owner), and when it was last active."""

from __future__ import annotations

from collections.abc import Sequence

from iac_code.cluster.wakeups import notify_owner_sql
from iac_code.database.pool import Pool


class UnknownConnection(KeyError):
    """No such connection in the cluster (never created, closed, or expired)."""


class ConnectionOwnership:
    """`iac_connections` from one instance's point of view."""

    def __init__(self, pool: Pool, instance_id: str) -> None:
        self.pool = pool
        self.instance_id = instance_id

    async def claim(self, connection_id: str) -> str | None:
        """Become the owner (creating the connection if new); returns the previous owner, which is
        woken with `claimed` so it ends its now stale stream."""
        query = f"""
            WITH previous AS (SELECT owner FROM iac_connections WHERE connection_id = %(connection)s FOR UPDATE),
            claimed AS (
                INSERT INTO iac_connections (connection_id, owner) VALUES (%(connection)s, %(me)s)
                ON CONFLICT (connection_id) DO UPDATE SET owner = excluded.owner, last_seen = now())
            SELECT owner, {notify_owner_sql("claimed")} FROM previous"""
        async with self.pool.connection() as conn:
            row = await (await conn.execute(query, {"connection": connection_id, "me": self.instance_id})).fetchone()
        return row[0] if row else None

    async def owner(self, connection_id: str) -> str | None:
        """The owner (None while no instance holds its stream). Raises UnknownConnection."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute("SELECT owner FROM iac_connections WHERE connection_id = %s", [connection_id])
            row = await cursor.fetchone()
        if row is None:
            raise UnknownConnection(connection_id)
        return row[0]  # type: ignore[no-any-return]

    async def touch(self, connection_ids: Sequence[str]) -> None:
        """Mark connections active (one statement for all of an instance's connections)."""
        async with self.pool.connection() as conn:
            await conn.execute(
                "UPDATE iac_connections SET last_seen = now() WHERE connection_id = ANY(%s)", [list(connection_ids)]
            )

    async def release(self, connection_id: str) -> None:
        """Stop owning it (the stream ended) unless another instance already claimed it."""
        query = "UPDATE iac_connections SET owner = NULL WHERE connection_id = %s AND owner = %s"
        async with self.pool.connection() as conn:
            await conn.execute(query, [connection_id, self.instance_id])

    async def forget(self, connection_id: str) -> None:
        """The connection is closed: remove it with its events and inbound messages."""
        async with self.pool.connection() as conn:
            await conn.execute("DELETE FROM iac_connections WHERE connection_id = %s", [connection_id])

    async def expire_idle(self, max_idle: float) -> list[str]:
        """Forget connections inactive for `max_idle` seconds (run by any instance); returns their ids."""
        query = """
            DELETE FROM iac_connections WHERE last_seen <= now() - make_interval(secs => %s) RETURNING connection_id"""
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(query, [max_idle])).fetchall()
        return sorted(row[0] for row in rows)

    async def orphans(self, max_age: float) -> list[str]:
        """Connections whose owner has not sent a heartbeat for `max_age` seconds (or has none)."""
        query = """
            SELECT c.connection_id FROM iac_connections c
            LEFT JOIN iac_instances i ON i.instance_id = c.owner AND i.last_seen > now() - make_interval(secs => %s)
            WHERE i.instance_id IS NULL ORDER BY c.connection_id"""
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(query, [max_age])).fetchall()
        return [row[0] for row in rows]
