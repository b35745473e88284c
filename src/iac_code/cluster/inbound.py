"""POSTed messages for a connection, whichever instance received them: queued in the database, and the
connection's host (the instance running its agent) woken to take them (in order, each exactly once).

Taking a request (a message with a method and an id) records it as in flight until the host's answer
is logged (events.py), so an instance adopting the connection after its host died can answer it.
A message POSTed to the host itself skips the queue (`take_before`): one statement takes what others
queued before it and records it in flight. Whether a message is a request, and its id, is found here
when it is queued: SQL never reads a message, which may hold U+0000 (database/json_text.py)."""

from __future__ import annotations

from typing import Any

import psycopg

from iac_code.cluster.connections import UnknownConnection
from iac_code.cluster.events import request_key
from iac_code.cluster.wakeups import notify_owner_sql
from iac_code.database.json_text import from_json_text, to_json_text
from iac_code.database.pool import Pool


def _in_flight(message: dict[str, Any]) -> tuple[str | None, str | None]:
    """A request's in-flight key and id (as JSON text): one with a method and a number or string id.
    (None, None) for anything else (a notification, a response)."""
    message_id = message.get("id")
    if message.get("method") is None or isinstance(message_id, bool) or not isinstance(message_id, int | float | str):
        return None, None
    return request_key(message_id), to_json_text(message_id)


class InboundQueue:
    def __init__(self, pool: Pool, instance_id: str) -> None:
        self.pool = pool
        self.instance_id = instance_id

    async def push(self, connection_id: str, message: dict[str, Any]) -> int:
        """Queue a message for the connection's host and wake it (the connection counts as active);
        returns the queue id."""
        query = f"""
            WITH queued AS (
                INSERT INTO iac_inbound (connection_id, message, received_by, request_key, request_id)
                VALUES (%(connection)s, %(message)s, %(me)s, %(key)s, %(id)s) RETURNING id),
            touched AS (
                UPDATE iac_connections SET last_seen = now() WHERE connection_id = %(connection)s RETURNING host)
            SELECT queued.id, {notify_owner_sql("inbound", "touched.host")} FROM queued, touched"""
        key, request_id = _in_flight(message)
        params = {
            "connection": connection_id,
            "message": to_json_text(message),
            "me": self.instance_id,
            "key": key,
            "id": request_id,
        }
        try:
            async with self.pool.connection() as conn:
                row = await (await conn.execute(query, params)).fetchone()
        except psycopg.errors.ForeignKeyViolation:
            raise UnknownConnection(connection_id) from None
        assert row is not None  # the foreign key guarantees the connection row
        return int(row[0])

    async def take(self, connection_id: str, limit: int = 100) -> list[dict[str, Any]]:
        """Remove and return the oldest queued messages (oldest first); concurrent takers never share one.
        The requests among them are in flight from now until answered."""
        query = """
            WITH taken AS (
                DELETE FROM iac_inbound WHERE id IN (
                    SELECT id FROM iac_inbound WHERE connection_id = %(connection)s
                    ORDER BY id LIMIT %(limit)s FOR UPDATE SKIP LOCKED)
                RETURNING id, message, request_key, request_id),
            tracked AS (
                INSERT INTO iac_inflight (connection_id, request_key, request_id)
                SELECT %(connection)s, request_key, request_id FROM taken WHERE request_key IS NOT NULL
                ON CONFLICT DO NOTHING)
            SELECT id, message::text FROM taken"""
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(query, {"connection": connection_id, "limit": limit})).fetchall()
        return [from_json_text(text) for _, text in sorted(rows)]

    async def take_before(self, connection_id: str, message: dict[str, Any]) -> list[dict[str, Any]]:
        """On the host, for a message POSTed to it: the messages queued before it (to handle first, in
        order), all taken, with the requests among them and itself recorded in flight. The connection
        counts as active. Raises UnknownConnection."""
        query = """
            WITH taken AS (
                DELETE FROM iac_inbound WHERE id IN (
                    SELECT id FROM iac_inbound WHERE connection_id = %(connection)s ORDER BY id FOR UPDATE SKIP LOCKED)
                RETURNING id, message, request_key, request_id),
            tracked AS (
                INSERT INTO iac_inflight (connection_id, request_key, request_id)
                SELECT %(connection)s, request_key, request_id
                FROM (SELECT request_key, request_id FROM taken UNION ALL SELECT %(key)s, %(id)s::json) everything
                WHERE request_key IS NOT NULL
                ON CONFLICT DO NOTHING),
            touched AS (UPDATE iac_connections SET last_seen = now() WHERE connection_id = %(connection)s RETURNING 1)
            SELECT (SELECT count(*) FROM touched), taken.id, taken.message::text
            FROM (SELECT 1) one LEFT JOIN taken ON true ORDER BY taken.id"""
        key, request_id = _in_flight(message)
        params = {"connection": connection_id, "key": key, "id": request_id}
        try:
            async with self.pool.connection() as conn:
                rows = await (await conn.execute(query, params)).fetchall()
        except psycopg.errors.ForeignKeyViolation:
            raise UnknownConnection(connection_id) from None
        if not rows[0][0]:
            raise UnknownConnection(connection_id)
        return [from_json_text(text) for _, queue_id, text in rows if queue_id is not None]
