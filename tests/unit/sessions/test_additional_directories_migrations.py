"""SQLite 0004 and PostgreSQL 0008 (ACP's additionalDirectories): sessions stored before have none, and the
column then keeps a session's list."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest
from tests.pg.server import PostgresServer

from iac_code.database import migrate as migrations
from iac_code.database import sqlite as sqlite_database
from iac_code.database.pool import open_pool
from iac_code.sessions.postgres import PostgresSessionStore
from iac_code.sessions.sqlite import open_sqlite_store
from iac_code.sessions.store import RecordChanges, SessionRecord

OLD_ROW = (
    "INSERT INTO iac_sessions (session_id, cwd, cwd_key, title, created_at, updated_at, model, mode, permissions,"
    " owner) VALUES ('old', '\"/w\"', '\"/w\"', '\"\"', '2001-01-01T00:00:00.000Z', '2001-01-01T00:00:00.000Z',"
    " '\"\"', '\"default\"', '{}', '\"alice\"')"
)


async def test_sqlite_sessions_stored_before_have_no_additional_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "iac-code.db"
    every = sqlite_database.known_migrations("sqlite_migrations")
    monkeypatch.setattr(sqlite_database, "known_migrations", lambda folder: [m for m in every if m.version <= 3])
    sqlite_database.connect(path).execute(OLD_ROW)
    monkeypatch.undo()
    store = open_sqlite_store(path, durable=False)
    try:
        old = await store.get("old")
        assert (old.owner, old.additional_directories) == ("alice", [])
        assert (await store.update("old", RecordChanges(additional_directories=["/m"]))).additional_directories == [
            "/m"
        ]
        await store.create(SessionRecord("new", "/w", additional_directories=["/x", "/y"]))
        assert (await store.get("new")).additional_directories == ["/x", "/y"]
    finally:
        await store.close()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] >= 4


async def test_postgres_sessions_stored_before_have_no_additional_directories(
    postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = postgres_server.create_database("directories")
    try:
        every = migrations.known_migrations()
        monkeypatch.setattr(migrations, "known_migrations", lambda: [m for m in every if m.version <= 7])
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await migrations.migrate(conn)
            await conn.execute(OLD_ROW.replace("owner)", "owner, last_seq)").replace("'\"alice\"')", "'\"alice\"', 0)"))
        monkeypatch.undo()
        pool = await open_pool(url, max_size=2)  # applies 0008
        try:
            store = PostgresSessionStore(pool)
            old = await store.get("old")
            assert (old.owner, old.additional_directories) == ("alice", [])
            changed = await store.update("old", RecordChanges(additional_directories=["/m"]))
            assert changed.additional_directories == ["/m"]
            await store.create(SessionRecord("new", "/w", additional_directories=["/x", "/y"]))
            assert (await store.get("new")).additional_directories == ["/x", "/y"]
        finally:
            await pool.close()
    finally:
        postgres_server.drop_database(url)
