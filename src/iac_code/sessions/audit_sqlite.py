"""The audit trail in the SQLite database (table iac_audit, database/sqlite_migrations/0003_audit.sql),
written in the session store's thread on its connection: one INSERT, its own transaction, synced as the
store's appends are (synchronous=FULL)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Protocol, TypeVar

from iac_code.safe_json import dumps_bytes, loads
from iac_code.sessions.audit import COLUMNS, AuditRecord, AuditUnavailable, read_query, record_from_row, record_params
from iac_code.sessions.keys import iso_time

T = TypeVar("T")

_INSERT = f"INSERT INTO iac_audit (at, {COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


class InStoreThread(Protocol):
    """Runs `work` on the store's connection, in the store's own thread, where the connection belongs
    (sqlite.SqliteSessionStore.in_store_thread)."""

    def __call__(self, work: Callable[[sqlite3.Connection], T]) -> Future[T]: ...


class SqliteAuditTrail:
    def __init__(self, in_store_thread: InStoreThread) -> None:
        self._in_store_thread = in_store_thread

    async def append(self, record: AuditRecord) -> None:
        try:
            await asyncio.wrap_future(self._in_store_thread(lambda conn: _append(conn, record)))
        except (sqlite3.Error, OSError) as exc:
            raise AuditUnavailable(f"{type(exc).__name__}: {exc}") from exc

    async def read(self, session: str | None = None, since: str | None = None) -> list[AuditRecord]:
        return await asyncio.wrap_future(self._in_store_thread(lambda conn: _read(conn, session, since)))


def _append(conn: sqlite3.Connection, record: AuditRecord) -> None:
    counts = None if record.plan_counts is None else dumps_bytes(record.plan_counts).decode()
    conn.execute(_INSERT, [iso_time(), *record_params(record, counts)])


def _read(conn: sqlite3.Connection, session: str | None, since: str | None) -> list[AuditRecord]:
    rows = conn.execute(*read_query(session, since, "?"))
    return [_record(row) for row in rows]


def _record(row: tuple[Any, ...]) -> AuditRecord:
    at, counts = row[0], row[10]
    return record_from_row(row[1:], plan_counts=None if counts is None else loads(counts), time=at)
