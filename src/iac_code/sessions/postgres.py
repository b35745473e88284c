"""The SessionStore on PostgreSQL, for several server instances sharing sessions (IAC_CODE_DATABASE_URL).

    iac_sessions   one row per session: the SessionRecord, a normalised cwd for list(), the last message seq
    iac_messages   one row per message: (session_id, seq) and the same JSON line files.py writes

Every text goes in as JSON text (iac_code.database.json_text), so anything the file store holds, U+0000
included, comes back unchanged: the record's strings as JSON string literals (converted in `_column` and
`_record` alone), permissions and messages as JSON documents in `json` columns.

Same semantics as the file store, including the ids it accepts, the cursor format and the repair on
load; the schema comes from iac_code.database (migrations). Every method is one round trip or one short
transaction, so a crash (of this process or of the database) never leaves half a write.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

from psycopg import sql
from psycopg.rows import TupleRow

from iac_code.database.json_text import from_json_text, to_json_text
from iac_code.database.pool import Connection, Pool, open_pool
from iac_code.messages import Message
from iac_code.sessions.audit import AuditTrail
from iac_code.sessions.disk import encode_line
from iac_code.sessions.keys import InvalidSessionId, check_id, decode_cursor, encode_cursor, iso_time
from iac_code.sessions.repair import parse_log, with_interrupted_results
from iac_code.sessions.sql_text import COLUMNS, INSERT_COLUMNS, cwd_key, list_query
from iac_code.sessions.store import RecordChanges, SessionNotFound, SessionRecord

logger = logging.getLogger(__name__)

_COLUMNS = sql.SQL(COLUMNS)
_BUMP = sql.SQL("updated_at = greatest(updated_at, now())")  # never backwards, whatever the clocks did


def _iso(moment: datetime) -> str:
    return iso_time(moment.timestamp())  # exact: the column holds whole milliseconds


def _moment(iso: str) -> datetime | None:
    return datetime.fromisoformat(iso) if iso else None


def _record(row: TupleRow) -> SessionRecord:
    session_id, cwd, title, created_at, updated_at, model, mode, permissions, owner, directories, options = row
    cwd, title, model, mode, owner = (cast(str, from_json_text(text)) for text in (cwd, title, model, mode, owner))
    created, updated = _iso(created_at), _iso(updated_at)
    directories = [str(d) for d in directories]
    return SessionRecord(
        session_id, cwd, title, created, updated, model, mode, dict(permissions), owner, directories, dict(options)
    )


def _line(message: Message) -> str:
    return encode_line(message.to_dict()).decode()


class PostgresSessionStore:
    """A SessionStore in PostgreSQL. Build it with `await PostgresSessionStore.open(url)`, or on a pool
    shared with other users (then `close()` leaves the pool to its owner).

    As with the file store, a session has one writer at a time (the cluster's session lease); other
    sessions, listing and metadata may be written from any number of instances at once.
    """

    def __init__(self, pool: Pool) -> None:
        self._pool = pool
        self._owned_pool: Pool | None = None

    @classmethod
    async def open(cls, url: str, *, max_size: int = 10, timeout: float = 10.0) -> PostgresSessionStore:
        """Connect, bring the schema up to date and return a store that owns its pool.
        Raises psycopg_pool.PoolTimeout when the database is unreachable for `timeout` seconds."""
        store = cls(await open_pool(url, max_size=max_size, timeout=timeout))
        store._owned_pool = store._pool
        return store

    async def close(self) -> None:
        if self._owned_pool is not None:
            await self._owned_pool.close()

    def audit_trail(self) -> AuditTrail:
        """The audit trail in this database, on this store's pool (sessions/audit.py)."""
        from iac_code.sessions.audit_postgres import PostgresAuditTrail

        return PostgresAuditTrail(self._pool)

    # ---- SessionStore ----

    async def create(self, record: SessionRecord) -> None:
        check_id(record.session_id)
        query = f"""
            INSERT INTO iac_sessions ({INSERT_COLUMNS})
            VALUES (%s, %s, %s, %s, coalesce(%s, now()), coalesce(%s, now()), %s, %s, %s, %s, %s, %s)
            ON CONFLICT (session_id) DO NOTHING"""
        params = [
            record.session_id,
            to_json_text(record.cwd),
            cwd_key(record.cwd),
            to_json_text(record.title),
            _moment(record.created_at),
            _moment(record.updated_at),
            to_json_text(record.model),
            to_json_text(record.mode),
            to_json_text(dict(record.permissions)),
            to_json_text(record.owner),
            to_json_text(list(record.additional_directories)),
            to_json_text(dict(record.options)),
        ]
        async with self._pool.connection() as conn:
            cursor = await conn.execute(query, params)
        if cursor.rowcount == 0:
            raise ValueError(f"session {record.session_id} already exists")

    async def append(self, session_id: str, message: Message) -> None:
        async with self._pool.connection() as conn:
            await self._append(conn, session_id, message)

    async def update(self, session_id: str, changes: RecordChanges) -> SessionRecord:
        check_id(session_id)
        values = {name: to_json_text(value) for name, value in changes.given().items()}
        assignments = [sql.SQL("{} = %s").format(sql.Identifier(name)) for name in values]
        query = sql.SQL("UPDATE iac_sessions SET {} WHERE session_id = %s RETURNING {}").format(
            sql.SQL(", ").join([*assignments, _BUMP]), _COLUMNS
        )
        async with self._pool.connection() as conn:
            row = await (await conn.execute(query, [*values.values(), session_id])).fetchone()
        if row is None:
            raise SessionNotFound(session_id)
        return _record(row)

    async def load(self, session_id: str) -> tuple[SessionRecord, list[Message]]:
        check_id(session_id)
        async with self._pool.connection() as conn:
            while True:
                record, last_seq, data = await self._read(conn, session_id)
                messages, _, bad_middle = parse_log(data)
                repaired, repaired_in_middle = with_interrupted_results(messages)
                if not (bad_middle or repaired_in_middle):
                    for message in repaired[len(messages) :]:
                        await self._append(conn, session_id, message)
                    return record, repaired
                logger.warning("session %s: rewriting its log to repair it", session_id)
                if await self._rewrite(conn, session_id, repaired, last_seq):
                    return record, repaired
                # A message arrived between the read and the rewrite: read again rather than lose it.

    async def get(self, session_id: str) -> SessionRecord:
        check_id(session_id)
        query = sql.SQL("SELECT {} FROM iac_sessions WHERE session_id = %s").format(_COLUMNS)
        async with self._pool.connection() as conn:
            row = await (await conn.execute(query, [session_id])).fetchone()
        if row is None:
            raise SessionNotFound(session_id)
        return _record(row)

    async def list(
        self, cwd: str | None, cursor: str | None = None, limit: int = 50, owner: str | None = None
    ) -> tuple[list[SessionRecord], str | None]:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        params: list[Any] = []
        if cwd is not None:
            params.append(cwd_key(cwd))
        if owner is not None:
            params.append(to_json_text(owner))
        if cursor:
            updated_at, session_id = decode_cursor(cursor)
            params += [_moment(updated_at), session_id]
        query = list_query("%s", by_cwd=cwd is not None, after_cursor=bool(cursor), by_owner=owner is not None)
        async with self._pool.connection() as conn:
            rows = await (await conn.execute(query, [*params, limit + 1])).fetchall()
        records = [_record(row) for row in rows[:limit]]
        next_cursor = encode_cursor(records[-1].updated_at, records[-1].session_id) if len(rows) > limit else None
        return records, next_cursor

    async def fork(self, session_id: str, new_session_id: str, owner: str | None = None) -> SessionRecord:
        check_id(session_id)
        check_id(new_session_id)
        copy_session = sql.SQL("""
            INSERT INTO iac_sessions
                (session_id, cwd, cwd_key, title, created_at, updated_at, model, mode, permissions, owner,
                 additional_directories, options, last_seq)
            SELECT %s, cwd, cwd_key, title, now(), now(), model, mode, permissions, coalesce(%s, owner),
                additional_directories, options, last_seq
            FROM iac_sessions WHERE session_id = %s
            ON CONFLICT (session_id) DO NOTHING
            RETURNING {}""").format(_COLUMNS)
        copy_messages = """
            INSERT INTO iac_messages (session_id, seq, body)
            SELECT %s, seq, body FROM iac_messages WHERE session_id = %s"""
        async with self._pool.connection() as conn, conn.transaction():
            # The share lock holds back appends to the source, so its log and last_seq are copied together.
            source = "SELECT 1 FROM iac_sessions WHERE session_id = %s FOR SHARE"
            if await (await conn.execute(source, [session_id])).fetchone() is None:
                raise SessionNotFound(session_id)
            given_owner = None if owner is None else to_json_text(owner)
            row = await (await conn.execute(copy_session, [new_session_id, given_owner, session_id])).fetchone()
            if row is None:
                raise ValueError(f"session {new_session_id} already exists")
            await conn.execute(copy_messages, [new_session_id, session_id])
        return _record(row)

    async def clear(self, session_id: str) -> None:
        check_id(session_id)
        bump = sql.SQL("UPDATE iac_sessions SET {} WHERE session_id = %s").format(_BUMP)
        async with self._pool.connection() as conn, conn.transaction():
            if (await conn.execute(bump, [session_id])).rowcount == 0:
                raise SessionNotFound(session_id)
            await conn.execute("DELETE FROM iac_messages WHERE session_id = %s", [session_id])

    async def delete(self, session_id: str) -> None:
        try:
            check_id(session_id)
        except InvalidSessionId:
            return
        async with self._pool.connection() as conn:
            await conn.execute("DELETE FROM iac_sessions WHERE session_id = %s", [session_id])  # messages cascade

    # ---- helpers ----

    async def _append(self, conn: Connection, session_id: str, message: Message) -> None:
        check_id(session_id)
        query = sql.SQL("""
            WITH bumped AS (
                UPDATE iac_sessions SET last_seq = last_seq + 1, {}
                WHERE session_id = %s RETURNING session_id, last_seq)
            INSERT INTO iac_messages (session_id, seq, body) SELECT session_id, last_seq, %s FROM bumped""").format(
            _BUMP
        )
        if (await conn.execute(query, [session_id, _line(message)])).rowcount == 0:
            raise SessionNotFound(session_id)

    async def _read(self, conn: Connection, session_id: str) -> tuple[SessionRecord, int, bytes]:
        """The record, its last seq and the log as the file store would hold it (JSON lines)."""
        query = sql.SQL("SELECT {}, last_seq FROM iac_sessions WHERE session_id = %s").format(_COLUMNS)
        row = await (await conn.execute(query, [session_id])).fetchone()
        if row is None:
            raise SessionNotFound(session_id)
        # Bounded by last_seq: a message appended after the record was read belongs to the next load.
        query_lines = "SELECT body::text FROM iac_messages WHERE session_id = %s AND seq <= %s ORDER BY seq"
        lines = await conn.execute(query_lines, [session_id, row[-1]])
        data = "".join(line for (line,) in await lines.fetchall()).encode()
        return _record(row[:-1]), row[-1], data

    async def _rewrite(
        self, conn: Connection, session_id: str, messages: Sequence[Message], seen_last_seq: int
    ) -> bool:
        """Replace the whole log, unless it changed since it was read (then False, nothing written)."""
        async with conn.transaction():
            claim = "UPDATE iac_sessions SET last_seq = %s WHERE session_id = %s AND last_seq = %s"
            if (await conn.execute(claim, [len(messages), session_id, seen_last_seq])).rowcount == 0:
                return False
            await conn.execute("DELETE FROM iac_messages WHERE session_id = %s", [session_id])
            async with conn.cursor() as cursor:
                await cursor.executemany(
                    "INSERT INTO iac_messages (session_id, seq, body) VALUES (%s, %s, %s)",
                    [(session_id, seq, _line(message)) for seq, message in enumerate(messages, 1)],
                )
        return True
