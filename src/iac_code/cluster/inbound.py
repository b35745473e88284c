"""POSTed messages for a connection whose stream another instance owns: queued in the database, and
the owner woken to take them (in order, each exactly once)."""

from __future__ import annotations

import json
from typing import Any

import psycopg

from iac_code.cluster.connections import UnknownConnection
from iac_code.cluster.wakeups import notify_owner_sql
from iac_code.database.pool import Pool


class InboundQueue:
    def __init__(self, pool: Pool, instance_id: str) -> None:
        self.pool = pool
        self.instance_id = instance_id

    async def push(self, connection_id: str, message: dict[str, Any]) -> int:
        """Queue a message for the connection's owner and wake it; returns the queue id."""
        query = f"""
            WITH queued AS (
                INSERT INTO iac_inbound (connection_id, message, received_by)
                VALUES (%(connection)s, %(message)s, %(me)s) RETURNING id)
            SELECT queued.id, {notify_owner_sql("inbound", "c.owner")}
            FROM queued, iac_connections c WHERE c.connection_id = %(connection)s"""
        params = {
            "connection": connection_id,
            "message": json.dumps(message, ensure_ascii=False, separators=(",", ":")),
            "me": self.instance_id,
        }
        try:
            async with self.pool.connection() as conn:
                row = await (await conn.execute(query, params)).fetchone()
        except psycopg.errors.ForeignKeyViolation:
            raise UnknownConnection(connection_id) from None
        assert row is not None  # the foreign key guarantees the connection row
        return int(row[0])

    async def take(self, connection_id: str, limit: int = 100) -> list[dict[str, Any]]:
        """Remove and return the oldest queued messages (oldest first); concurrent takers never share one."""
        query = """
            DELETE FROM iac_inbound WHERE id IN (
                SELECT id FROM iac_inbound WHERE connection_id = %s ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED)
            RETURNING id, message::text"""
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(query, [connection_id, limit])).fetchall()
        return [json.loads(text) for _, text in sorted(rows)]
