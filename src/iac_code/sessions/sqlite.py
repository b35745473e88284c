"""The default SessionStore: the embedded SQLite database ($IAC_CODE_CONFIG_DIR/iac-code.db, see
iac_code.database.sqlite for WAL, durability and locking).

    iac_sessions   one row per session: the SessionRecord, a normalised cwd for list(), the last message seq
    iac_messages   one row per message: (session_id, seq) and Message.to_dict() as one JSON line

The tables and SQL mirror PostgreSQL's (postgres.py, sql_text.py), strings a client controls included:
they are stored as JSON text (to_json_text), so U+0000 comes back unchanged and a lone surrogate as
U+FFFD, as in every other store. Times are ISO 8601 strings from this process's clock, never moving a
session's updated_at back. Every write is one BEGIN IMMEDIATE transaction, so appends from several
processes to one session queue on the database's write lock and never lose or repeat a message.

A row edited by hand is checked as it is read back (records.py): a record that does not pass makes that
session SessionDamaged (and leaves it out of list()); a message that does not pass is dropped and the log
rewritten, like a bad line of the file store. Other sessions never notice.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from iac_code.database.json_text import to_json_text
from iac_code.database.sqlite import connect, transaction
from iac_code.messages import Message
from iac_code.safe_json import dumps_bytes, loads
from iac_code.sessions.audit import AuditTrail
from iac_code.sessions.audit_sqlite import SqliteAuditTrail
from iac_code.sessions.keys import InvalidSessionId, check_id, decode_cursor, encode_cursor, iso_time
from iac_code.sessions.records import record_problem
from iac_code.sessions.repair import parse_lines, with_interrupted_results
from iac_code.sessions.sql_text import COLUMNS, INSERT_COLUMNS, cwd_key, list_query
from iac_code.sessions.store import RecordChanges, SessionDamaged, SessionNotFound, SessionRecord
from iac_code.sessions.threaded import ThreadedStore

logger = logging.getLogger(__name__)
T = TypeVar("T")

_JSON_FIELDS = ("cwd", "title", "model", "mode", "permissions", "owner", "additional_directories", "options")
_INSERT = f"INSERT INTO iac_sessions ({INSERT_COLUMNS}) VALUES ({', '.join('?' * 12)}) ON CONFLICT DO NOTHING"
_BUMP = "updated_at = max(updated_at, ?)"  # never backwards, whatever the clock did


def record_row(record: SessionRecord) -> tuple[str, ...]:
    """The values of INSERT_COLUMNS for `record` (its times must be set)."""
    return (
        record.session_id,
        to_json_text(record.cwd),
        cwd_key(record.cwd),
        to_json_text(record.title),
        record.created_at,
        record.updated_at,
        to_json_text(record.model),
        to_json_text(record.mode),
        to_json_text(dict(record.permissions)),
        to_json_text(record.owner),
        to_json_text(list(record.additional_directories)),
        to_json_text(dict(record.options)),
    )


def message_body(message: Message) -> str:
    """A message as its row holds it: one JSON line (a lone surrogate written as U+FFFD)."""
    return dumps_bytes(message.to_dict()).decode()


def _record(row: tuple[Any, ...]) -> SessionRecord:
    """The record of a row of COLUMNS; SessionDamaged when a value does not read back."""
    data = dict(zip(COLUMNS.split(", "), row, strict=True))
    try:
        for name in _JSON_FIELDS:
            data[name] = loads(data[name])
    except (ValueError, TypeError) as exc:
        raise SessionDamaged(str(data["session_id"]), f"{name} is not JSON text ({exc})") from None
    problem = record_problem(data)
    if problem is not None:
        raise SessionDamaged(str(data["session_id"]), problem)
    return SessionRecord(**data)


# ---- helpers (call inside a transaction) ----


def _get_row(conn: sqlite3.Connection, session_id: str) -> tuple[Any, ...]:
    row: tuple[Any, ...] | None = conn.execute(
        f"SELECT {COLUMNS} FROM iac_sessions WHERE session_id = ?", [session_id]
    ).fetchone()
    if row is None:
        raise SessionNotFound(session_id)
    return row


def _read(conn: sqlite3.Connection, session_id: str) -> tuple[SessionRecord, list[Message], bool]:
    """The record, the messages and whether a message row was unreadable (then left out)."""
    record = _record(_get_row(conn, session_id))
    # As bytes: no str is built only to be parsed, and bytes that are not UTF-8 make that row unreadable.
    query = "SELECT CAST(body AS BLOB) FROM iac_messages WHERE session_id = ? ORDER BY seq"
    messages, bad_row = parse_lines(body for (body,) in conn.execute(query, [session_id]))
    return record, messages, bad_row


def _append(conn: sqlite3.Connection, session_id: str, messages: Sequence[Message]) -> None:
    """Add `messages` after the log's last one and bump updated_at, as the other stores do."""
    if not messages:
        return
    claim = f"UPDATE iac_sessions SET last_seq = last_seq + ?, {_BUMP} WHERE session_id = ? RETURNING last_seq"
    row = conn.execute(claim, [len(messages), iso_time(), session_id]).fetchone()
    if row is None:
        raise SessionNotFound(session_id)
    first = row[0] - len(messages) + 1
    conn.executemany(
        "INSERT INTO iac_messages (session_id, seq, body) VALUES (?, ?, ?)",
        [(session_id, seq, message_body(message)) for seq, message in enumerate(messages, first)],
    )


class SqliteSessions:
    """The store's blocking half. Its connection is opened by the first call, so build it anywhere and
    call it from one thread only (SqliteSessionStore's)."""

    def __init__(self, path: Path, *, durable: bool = True) -> None:
        self.path = path
        self.durable = durable
        self._conn: sqlite3.Connection | None = None

    @property
    def conn(self) -> sqlite3.Connection:
        return self._conn or self.connect()

    def connect(self) -> sqlite3.Connection:
        """The connection, opened (and the schema brought up to date) if it is not yet."""
        if self._conn is None:
            self._conn = connect(self.path, durable=self.durable)
        return self._conn

    def create(self, record: SessionRecord) -> None:
        check_id(record.session_id)
        now = iso_time()
        record = replace(record, created_at=record.created_at or now, updated_at=record.updated_at or now)
        if self.conn.execute(_INSERT, record_row(record)).rowcount == 0:
            raise ValueError(f"session {record.session_id} already exists")

    def append(self, session_id: str, message: Message) -> None:
        check_id(session_id)
        with transaction(self.conn) as conn:
            _append(conn, session_id, [message])

    def update(self, session_id: str, changes: RecordChanges) -> SessionRecord:
        check_id(session_id)
        values = {name: to_json_text(value) for name, value in changes.given().items()}
        assignments = ", ".join([*(f"{name} = ?" for name in values), _BUMP])  # names: RecordChanges' fields
        query = f"UPDATE iac_sessions SET {assignments} WHERE session_id = ? RETURNING {COLUMNS}"
        with transaction(self.conn) as conn:
            row = conn.execute(query, [*values.values(), iso_time(), session_id]).fetchone()
        if row is None:
            raise SessionNotFound(session_id)
        return _record(row)

    def load(self, session_id: str) -> tuple[SessionRecord, list[Message]]:
        check_id(session_id)
        with transaction(self.conn, write=False) as conn:
            record, messages, bad_row = _read(conn, session_id)
        repaired, _ = with_interrupted_results(messages)
        if not bad_row and len(repaired) == len(messages):
            return record, repaired
        with transaction(self.conn) as conn:  # read again under the write lock: no append can slip between
            record, messages, bad_row = _read(conn, session_id)
            repaired, in_middle = with_interrupted_results(messages)
            if bad_row or in_middle:
                logger.warning("session %s: rewriting its log to repair it", session_id)
                conn.execute("DELETE FROM iac_messages WHERE session_id = ?", [session_id])
                conn.execute("UPDATE iac_sessions SET last_seq = 0 WHERE session_id = ?", [session_id])
                _append(conn, session_id, repaired)
            else:
                _append(conn, session_id, repaired[len(messages) :])
        return record, repaired

    def get(self, session_id: str) -> SessionRecord:
        check_id(session_id)
        return _record(_get_row(self.conn, session_id))

    def list(
        self, cwd: str | None, cursor: str | None = None, limit: int = 50, owner: str | None = None
    ) -> tuple[list[SessionRecord], str | None]:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        params: list[str | int] = [] if cwd is None else [cwd_key(cwd)]
        if owner is not None:
            params.append(to_json_text(owner))
        if cursor:
            params += decode_cursor(cursor)
        query = list_query("?", by_cwd=cwd is not None, after_cursor=bool(cursor), by_owner=owner is not None)
        rows = self.conn.execute(query, [*params, limit + 1]).fetchall()
        records = []
        for row in rows[:limit]:
            try:
                records.append(_record(row))
            except SessionDamaged as exc:
                logger.warning("left out of a listing: %s", exc)
        last = rows[limit - 1] if len(rows) > limit else None
        return records, None if last is None else encode_cursor(str(last[4]), str(last[0]))

    def fork(self, session_id: str, new_session_id: str, owner: str | None = None) -> SessionRecord:
        check_id(session_id)
        check_id(new_session_id)
        now = iso_time()
        copy_session = f"""
            INSERT INTO iac_sessions ({INSERT_COLUMNS}, last_seq)
            SELECT ?, cwd, cwd_key, title, ?, ?, model, mode, permissions, coalesce(?, owner), additional_directories,
                options, last_seq
            FROM iac_sessions WHERE session_id = ?"""
        copy_messages = """
            INSERT INTO iac_messages (session_id, seq, body)
            SELECT ?, seq, body FROM iac_messages WHERE session_id = ?"""
        with transaction(self.conn) as conn:
            _get_row(conn, session_id)
            if conn.execute("SELECT 1 FROM iac_sessions WHERE session_id = ?", [new_session_id]).fetchone():
                raise ValueError(f"session {new_session_id} already exists")
            given_owner = None if owner is None else to_json_text(owner)
            conn.execute(copy_session, [new_session_id, now, now, given_owner, session_id])
            conn.execute(copy_messages, [new_session_id, session_id])
            return _record(_get_row(conn, new_session_id))

    def clear(self, session_id: str) -> None:
        check_id(session_id)
        with transaction(self.conn) as conn:
            if (
                conn.execute(f"UPDATE iac_sessions SET {_BUMP} WHERE session_id = ?", [iso_time(), session_id]).rowcount
                == 0
            ):
                raise SessionNotFound(session_id)
            conn.execute("DELETE FROM iac_messages WHERE session_id = ?", [session_id])

    def delete(self, session_id: str) -> None:
        try:
            check_id(session_id)
        except InvalidSessionId:
            return
        with transaction(self.conn) as conn:
            conn.execute("DELETE FROM iac_messages WHERE session_id = ?", [session_id])
            conn.execute("DELETE FROM iac_sessions WHERE session_id = ?", [session_id])

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class SqliteSessionStore(ThreadedStore[SqliteSessions]):
    """The SQLite store, async: every call runs in the store's own thread, which owns the connection."""

    def audit_trail(self) -> AuditTrail:
        """The audit trail in this database, written in this store's thread (sessions/audit.py)."""
        return SqliteAuditTrail(self.in_store_thread)

    def in_store_thread(self, work: Callable[[sqlite3.Connection], T]) -> Future[T]:
        """`work` on the connection, in the store's thread: the connection is opened and used there alone."""
        return self.submit(lambda: work(self.inner.conn))


def open_sqlite_store(path: Path, *, durable: bool = True) -> SqliteSessionStore:
    """A store on the database at `path`; cheap (nothing is opened until the first call, in the store's thread)."""
    return SqliteSessionStore(SqliteSessions(path, durable=durable))
