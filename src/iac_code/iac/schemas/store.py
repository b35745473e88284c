"""Where schemas are kept between calls and sessions: one SQLite file, one row per type.

`providers schema -json` is slow for big providers (every plugin started, tens of MB written) and a big
document takes a second to parse; a session asks for one type at a time. So the document is parsed once,
when it is stored, and each type's block is kept as its own small JSON text: a later call reads one row.
Rows are grouped by a document key (what the schemas depend on, see lookup.py); a document's row is written
last, in the same transaction as its types, so a half-stored document is never taken for a whole one. The
DOCUMENTS_KEPT newest documents stay. The terraform binaries' versions are kept too (by path, inode, size
and mtime), so a warm call never runs terraform. Thread-safe (one connection behind a lock); the file is
shared by concurrent processes (WAL). When the file cannot be opened, an in-memory database stands in.
"""

from __future__ import annotations

import difflib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DOCUMENTS_KEPT = 10
CLOSEST = 5  # names offered for a type that does not exist
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS binaries (identity TEXT PRIMARY KEY, version TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS documents (key TEXT PRIMARY KEY, providers TEXT NOT NULL, built REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS types (key TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,"
    " provider TEXT NOT NULL, block TEXT NOT NULL)",
    "CREATE UNIQUE INDEX IF NOT EXISTS types_by_name ON types (key, kind, name)",
)


@dataclass(frozen=True)
class StoredType:
    provider: str
    block: dict[str, Any]


@dataclass(frozen=True)
class TypeRow:
    kind: str  # "resource" | "data"
    name: str
    provider: str
    block_json: str


class SchemaStore:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def binary_version(self, identity: str) -> str | None:
        row = self._one("SELECT version FROM binaries WHERE identity = ?", (identity,))
        return None if row is None else str(row[0])

    def remember_binary(self, identity: str, version: str) -> None:
        with self._lock:
            db = self._connection()
            with db:
                db.execute("INSERT OR REPLACE INTO binaries (identity, version) VALUES (?, ?)", (identity, version))

    def providers(self, key: str) -> dict[str, str | None] | None:
        """The stored document's providers and their versions; None when `key` is not stored."""
        row = self._one("SELECT providers FROM documents WHERE key = ?", (key,))
        return None if row is None else dict(json.loads(row[0]))

    def type_schema(self, key: str, kind: str, name: str) -> StoredType | None:
        row = self._one("SELECT provider, block FROM types WHERE key = ? AND kind = ? AND name = ?", (key, kind, name))
        return None if row is None else StoredType(str(row[0]), json.loads(row[1]))

    def closest(self, key: str, kind: str, name: str) -> list[str]:
        with self._lock:
            names = [row[0] for row in self._connection().execute(
                "SELECT name FROM types WHERE key = ? AND kind = ?", (key, kind)
            )]  # fmt: skip
        return difflib.get_close_matches(name, names, n=CLOSEST, cutoff=0.6)

    def store(self, key: str, providers: dict[str, str | None], rows: Iterable[TypeRow]) -> None:
        """A whole document's types, then its row; older documents beyond DOCUMENTS_KEPT go."""
        with self._lock:
            db = self._connection()
            with db:
                db.execute("DELETE FROM types WHERE key = ?", (key,))
                db.executemany(
                    "INSERT OR REPLACE INTO types (key, kind, name, provider, block) VALUES (?, ?, ?, ?, ?)",
                    ((key, row.kind, row.name, row.provider, row.block_json) for row in rows),
                )
                db.execute(
                    "INSERT OR REPLACE INTO documents (key, providers, built) VALUES (?, ?, ?)",
                    (key, json.dumps(providers), time.time()),
                )
                stale = [
                    row[0]
                    for row in db.execute(
                        "SELECT key FROM documents ORDER BY built DESC LIMIT -1 OFFSET ?", (DOCUMENTS_KEPT,)
                    )
                ]
                db.executemany("DELETE FROM types WHERE key = ?", ((k,) for k in stale))
                db.executemany("DELETE FROM documents WHERE key = ?", ((k,) for k in stale))

    def _one(self, statement: str, parameters: tuple[str, ...]) -> Any:
        with self._lock:
            return self._connection().execute(statement, parameters).fetchone()

    def _connection(self) -> sqlite3.Connection:
        """Opened on first use (the lock is held)."""
        if self._db is None:
            self._db = self._open()
        return self._db

    def _open(self) -> sqlite3.Connection:
        if self.path is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                db = sqlite3.connect(self.path, timeout=10.0, check_same_thread=False)
                db.execute("PRAGMA journal_mode=WAL")
                return _with_schema(db)
            except (OSError, sqlite3.Error) as exc:
                log.warning("provider schema cache %s unusable (%s); keeping schemas in memory", self.path, exc)
        return _with_schema(sqlite3.connect(":memory:", check_same_thread=False))


def _with_schema(db: sqlite3.Connection) -> sqlite3.Connection:
    db.execute("PRAGMA synchronous=NORMAL")
    for statement in SCHEMA:
        db.execute(statement)
    return db
