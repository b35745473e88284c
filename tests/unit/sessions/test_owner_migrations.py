"""SQLite 0002 and PostgreSQL 0005 (owners): sessions stored before have no owner ("", which only admins
see), and connections opened before have no principal (served to no one)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest
from tests.pg.server import PostgresServer

from iac_code.database import migrate as migrations
from iac_code.database import sqlite as sqlite_database
from iac_code.database.pool import open_pool
from iac_code.http_cluster.principals import ConnectionPrincipals
from iac_code.principals import Principal
from iac_code.sessions.postgres import PostgresSessionStore
from iac_code.sessions.sqlite import open_sqlite_store
from iac_code.sessions.store import SessionRecord

OLD_ROW = (
    "INSERT INTO iac_sessions (session_id, cwd, cwd_key, title, created_at, updated_at, model, mode, permissions)"
    " VALUES ('old', '\"/w\"', '\"/w\"', '\"\"', '2001-01-01T00:00:00.000Z', '2001-01-01T00:00:00.000Z',"
    " '\"\"', '\"default\"', '{}')"
)


async def test_sqlite_sessions_stored_before_owners_have_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "iac-code.db"
    every = sqlite_database.known_migrations("sqlite_migrations")
    monkeypatch.setattr(sqlite_database, "known_migrations", lambda folder: [m for m in every if m.version <= 1])
    sqlite_database.connect(path).execute(OLD_ROW)
    monkeypatch.undo()
    store = open_sqlite_store(path, durable=False)
    try:
        assert (await store.get("old")).owner == ""
        await store.create(SessionRecord("new", "/w", owner="alice"))
        assert [r.session_id for r in (await store.list("/w", owner="alice"))[0]] == ["new"]
        assert [r.session_id for r in (await store.list("/w", owner=""))[0]] == ["old"]
    finally:
        await store.close()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] >= 2


async def test_postgres_sessions_and_connections_from_before_owners(
    postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = postgres_server.create_database("owners")
    try:
        every = migrations.known_migrations()
        monkeypatch.setattr(migrations, "known_migrations", lambda: [m for m in every if m.version <= 4])
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await migrations.migrate(conn)
            await conn.execute(OLD_ROW.replace("'{}')", "'{}', 0)").replace("permissions)", "permissions, last_seq)"))
            await conn.execute("INSERT INTO iac_connections (connection_id, owner, host) VALUES ('c-old', 'h', 'h')")
        monkeypatch.undo()
        pool = await open_pool(url, max_size=2)  # applies 0005
        try:
            store = PostgresSessionStore(pool)
            assert (await store.get("old")).owner == ""
            assert [r.session_id for r in (await store.list(None, owner=""))[0]] == ["old"]
            assert await store.list(None, owner="alice") == ([], None)
            principals = ConnectionPrincipals(pool)
            assert await principals.of("c-old") is None and await principals.of("c-none") is None
            async with pool.connection() as conn:
                await conn.execute(
                    "INSERT INTO iac_connections (connection_id, owner, host) VALUES ('c-new', 'h', 'h')"
                )
            await principals.record("c-new", Principal("al\x00ice", admin=True))  # a JWT's sub may hold anything
            assert await principals.of("c-new") == Principal("al\x00ice", admin=True)
        finally:
            await pool.close()
    finally:
        postgres_server.drop_database(url)
