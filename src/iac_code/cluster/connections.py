"""Where each HTTP connection lives: its host (the instance running its agent) and its owner (the instance
holding its event stream), and when it was last active.

The two differ as soon as a client's stream lands on another instance than its `initialize` did: the
stream moves (a claim), the agent and its running turns stay where they are. An instance that finds a
connection whose host died adopts it (`adopt_orphans`) and answers the requests the dead host had taken.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from iac_code.cluster.wakeups import notify_owner_sql
from iac_code.database.pool import Pool


class UnknownConnection(KeyError):
    """No such connection in the cluster (never created, closed, or expired)."""


@dataclass(frozen=True)
class Adopted:
    """A connection this instance now hosts, and the ids of the requests its dead host never answered."""

    connection_id: str
    interrupted: list[Any]


@dataclass(frozen=True)
class Standing:
    """What the database says about connections this instance serves in some way."""

    hosted: set[str]
    owned: set[str]


# A CTE waking the host, the owner and the session streams' holders (other than the writer) of the
# connections in a CTE named `gone`.
_TELL_CLOSED = """
    told AS (
        SELECT pg_notify('iac_' || who, 'closed ' || connection_id) FROM (
            SELECT DISTINCT gone.connection_id, who FROM gone, unnest(ARRAY[gone.host, gone.owner]
                || ARRAY(SELECT holder ->> 'holder' FROM jsonb_each(gone.session_streams) AS s(stream, holder))) AS who
            WHERE who IS NOT NULL AND who <> %(me)s) targets)"""


class ConnectionOwnership:
    """`iac_connections` from one instance's point of view."""

    def __init__(self, pool: Pool, instance_id: str) -> None:
        self.pool = pool
        self.instance_id = instance_id

    async def open(self, connection_id: str) -> None:
        """A new connection (`initialize` answered here): this instance hosts and owns it."""
        query = "INSERT INTO iac_connections (connection_id, owner, host) VALUES (%s, %s, %s)"
        async with self.pool.connection() as conn:
            await conn.execute(query, [connection_id, self.instance_id, self.instance_id])

    async def claim(self, connection_id: str) -> str | None:
        """Hold its stream here; returns the previous owner, which is woken with `claimed` so it ends its
        now stale stream. Raises UnknownConnection."""
        query = f"""
            WITH previous AS (SELECT owner FROM iac_connections WHERE connection_id = %(connection)s FOR UPDATE),
            claimed AS (
                UPDATE iac_connections SET owner = %(me)s, last_seen = now()
                WHERE connection_id = %(connection)s RETURNING connection_id)
            SELECT owner, {notify_owner_sql("claimed")} FROM previous, claimed"""
        async with self.pool.connection() as conn:
            row = await (await conn.execute(query, {"connection": connection_id, "me": self.instance_id})).fetchone()
        if row is None:
            raise UnknownConnection(connection_id)
        return _owner(row[0])

    async def owner(self, connection_id: str) -> str | None:
        """The owner (None while no instance holds its stream). Raises UnknownConnection."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute("SELECT owner FROM iac_connections WHERE connection_id = %s", [connection_id])
            row = await cursor.fetchone()
        if row is None:
            raise UnknownConnection(connection_id)
        return _owner(row[0])

    async def exists(self, connection_id: str) -> bool:
        async with self.pool.connection() as conn:
            cursor = await conn.execute("SELECT 1 FROM iac_connections WHERE connection_id = %s", [connection_id])
            return await cursor.fetchone() is not None

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

    async def forget(self, connection_id: str) -> bool:
        """The connection is closed: remove it with its events and inbound messages, and wake its host,
        owner and session streams' holders (`closed`). False if it was already gone."""
        query = f"""
            WITH gone AS (DELETE FROM iac_connections WHERE connection_id = %(connection)s
                          RETURNING connection_id, host, owner, session_streams),
            {_TELL_CLOSED}
            SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM told)"""
        async with self.pool.connection() as conn:
            row = await (await conn.execute(query, {"connection": connection_id, "me": self.instance_id})).fetchone()
        return bool(row and row[0])

    async def expire_idle(self, max_idle: float) -> list[str]:
        """Forget connections inactive for `max_idle` seconds (run by any instance), waking their hosts,
        owners and session streams' holders; returns their ids."""
        query = f"""
            WITH gone AS (DELETE FROM iac_connections WHERE last_seen <= now() - make_interval(secs => %(idle)s)
                          RETURNING connection_id, host, owner, session_streams),
            {_TELL_CLOSED}
            SELECT connection_id, (SELECT count(*) FROM told) FROM gone"""
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(query, {"idle": max_idle, "me": self.instance_id})).fetchall()
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

    async def adopt_orphans(self, max_age: float) -> list[Adopted]:
        """Host the connections whose host is dead (no heartbeat for `max_age` seconds) and that someone
        still uses: their stream is held here, or messages wait for them. Racing instances adopt each
        connection once: adopters take turns (a transaction lock), so each statement's snapshot already has
        the previous adopter's hosts. Row locks alone did not do it: a row adopted between another
        adopter's snapshot and its scan was adopted twice. Each comes with the requests its dead host had
        taken but not answered."""
        query = """
            WITH orphans AS (
                SELECT c.connection_id FROM iac_connections c
                WHERE NOT EXISTS (SELECT 1 FROM iac_instances i WHERE i.instance_id = c.host
                                  AND i.last_seen > now() - make_interval(secs => %(age)s))
                  AND (c.owner = %(me)s OR EXISTS (SELECT 1 FROM iac_inbound q WHERE q.connection_id = c.connection_id))
                FOR UPDATE OF c SKIP LOCKED),
            adopted AS (
                UPDATE iac_connections c SET host = %(me)s FROM orphans o
                WHERE c.connection_id = o.connection_id RETURNING c.connection_id),
            interrupted AS (
                DELETE FROM iac_inflight f USING adopted a WHERE f.connection_id = a.connection_id
                RETURNING f.connection_id, f.request_id)
            SELECT a.connection_id,
                   (SELECT coalesce(json_agg(i.request_id), '[]') FROM interrupted i
                    WHERE i.connection_id = a.connection_id)::text
            FROM adopted a ORDER BY a.connection_id"""
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext('iac_adopt_orphans'))")
            rows = await (await conn.execute(query, {"age": max_age, "me": self.instance_id})).fetchall()
        return [Adopted(connection_id, json.loads(ids)) for connection_id, ids in rows]

    async def standing(self, connection_ids: Sequence[str]) -> Standing:
        """Which of these connections the database says this instance hosts and owns: the others were
        closed, expired, or taken over while it was cut off."""
        query = """
            SELECT connection_id, host IS NOT DISTINCT FROM %(me)s, owner IS NOT DISTINCT FROM %(me)s
            FROM iac_connections WHERE connection_id = ANY(%(ids)s)"""
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(query, {"ids": list(connection_ids), "me": self.instance_id})).fetchall()
        return Standing({row[0] for row in rows if row[1]}, {row[0] for row in rows if row[2]})


def _owner(value: object) -> str | None:
    """The `owner` column (text, NULL while no instance holds the stream), checked: psycopg's rows are untyped."""
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"iac_connections.owner holds {type(value).__name__}, not text")
