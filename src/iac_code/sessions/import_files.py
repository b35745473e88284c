"""The one-time import of a file store (the JSONL store of earlier versions, files.py) into the database.

On the first start with the database, every session of `$IAC_CODE_CONFIG_DIR/sessions/` is copied in,
record and messages, repaired as the file store's load would repair it (a torn or unreadable line dropped,
unanswered tool calls answered "interrupted"). All of it is one transaction, which also records the
import (iac_imports): a crash or an error midway leaves nothing half-imported, and the next start does it
all again; a later start finds the record and never reads the files again.

The files are only read, never modified, moved or deleted, not even after the import succeeded: an older
version can still be started on them, and the user may delete them when done. A damaged session (unreadable
meta.json or log) is skipped with a warning; the others are imported.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from iac_code.database.sqlite import transaction
from iac_code.messages import Message
from iac_code.sessions.disk import read_regular
from iac_code.sessions.keys import SESSION_ID, iso_time
from iac_code.sessions.records import read_meta
from iac_code.sessions.repair import parse_log, with_interrupted_results
from iac_code.sessions.sql_text import INSERT_COLUMNS
from iac_code.sessions.sqlite import message_body, record_row
from iac_code.sessions.store import SessionRecord

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Imported:
    sessions: int
    skipped: int


def import_file_store(conn: sqlite3.Connection, sessions_dir: Path) -> Imported | None:
    """Import the file store at `sessions_dir` unless it is missing or was imported already (then None)."""
    source = str(sessions_dir)
    if not sessions_dir.is_dir() or _imported(conn, source):  # the usual start: no write lock taken
        return None
    with transaction(conn):
        if _imported(conn, source):  # by another process starting at the same time
            return None
        imported = skipped = 0
        for session_dir in sorted(sessions_dir.iterdir()):
            if not (SESSION_ID.fullmatch(session_dir.name) and session_dir.is_dir() and not session_dir.is_symlink()):
                continue  # index.jsonl, index.lock, temp files, directories being deleted
            try:
                session = read_file_session(session_dir)
            except (OSError, ValueError, TypeError) as exc:
                logger.warning("session %s not imported from %s: %s", session_dir.name, source, exc)
                skipped += 1
                continue
            if session is not None and _insert(conn, *session):
                imported += 1
        conn.execute(
            "INSERT INTO iac_imports (source, imported_at, sessions, skipped) VALUES (?, ?, ?, ?)",
            [source, iso_time(), imported, skipped],
        )
    logger.info(
        "imported %d sessions of the file store %s into the database (%d damaged ones skipped); the files are"
        " left as they were",
        imported,
        source,
        skipped,
    )
    return Imported(imported, skipped)


def _imported(conn: sqlite3.Connection, source: str) -> bool:
    return conn.execute("SELECT 1 FROM iac_imports WHERE source = ?", [source]).fetchone() is not None


def read_file_session(session_dir: Path) -> tuple[SessionRecord, list[Message]] | None:
    """A file-store session as its load would return it, read without writing anything; None for a
    create that crashed before its meta.json (the client never got the id). OSError or ValueError
    when it cannot be read back."""
    try:
        data = read_meta(session_dir)
    except FileNotFoundError:
        return None
    if data["session_id"] != session_dir.name:
        raise ValueError("its meta.json names another session")
    log_path = session_dir / "messages.jsonl"
    log = read_regular(log_path)
    # meta.json's updated_at lags behind appends (the index carried them): the log's mtime stands in.
    data["updated_at"] = max(data["updated_at"], iso_time(os.stat(log_path).st_mtime))
    messages, _, _ = parse_log(log)
    repaired, _ = with_interrupted_results(messages)
    return SessionRecord(**data), repaired


def _insert(conn: sqlite3.Connection, record: SessionRecord, messages: list[Message]) -> bool:
    """Add the session unless the database has one of that id already (kept as it is)."""
    insert = f"INSERT INTO iac_sessions ({INSERT_COLUMNS}, last_seq) VALUES ({', '.join('?' * 13)})"
    insert += " ON CONFLICT DO NOTHING"
    if conn.execute(insert, [*record_row(record), len(messages)]).rowcount == 0:
        return False
    conn.executemany(
        "INSERT INTO iac_messages (session_id, seq, body) VALUES (?, ?, ?)",
        [(record.session_id, seq, message_body(message)) for seq, message in enumerate(messages, 1)],
    )
    return True
