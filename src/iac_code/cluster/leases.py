"""Session leases: one instance runs a session's turns at a time.

A lease lasts `ttl` seconds from its last renewal; its holder renews all its leases in one statement
on every heartbeat. Once a lease expires (its holder died or lost the database), any instance may
acquire it: the generation grows, so work stamped with an older generation is recognisably stale.
Times are the database's, so instance clocks do not matter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from iac_code.database.pool import Pool


@dataclass(frozen=True)
class Lease:
    session_id: str
    generation: int
    expires_at: datetime
    taken_over_from: str | None  # the previous holder, when this acquisition took an expired lease from it


class SessionLeases:
    def __init__(self, pool: Pool, instance_id: str, ttl: float = 15.0) -> None:
        self.pool = pool
        self.instance_id = instance_id
        self.ttl = ttl

    async def acquire(self, session_id: str) -> Lease | None:
        """Take the lease if it is free, expired or already ours (then it is renewed); None if another
        instance holds it."""
        query = """
            WITH previous AS (SELECT holder, expires_at > now() AS live FROM iac_leases
                              WHERE session_id = %(session)s FOR UPDATE)
            INSERT INTO iac_leases (session_id, holder, expires_at)
            VALUES (%(session)s, %(me)s, now() + make_interval(secs => %(ttl)s))
            ON CONFLICT (session_id) DO UPDATE SET
                holder = excluded.holder,
                expires_at = excluded.expires_at,
                generation = iac_leases.generation + (NOT (SELECT live AND holder = %(me)s FROM previous))::int,
                acquired_at = CASE WHEN (SELECT live AND holder = %(me)s FROM previous)
                                   THEN iac_leases.acquired_at ELSE now() END
            WHERE iac_leases.holder = excluded.holder OR iac_leases.expires_at <= now()
            RETURNING generation, expires_at, (SELECT holder FROM previous)"""
        params = {"session": session_id, "me": self.instance_id, "ttl": self.ttl}
        async with self.pool.connection() as conn:
            row = await (await conn.execute(query, params)).fetchone()
        if row is None:
            return None
        generation, expires_at, previous = row
        return Lease(session_id, generation, expires_at, previous if previous not in (None, self.instance_id) else None)

    async def renew(self, session_ids: Sequence[str]) -> set[str]:
        """Extend our leases on these sessions; returns those still ours (the others were taken over
        after expiring: stop running them)."""
        query = """
            UPDATE iac_leases SET expires_at = now() + make_interval(secs => %s)
            WHERE holder = %s AND session_id = ANY(%s) RETURNING session_id"""
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(query, [self.ttl, self.instance_id, list(session_ids)])).fetchall()
        return {row[0] for row in rows}

    async def release(self, session_id: str) -> None:
        """Give the lease up (the session went idle or was closed) if it is still ours."""
        async with self.pool.connection() as conn:
            await conn.execute(
                "DELETE FROM iac_leases WHERE session_id = %s AND holder = %s", [session_id, self.instance_id]
            )

    async def ask_holder_to_release(self, session_id: str, max_age: float) -> tuple[str | None, bool]:
        """Wake the instance holding a live lease on the session (`release`: give it up if idle);
        returns (holder, whether it sent a heartbeat within `max_age` seconds), (None, False) if free."""
        query = """
            SELECT l.holder, i.instance_id IS NOT NULL,
                   CASE WHEN i.instance_id IS NOT NULL
                        THEN pg_notify('iac_' || l.holder, 'release ' || l.session_id) END
            FROM iac_leases l
            LEFT JOIN iac_instances i ON i.instance_id = l.holder AND i.last_seen > now() - make_interval(secs => %s)
            WHERE l.session_id = %s AND l.expires_at > now() AND l.holder <> %s"""
        async with self.pool.connection() as conn:
            row = await (await conn.execute(query, [max_age, session_id, self.instance_id])).fetchone()
        return (row[0], bool(row[1])) if row else (None, False)

    async def holder(self, session_id: str) -> str | None:
        """The instance holding a live lease on the session, if any."""
        query = "SELECT holder FROM iac_leases WHERE session_id = %s AND expires_at > now()"
        async with self.pool.connection() as conn:
            row = await (await conn.execute(query, [session_id])).fetchone()
        return row[0] if row else None
