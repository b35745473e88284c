"""The audit trail in the SQLite database (table iac_audit, database/sqlite_migrations/0003_audit.sql),
written in the session store's thread on its connection: one INSERT, its own transaction, synced as the
store's appends are (synchronous=FULL)."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import TYPE_CHECKING, Any

from iac_code.safe_json import dumps_bytes, loads
from iac_code.sessions.audit import COLUMNS, AuditRecord, AuditUnavailable, read_query, record_from_row, record_params
from iac_code.sessions.keys import iso_time

if TYPE_CHECKING:
    from iac_code.sessions.sqlite import SqliteSessions, SqliteSessionStore

_INSERT = f"INSERT INTO iac_audit (at, {COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


class SqliteAuditTrail:
    def __init__(self, store: SqliteSessionStore) -> None:
        self._store = store

    async def append(self, record: AuditRecord) -> None:
        try:
            await asyncio.wrap_future(self._store.submit(_append, self._store.inner, record))
        except (sqlite3.Error, OSError) as exc:
            raise AuditUnavailable(f"{type(exc).__name__}: {exc}") from exc

    async def read(self, session: str | None = None, since: str | None = None) -> list[AuditRecord]:
        return await asyncio.wrap_future(self._store.submit(_read, self._store.inner, session, since))


def _append(sessions: SqliteSessions, record: AuditRecord) -> None:
    counts = None if record.plan_counts is None else dumps_bytes(record.plan_counts).decode()
    sessions.conn.execute(_INSERT, [iso_time(), *record_params(record, counts)])


def _read(sessions: SqliteSessions, session: str | None, since: str | None) -> list[AuditRecord]:
    rows = sessions.conn.execute(*read_query(session, since, "?"))
    return [_record(row) for row in rows]


def _record(row: tuple[Any, ...]) -> AuditRecord:
    at, counts = row[0], row[10]
    return record_from_row(row[1:], plan_counts=None if counts is None else loads(counts), time=at)
