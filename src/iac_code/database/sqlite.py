"""The embedded database: one SQLite file ($IAC_CODE_CONFIG_DIR/iac-code.db) that several server processes
share (editors open several), with its schema brought up to date by whichever process opens it first.

- WAL: readers never wait for a writer, and a commit is one append to the log file.
- `synchronous=FULL` (durable) syncs the log at every commit, so a commit survives power loss, as the file
  store's fdatasync did. NORMAL (durable=False) syncs only at checkpoints: in WAL mode a commit is still
  in the operating system's hands when it returns, so it survives a kill -9 of the process (SQLite's
  documented guarantee), not a power cut. Tests and benchmarks use it.
- A busy database is waited for (BUSY_SECONDS) instead of failing at once; every write transaction starts
  with BEGIN IMMEDIATE, so two processes never both read and then fail to upgrade to a write.
- Connections are thread-bound: open and use one in a single thread (the session store has its own).
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from iac_code.database.migration_files import known_migrations

logger = logging.getLogger(__name__)

BUSY_SECONDS = 30.0  # a write waits this long for another process's transaction before failing


def connect(path: Path, *, durable: bool = True) -> sqlite3.Connection:
    """A connection to the database at `path` (created 0600 if missing), schema up to date.
    Raises sqlite3.Error (e.g. DatabaseError for a file that is not a database) or OSError."""
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))  # the file holds prompts and code: private
    conn = sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None)  # transactions are explicit
    conn.text_factory = _text
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {'FULL' if durable else 'NORMAL'}")
        conn.execute("PRAGMA foreign_keys = ON")
        migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _text(data: bytes) -> str:
    """A TEXT value as str; bytes that are not UTF-8 (a row edited by hand) read as U+FFFD instead of
    failing the whole query, so one bad row cannot hide the others."""
    return data.decode(errors="replace")


@contextmanager
def transaction(conn: sqlite3.Connection, *, write: bool = True) -> Iterator[sqlite3.Connection]:
    """One transaction: BEGIN IMMEDIATE for a write (takes the write lock first, waiting BUSY_SECONDS),
    BEGIN for a consistent read. Committed on success, rolled back on any error."""
    conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def migrate(conn: sqlite3.Connection) -> list[int]:
    """Apply the pending files of sqlite_migrations/, in order, in one transaction; `PRAGMA user_version`
    records the schema version. Processes opening the database together queue on the write lock, and each
    finds what the first applied. Returns the versions this call applied (usually none: then no lock is
    taken, so a start never waits for another process's write)."""
    migrations = known_migrations("sqlite_migrations")
    if _schema_version(conn) >= migrations[-1].version:
        return []
    applied = []
    with transaction(conn):
        current = _schema_version(conn)
        for migration in migrations:
            if migration.version <= current:
                continue
            logger.info("applying database migration sqlite %04d_%s", migration.version, migration.name)
            for statement in statements(migration.sql):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {migration.version:d}")
            applied.append(migration.version)
    return applied


def _schema_version(conn: sqlite3.Connection) -> int:
    version: int = conn.execute("PRAGMA user_version").fetchone()[0]
    return version


def statements(script: str) -> Iterator[str]:
    """The statements of a script, one at a time (executescript would commit the open transaction)."""
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending
            pending = ""
