"""What only the PostgreSQL store has: migrations under concurrent start-up, a shared pool, the repair's
race with an append, how it fails when the database is away, and the factory that picks it."""

from __future__ import annotations

import asyncio
import json
import socket

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool, PoolTimeout
from tests.pg.server import PostgresServer

from iac_code.config import load_settings
from iac_code.database.migrate import migrate
from iac_code.database.migration_files import known_migrations
from iac_code.database.pool import open_pool
from iac_code.messages import Message, ToolCall, user
from iac_code.sessions.open import open_store
from iac_code.sessions.postgres import PostgresSessionStore
from iac_code.sessions.store import SessionRecord


async def test_instances_starting_together_apply_each_migration_once(postgres_server: PostgresServer) -> None:
    url = postgres_server.create_database("migrations")
    try:
        stores = await asyncio.gather(*(PostgresSessionStore.open(url, max_size=2) for _ in range(4)))
        for store in stores:
            await store.close()
        with psycopg.connect(url) as conn:
            rows = conn.execute("SELECT version, name FROM iac_schema_migrations ORDER BY version").fetchall()
        assert rows == [(m.version, m.name) for m in known_migrations()]
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            assert await migrate(conn) == []  # up to date: nothing to do
    finally:
        postgres_server.drop_database(url)


def test_migrations_are_numbered_without_gaps() -> None:
    versions = [m.version for m in known_migrations()]
    assert versions and versions == list(range(1, len(versions) + 1))


async def test_a_store_on_a_shared_pool_leaves_the_pool_open(pg_url: str) -> None:
    pool: AsyncConnectionPool = await open_pool(pg_url, max_size=2)
    try:
        store = PostgresSessionStore(pool)
        await store.create(SessionRecord(session_id="s1", cwd="/w"))
        await store.close()
        assert (await PostgresSessionStore(pool).get("s1")).cwd == "/w"
    finally:
        await pool.close()


async def test_messages_are_stored_as_the_file_store_lines(pg_url: str) -> None:
    store = await PostgresSessionStore.open(pg_url, max_size=2)
    try:
        await store.create(SessionRecord(session_id="s1", cwd="/w"))
        await store.append("s1", Message(role="assistant", text="é", tool_calls=[ToolCall("c1", "bash", {"x": 1})]))
    finally:
        await store.close()
    with psycopg.connect(pg_url) as conn:
        (body,) = conn.execute("SELECT body::text FROM iac_messages").fetchone()
    assert body == '{"role":"assistant","text":"é","tool_calls":[{"id":"c1","name":"bash","arguments":{"x":1}}]}\n'
    assert json.loads(body)["tool_calls"][0]["id"] == "c1"


async def test_a_repair_racing_an_append_reads_again_and_loses_nothing(pg_url: str, monkeypatch) -> None:
    store = await PostgresSessionStore.open(pg_url, max_size=3)
    other = await PostgresSessionStore.open(pg_url, max_size=1)
    try:
        await store.create(SessionRecord(session_id="s1", cwd="/w"))
        calling = Message(role="assistant", tool_calls=[ToolCall("c1", "bash", {})])
        for message in (user("go"), calling, user("still there?")):
            await store.append("s1", message)
        real_read, reads = store._read, []

        async def read_then_someone_appends(conn, session_id):
            result = await real_read(conn, session_id)
            reads.append(result)
            if len(reads) == 1:
                await other.append("s1", user("late"))
            return result

        monkeypatch.setattr(store, "_read", read_then_someone_appends)
        _, history = await store.load("s1")
        assert len(reads) == 2
        assert [(m.role, m.text) for m in history][-2:] == [("user", "still there?"), ("user", "late")]
        assert history == (await other.load("s1"))[1]
    finally:
        await store.close()
        await other.close()


async def test_an_unreachable_database_fails_within_the_timeout() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there once closed
    with pytest.raises(PoolTimeout):
        await PostgresSessionStore.open(f"postgresql://postgres@127.0.0.1:{port}/none", timeout=1)


async def test_open_store_picks_postgres_when_a_database_is_configured(pg_url: str, tmp_path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"database_url": "postgresql://from-the-file/db"}))
    settings = load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path), "IAC_CODE_DATABASE_URL": pg_url})
    assert settings.database_url == pg_url, "the environment overrides the file"
    assert pg_url not in repr(settings), "a URL may hold a password"
    store = await open_store(settings)
    try:
        assert isinstance(store, PostgresSessionStore)
        assert await store.list(None) == ([], None)
    finally:
        await store.close()
