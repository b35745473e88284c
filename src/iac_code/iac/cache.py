"""Checker results cached by what they depend on: checker name and version plus the content of the unit
checked (a file, or a whole directory for the per-directory checks).

Two layers: a dict in memory (an unchanged tree costs only lookups) and an SQLite file under the config
directory, so a restarted agent does not start cold. The disk layer is best effort: if it cannot be
opened or written, the memory layer carries on alone.

A checker that crashed or timed out on a unit is remembered too (its reason, under the same key), so an
unchanged costly input is paid once rather than on every call. Unlike results, a failure is forgotten
after FAILURE_LIFETIME: it may have come from the machine (a loaded CPU, a killed worker), not the input.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iac_code.iac.findings import Finding

log = logging.getLogger(__name__)

MEMORY_ENTRIES = 100_000
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, findings TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS failures (key TEXT PRIMARY KEY, reason TEXT NOT NULL, at REAL NOT NULL)",
)
FAILURE_LIFETIME = 3600.0  # seconds


def cache_key(checker: str, version: str, unit_digest: str) -> str:
    return hashlib.blake2b(f"{checker}\0{version}\0{unit_digest}".encode(), digest_size=20).hexdigest()


class ResultCache:
    """Findings per cache key. Thread-safe: the engine reads and writes it from worker threads."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._memory: OrderedDict[str, tuple[Finding, ...]] = OrderedDict()
        self._failures: OrderedDict[str, tuple[str, float]] = OrderedDict()  # key -> (reason, when)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._db_failed = path is None

    def get(self, key: str) -> list[Finding] | None:
        with self._lock:
            hit = self._memory.get(key)
            if hit is not None:
                self._memory.move_to_end(key)
                return list(hit)
            row = self._query(key)
            if row is None:
                return None
            findings = tuple(Finding.from_dict(item) for item in json.loads(row))
            self._remember(key, findings)
            return list(findings)

    def put_many(self, results: dict[str, list[Finding]]) -> None:
        """Store several keys' findings (one disk transaction for all of them)."""
        if not results:
            return
        with self._lock:
            for key, findings in results.items():
                self._remember(key, tuple(findings))
                self._failures.pop(key, None)
            rows = [(key, json.dumps([f.to_dict() for f in findings])) for key, findings in results.items()]
            self._write("INSERT OR REPLACE INTO results (key, findings) VALUES (?, ?)", rows)

    def _write(self, statement: str, rows: Sequence[tuple[object, ...]]) -> None:
        """Several rows in one disk transaction (the lock is held)."""
        db = self._connection()
        if db is None:
            return
        try:
            db.execute("BEGIN")
            db.executemany(statement, rows)
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            self._disable(exc)

    def failure(self, key: str) -> str | None:
        """Why the checker failed on this key's unit, if it did within FAILURE_LIFETIME."""
        with self._lock:
            found = self._failures.get(key)
            if found is None:
                found = self._query_failure(key)
                if found is None:
                    return None
                self._failures[key] = found
            reason, at = found
            if time.time() - at > FAILURE_LIFETIME:
                del self._failures[key]
                return None
            return reason

    def put_failures(self, failures: dict[str, str]) -> None:
        """Remember that the checker failed on these keys' units, with why."""
        if not failures:
            return
        now = time.time()
        with self._lock:
            for key, reason in failures.items():
                self._failures[key] = (reason, now)
                self._failures.move_to_end(key)
            while len(self._failures) > MEMORY_ENTRIES:
                self._failures.popitem(last=False)
            rows = [(key, reason, now) for key, reason in failures.items()]
            self._write("INSERT OR REPLACE INTO failures (key, reason, at) VALUES (?, ?, ?)", rows)

    def clear_memory(self) -> None:
        with self._lock:
            self._memory.clear()
            self._failures.clear()

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _remember(self, key: str, findings: tuple[Finding, ...]) -> None:
        self._memory[key] = findings
        while len(self._memory) > MEMORY_ENTRIES:
            self._memory.popitem(last=False)

    def _query(self, key: str) -> str | None:
        row = self._row("SELECT findings FROM results WHERE key = ?", key)
        return None if row is None else str(row[0])

    def _query_failure(self, key: str) -> tuple[str, float] | None:
        row = self._row("SELECT reason, at FROM failures WHERE key = ?", key)
        return None if row is None else (str(row[0]), float(row[1]))

    def _row(self, query: str, key: str) -> tuple[Any, ...] | None:
        """The disk layer's row for `key` (None: none, or no disk layer)."""
        db = self._connection()
        if db is None:
            return None
        try:
            row: tuple[Any, ...] | None = db.execute(query, (key,)).fetchone()
        except sqlite3.Error as exc:
            self._disable(exc)
            return None
        return row

    def _connection(self) -> sqlite3.Connection | None:
        if self._db is not None or self._db_failed or self.path is None:
            return self._db
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=2.0, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            for statement in SCHEMA:
                db.execute(statement)
        except (OSError, sqlite3.Error) as exc:
            self._disable(exc)
            return None
        self._db = db
        return db

    def _disable(self, exc: Exception) -> None:
        log.warning("iac_check cache on disk disabled (%s): %s", self.path, exc)
        self._db_failed = True
        if self._db is not None:
            self._db.close()
            self._db = None


_shared: dict[Path | None, ResultCache] = {}
_shared_lock = threading.Lock()


def shared_cache(path: Path | None) -> ResultCache:
    """One cache per file for the whole process, so every session shares the memory layer."""
    with _shared_lock:
        cache = _shared.get(path)
        if cache is None:
            cache = _shared[path] = ResultCache(path)
        return cache
