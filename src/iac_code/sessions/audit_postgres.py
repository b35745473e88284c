"""The audit trail in PostgreSQL (table iac_audit, database/migrations/0006_audit.sql): every instance of a
cluster appends to the one table, times from the database clock."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg import Error as DatabaseError
from psycopg.types.json import Json
from psycopg_pool import PoolTimeout

from iac_code.database.pool import Pool
from iac_code.sessions.audit import COLUMNS, AuditRecord, AuditUnavailable, read_query, record_from_row, record_params
from iac_code.sessions.keys import iso_time

_INSERT = f"INSERT INTO iac_audit ({COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"


class PostgresAuditTrail:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def append(self, record: AuditRecord) -> None:
        params = record_params(record, None if record.plan_counts is None else Json(record.plan_counts))
        try:
            async with self._pool.connection() as conn:
                await conn.execute(_INSERT, params)
        except (DatabaseError, PoolTimeout) as exc:
            raise AuditUnavailable(f"{type(exc).__name__}: {exc}") from exc

    async def read(self, session: str | None = None, since: str | None = None) -> list[AuditRecord]:
        query, params = read_query(session, since, "%s", "::timestamptz")
        async with self._pool.connection() as conn:
            cursor = await conn.execute(query, params)
            return [_record(row) for row in await cursor.fetchall()]


def _record(row: tuple[Any, ...]) -> AuditRecord:
    moment: datetime = row[0]
    return record_from_row(row[1:], plan_counts=row[10], time=iso_time(moment.timestamp()))
