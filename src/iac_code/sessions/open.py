"""The session store a server uses: PostgreSQL when a database is configured, else the embedded SQLite
database under the config directory (with a file store of earlier versions imported once)."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from iac_code.config import ConfigError, Settings
from iac_code.sessions.store import SessionStore

if TYPE_CHECKING:
    from iac_code.sessions.sqlite import SqliteSessions

logger = logging.getLogger(__name__)


async def open_store(settings: Settings) -> SessionStore:
    """The store for `settings`, ready to use; the caller closes it (`await store.close()`).

    Call it once per process, from the event loop, wherever a store is first needed (the early
    `session/new`, the stdio server, the HTTP server); it returns within a few milliseconds:
    - `database_url` set: PostgreSQL (the optional extra `iac-code[postgres]`, imported only then).
    - else SQLite at `settings.store_path`: the path is checked (check_store_path), the database opened
      and its schema brought up to date, in the store's own thread (a few ms; the event loop does not
      wait on the disk). The import of an old
      file store (`settings.sessions_dir`, once, see import_files.py) is queued in that thread right
      after, without being awaited: every call on the store runs after it, so the first `session/list`
      already shows the imported sessions. A failed import is logged and retried at the next start.

    Raises ConfigError, one line naming what to fix, for anything the user must fix: a config directory
    that cannot be written, a database file that is not a database, a missing PostgreSQL driver or an
    unreachable database. The stdio server answers it on each method (host/unavailable_store.py); the
    HTTP server refuses to start.
    """
    if settings.database_url:
        return await _open_postgres(settings)
    from iac_code.sessions.sqlite import open_sqlite_store

    store = open_sqlite_store(settings.store_path)
    try:
        await asyncio.wrap_future(store.submit(_open_database, store.inner, settings))
    except BaseException:
        await store.close()
        raise
    store.submit(_import_file_store, store.inner, settings.sessions_dir)
    return store


_FIX = "; set IAC_CODE_CONFIG_DIR to a writable directory"


def _open_database(sessions: SqliteSessions, settings: Settings) -> None:
    """Run in the store's thread: check the path, connect, bring the schema up to date."""
    check_store_path(settings)
    try:
        sessions.connect()
    except (sqlite3.Error, OSError) as exc:
        raise ConfigError(
            f"cannot open the session database {settings.store_path}: {exc}; move it aside, or set"
            " IAC_CODE_CONFIG_DIR to another directory"
        ) from None


def check_store_path(settings: Settings) -> None:
    """The database file (SQLite, the default store) can be created or written, and so can its directory
    (SQLite writes its WAL and index files beside it); ConfigError, naming the path, when not."""
    path = settings.store_path
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
        probe, probe_path = tempfile.mkstemp(prefix=".write-test-", dir=path.parent)
        os.close(probe)
        os.unlink(probe_path)
    except OSError as exc:
        raise ConfigError(f"cannot write sessions to {path}: {exc.strerror or type(exc).__name__}{_FIX}") from None


def _import_file_store(sessions: SqliteSessions, sessions_dir: Path) -> None:
    """Run in the store's thread: import the old file store, if any; a failure is logged, not raised
    (the store works without the old sessions, and the next start tries again)."""
    from iac_code.sessions.import_files import import_file_store

    try:
        import_file_store(sessions.conn, sessions_dir)
    except Exception:  # whatever went wrong, the files are untouched and the database unchanged
        logger.exception("importing the sessions of %s failed; it is tried again at the next start", sessions_dir)


async def _open_postgres(settings: Settings) -> SessionStore:
    try:
        from psycopg import OperationalError

        from iac_code.sessions.postgres import PostgresSessionStore
    except ImportError as exc:
        raise ConfigError(
            f"IAC_CODE_DATABASE_URL is set but the PostgreSQL driver is missing ({exc}): "
            "install iac-code with its postgres extra (from its checkout: pipx install --force '.[postgres]')"
        ) from None
    try:
        return await PostgresSessionStore.open(settings.database_url)
    except OperationalError as exc:
        raise ConfigError(
            f"cannot reach the database of IAC_CODE_DATABASE_URL ({_where(settings.database_url)}): {exc}"
        ) from None


def _where(url: str) -> str:
    """The URL without its credentials, for messages."""
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(url)
    except ProgrammingError:
        return "unparsable URL"
    return f"host {parts.get('host', 'localhost')}, port {parts.get('port', 5432)}, database {parts.get('dbname')}"
