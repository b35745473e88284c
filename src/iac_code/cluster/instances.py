"""Which instances are alive: each one upserts its row on every heartbeat; silence past max_age is death."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from iac_code.database.pool import Pool

# Instance ids name LISTEN channels (iac_<id>): lower-case identifier characters keep them valid and unquoted.
_INSTANCE_ID = re.compile(r"[a-z0-9_]{1,48}")


def new_instance_id() -> str:
    return uuid.uuid4().hex


def check_instance_id(instance_id: str) -> str:
    if not _INSTANCE_ID.fullmatch(instance_id):
        raise ValueError(f"invalid instance id {instance_id[:60]!r}: use [a-z0-9_]{{1,48}}")
    return instance_id


@dataclass(frozen=True)
class Instance:
    instance_id: str
    started_at: datetime
    last_seen: datetime
    info: dict[str, Any]


class InstanceRegistry:
    """This instance's row in `iac_instances`, and what the others' rows say."""

    def __init__(self, pool: Pool, instance_id: str | None = None, info: dict[str, Any] | None = None) -> None:
        self.pool = pool
        self.instance_id = check_instance_id(new_instance_id() if instance_id is None else instance_id)
        self.info = dict(info or {})

    async def heartbeat(self) -> None:
        """Say "alive" now; the first beat registers (so does a beat after being reaped)."""
        query = """
            INSERT INTO iac_instances (instance_id, info) VALUES (%s, %s)
            ON CONFLICT (instance_id) DO UPDATE SET last_seen = now(), info = excluded.info"""
        async with self.pool.connection() as conn:
            await conn.execute(query, [self.instance_id, Jsonb(self.info)])

    async def deregister(self) -> None:
        """A clean shutdown: gone at once rather than after max_age."""
        async with self.pool.connection() as conn:
            await conn.execute("DELETE FROM iac_instances WHERE instance_id = %s", [self.instance_id])

    async def live(self, max_age: float) -> list[Instance]:
        """Instances heard from within `max_age` seconds, oldest first."""
        query = """
            SELECT instance_id, started_at, last_seen, info FROM iac_instances
            WHERE last_seen > now() - make_interval(secs => %s) ORDER BY started_at, instance_id"""
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(query, [max_age])).fetchall()
        return [Instance(*row) for row in rows]

    async def is_live(self, instance_id: str, max_age: float) -> bool:
        query = "SELECT 1 FROM iac_instances WHERE instance_id = %s AND last_seen > now() - make_interval(secs => %s)"
        async with self.pool.connection() as conn:
            return await (await conn.execute(query, [instance_id, max_age])).fetchone() is not None

    async def reap(self, max_age: float) -> list[str]:
        """Remove the rows of instances silent for `max_age` seconds; returns their ids."""
        query = "DELETE FROM iac_instances WHERE last_seen <= now() - make_interval(secs => %s) RETURNING instance_id"
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(query, [max_age])).fetchall()
        return sorted(row[0] for row in rows)
