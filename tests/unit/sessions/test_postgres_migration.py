"""Migration 0004 (text as JSON text, for U+0000): rows written by the previous schema keep working."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.types.json import Json, Jsonb
from tests.pg.server import PostgresServer

from iac_code.cluster.events import EventLog
from iac_code.cluster.inbound import InboundQueue
from iac_code.database import migrate as migrations
from iac_code.database.pool import open_pool
from iac_code.messages import user
from iac_code.sessions.postgres import PostgresSessionStore
from iac_code.sessions.store import SessionRecord

# What json.dumps and PostgreSQL's to_json could write differently, if anything: quotes, backslashes,
# control characters, non-ASCII, a character outside the BMP.
AWKWARD = 'a "quoted" \\ back\tslash \x01 é 😀'
CWD = f"/w/{AWKWARD}"
PROMPT = {"jsonrpc": "2.0", "id": "q", "method": "session/prompt", "params": {}}
HOLDS_NUL = {"jsonrpc": "2.0", "id": 9, "method": "session/prompt", "params": {"text": "a\x00b"}}
CANCEL = {"jsonrpc": "2.0", "method": "session/cancel", "params": {}}


def _write_as_version_3(url: str) -> None:
    """What the code of schema version 3 wrote: plain text, jsonb permissions, in-flight keys as text."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO iac_sessions (session_id, cwd, cwd_key, title, created_at, updated_at, model, mode,"
            " permissions, last_seq) VALUES ('old', %s, %s, %s, now(), now(), 'm', 'plan', %s, 1)",
            [CWD, CWD, AWKWARD, Jsonb({"bash": "allow"})],
        )
        conn.execute("""INSERT INTO iac_messages VALUES ('old', 1, '{"role":"user","text":"hi"}\n')""")
        conn.execute("INSERT INTO iac_connections (connection_id, owner, host) VALUES ('c1', 'h', 'h')")
        conn.execute("""INSERT INTO iac_inflight VALUES ('c1', '5', '5'), ('c1', '"5"', '"\\"5\\""')""")
        for message in (PROMPT, HOLDS_NUL, CANCEL):  # queued, not taken yet (the one holding U+0000 never could be)
            conn.execute(
                "INSERT INTO iac_inbound (connection_id, message, received_by) VALUES ('c1', %s, 'h')",
                [Json(message)],
            )


async def test_rows_of_the_previous_schema_read_back_and_queued_requests_stay_tracked(
    postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = postgres_server.create_database("migration")
    try:
        every = migrations.known_migrations()
        monkeypatch.setattr(migrations, "known_migrations", lambda: [m for m in every if m.version <= 3])
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            assert await migrations.migrate(conn) == [1, 2, 3]
        _write_as_version_3(url)
        monkeypatch.undo()
        pool = await open_pool(url, max_size=2)  # applies 0004
        try:
            store = PostgresSessionStore(pool)
            record = await store.get("old")
            assert (record.cwd, record.title, record.model, record.mode) == (CWD, AWKWARD, "m", "plan")
            assert record.permissions == {"bash": "allow"}
            assert [r.session_id for r in (await store.list(CWD + "/"))[0]] == ["old"]  # cwd_key still matches
            assert (await store.load("old"))[1] == [user("hi")]
            await store.create(SessionRecord(session_id="new", cwd=CWD))
            assert [r.session_id for r in (await store.list(CWD))[0]] == ["new", "old"]

            assert await InboundQueue(pool, "h").take("c1") == [PROMPT, HOLDS_NUL, CANCEL]
            for answered in (5, '"5"'):
                await EventLog(pool, "h").append("c1", {"jsonrpc": "2.0", "id": answered, "result": {}})
            async with pool.connection() as conn:
                in_flight = await (
                    await conn.execute("SELECT request_key, request_id::text FROM iac_inflight")
                ).fetchall()
            assert in_flight == [
                ('"q"', '"q"')
            ]  # 5 and '"5"' were answered; the message holding U+0000 could not be read
        finally:
            await pool.close()
    finally:
        postgres_server.drop_database(url)
