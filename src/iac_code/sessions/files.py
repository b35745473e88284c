"""The file store of earlier versions (the default until SQLite): one directory per session, JSON lines.

Kept for what still uses it: its format is what import_files.py reads on a first start, and the store is
the baseline of bench/sessions.py and a backend of the conformance tests.

    root/
      index.jsonl           what list() and get() read: record snapshots, updated_at bumps, deletions
      index.lock            flock'd around every index write and metadata rewrite (several processes)
      <session_id>/
        messages.jsonl      one Message.to_dict() per line, append-only
        meta.json           the SessionRecord, rewritten atomically; its updated_at may lag the index's

The message log is the durable truth; the index is a cache that can be rebuilt from the meta.json
files (and the logs' mtimes) whenever it is missing or damaged. See README.md (Legacy file store).
"""

from __future__ import annotations

import fcntl
import functools
import json
import logging
import os
import shutil
import threading
import uuid
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from iac_code.messages import Message
from iac_code.safe_json import loads
from iac_code.sessions.disk import (
    encode_line,
    fsync_dir,
    open_regular,
    read_from,
    stat_regular,
    write_all,
    write_atomic,
)
from iac_code.sessions.keys import SESSION_ID, InvalidSessionId, check_id, decode_cursor, encode_cursor, iso_time
from iac_code.sessions.records import index_entry_problem, meta_problem, read_meta
from iac_code.sessions.repair import parse_log, with_interrupted_results
from iac_code.sessions.store import RecordChanges, SessionDamaged, SessionNotFound, SessionRecord

logger = logging.getLogger(__name__)


# Rewrite the index once dead lines (superseded snapshots, bumps, tombstones) outnumber live ones.
_COMPACT_SLACK = 1000


@functools.lru_cache(maxsize=4096)  # a handful of distinct cwds, compared for every session listed
def _normpath(path: str) -> str:
    return os.path.normpath(path)


def _record(data: dict[str, Any]) -> SessionRecord:
    """A record the caller may change freely: it shares nothing with the cached index."""
    return SessionRecord(**{**data, "permissions": dict(data["permissions"])})


class FileSessionStore:
    """A SessionStore on the local file system, safe for several processes sharing `root`.

    Each session has a single writer (the process that has it open); different sessions, and the
    shared index, may be written by any number of processes at once. With `durable` (the default)
    every append is fdatasync'd, so it also survives power loss; without it, a process crash still
    loses nothing the kernel has accepted.
    """

    def __init__(self, root: Path, *, durable: bool = True) -> None:
        self.root = Path(root)
        self.durable = durable
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._index_path = self.root / "index.jsonl"
        self._lock_path = self.root / "index.lock"
        self._mutex = threading.RLock()
        self._lock_depth = 0
        self._lock_fd = -1
        # The index as last read: an open descriptor (which also pins its inode, so a replaced file
        # is always noticed), how far it was read, and the live records it describes.
        self._index_fd = -1
        self._index_closer: weakref.finalize[[int], FileSessionStore] | None = None
        self._offset = 0
        self._lines = 0
        self._records: dict[str, dict[str, Any]] = {}

    # ---- SessionStore ----

    def create(self, record: SessionRecord) -> None:
        session_dir = self._dir(record.session_id)
        now = iso_time()
        created, updated = record.created_at or now, record.updated_at or now
        record = replace(record, created_at=created, updated_at=updated, permissions=dict(record.permissions))
        self._make_dir(session_dir)
        os.close(os.open(session_dir / "messages.jsonl", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        self._save(record)

    def append(self, session_id: str, message: Message) -> None:
        line = encode_line(message.to_dict())
        fd = self._open_log(session_id, os.O_RDWR | os.O_APPEND)
        try:
            # A line left torn by an earlier crash must not swallow this one.
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line
            write_all(fd, line)
            if self.durable:
                os.fdatasync(fd)
        finally:
            os.close(fd)
        self._touch(session_id)

    def update(self, session_id: str, changes: RecordChanges) -> SessionRecord:
        with self._locked():
            record = replace(changes.applied_to(self.get(session_id)), updated_at=iso_time())
            self._save(record)
        return record

    def load(self, session_id: str) -> tuple[SessionRecord, list[Message]]:
        record = self.get(session_id)
        path = self._dir(session_id) / "messages.jsonl"
        data = self._read_log(session_id)
        messages, torn_tail, bad_middle = parse_log(data)
        repaired, repaired_in_middle = with_interrupted_results(messages)
        if bad_middle or repaired_in_middle:
            logger.warning("session %s: rewriting its log to repair it", session_id)
            write_atomic(path, b"".join(encode_line(m.to_dict()) for m in repaired), durable=self.durable)
            return record, repaired
        if torn_tail:
            logger.warning("session %s: dropping a torn last line", session_id)
            os.truncate(path, data.rindex(b"\n") + 1 if b"\n" in data else 0)
        for message in repaired[len(messages) :]:
            self.append(session_id, message)
        return record, repaired

    def get(self, session_id: str) -> SessionRecord:
        check_id(session_id)
        with self._locked():
            self._refresh()
            data = self._records.get(session_id)
        if data is None:  # unknown, or a directory whose meta.json does not read back
            problem = meta_problem(self._dir(session_id))
            raise SessionNotFound(session_id) if problem is None else SessionDamaged(session_id, problem)
        return _record(data)

    def list(
        self, cwd: str | None, cursor: str | None = None, limit: int = 50, owner: str | None = None
    ) -> tuple[list[SessionRecord], str | None]:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        after = decode_cursor(cursor) if cursor else None
        with self._locked():
            self._refresh()
            records = list(self._records.values())
        if cwd is not None:
            wanted = _normpath(cwd)
            records = [r for r in records if _normpath(r["cwd"]) == wanted]
        if owner is not None:
            records = [r for r in records if r.get("owner", "") == owner]
        keys = sorted(((r["updated_at"], r["session_id"]) for r in records), reverse=True)
        if after is not None:
            keys = [key for key in keys if key < after]
        page = keys[:limit]
        by_id = {r["session_id"]: r for r in records}
        next_cursor = encode_cursor(*page[-1]) if len(keys) > limit else None
        return [_record(by_id[session_id]) for _, session_id in page], next_cursor

    def fork(self, session_id: str, new_session_id: str, owner: str | None = None) -> SessionRecord:
        source = self.get(session_id)
        target_dir = self._dir(new_session_id)
        data = self._read_log(session_id)
        self._make_dir(target_dir)
        write_atomic(target_dir / "messages.jsonl", data, durable=self.durable)
        now = iso_time()
        record = replace(
            source,
            session_id=new_session_id,
            created_at=now,
            updated_at=now,
            permissions=dict(source.permissions),
            options=dict(source.options),
            owner=source.owner if owner is None else owner,
        )
        self._save(record)
        return record

    def clear(self, session_id: str) -> None:
        self.get(session_id)
        fd = self._open_log(session_id, os.O_WRONLY)
        try:
            os.ftruncate(fd, 0)  # one system call: readers see the old log or an empty one
            if self.durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        self._touch(session_id)

    def delete(self, session_id: str) -> None:
        try:
            session_dir = self._dir(session_id)
        except InvalidSessionId:
            return
        # Renaming first makes the removal atomic: a crash leaves a dotted name that no rebuild reads.
        doomed = self.root / f".{session_id}.{uuid.uuid4().hex}.deleted"
        with self._locked():
            try:
                session_dir.rename(doomed)
            except FileNotFoundError:
                pass
            self._refresh()
            if session_id in self._records:
                self._write_index_line({"drop": session_id})
        shutil.rmtree(doomed, ignore_errors=True)

    # ---- files ----

    def _dir(self, session_id: str) -> Path:
        return self.root / check_id(session_id)

    def _open_log(self, session_id: str, flags: int) -> int:
        try:
            return open_regular(self._dir(session_id) / "messages.jsonl", flags)
        except FileNotFoundError:
            raise SessionNotFound(session_id) from None
        except OSError as exc:
            raise SessionDamaged(session_id, f"messages.jsonl: {exc.strerror}") from None

    def _read_log(self, session_id: str) -> bytes:
        fd = self._open_log(session_id, os.O_RDONLY)
        try:
            return read_from(fd, 0)
        finally:
            os.close(fd)

    def _make_dir(self, session_dir: Path) -> None:
        try:
            session_dir.mkdir(mode=0o700)
        except FileExistsError:
            raise ValueError(f"session {session_dir.name} already exists") from None
        if self.durable:
            fsync_dir(self.root)

    def _save(self, record: SessionRecord) -> None:
        """Write the record's meta.json, then its index snapshot."""
        data = asdict(record)
        with self._locked():
            self._refresh()  # first: a rebuild now must not see this meta.json and index it twice
            write_atomic(self._dir(record.session_id) / "meta.json", json.dumps(data).encode(), durable=self.durable)
            self._write_index_line({"put": data})

    def _touch(self, session_id: str) -> None:
        with self._locked():
            self._refresh()
            if session_id in self._records:
                self._write_index_line({"touch": session_id, "at": iso_time()})

    # ---- the index ----

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Exclusive access to the index, across threads and processes; re-entrant."""
        with self._mutex:
            if self._lock_depth == 0:
                # Opened per acquisition, not kept: a descriptor inherited by a forked child would share the lock.
                self._lock_fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
                fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
                if self._lock_depth == 0:
                    os.close(self._lock_fd)  # closing releases the flock
                    self._lock_fd = -1

    def _refresh(self) -> None:
        """Bring the in-memory index up to date, reading only what was appended since last time.
        Call with the lock held."""
        on_disk = stat_regular(self._index_path)  # None: missing, or not a file (moved aside)
        if on_disk is None:
            self._rebuild()
            return
        if self._index_fd < 0 or os.fstat(self._index_fd).st_ino != on_disk.st_ino or on_disk.st_size < self._offset:
            self._open_index()
        data = read_from(self._index_fd, self._offset)
        if not data:
            return
        try:
            if not data.endswith(b"\n"):
                raise ValueError("torn last line")
            # One parse of all new lines as a JSON array is several times faster than one per line.
            # Each entry's fields are checked as it is applied, so no depth walk is needed here.
            entries = loads(b"[" + data[:-1].replace(b"\n", b",") + b"]", max_depth=None)
            for entry in entries:
                self._apply(entry)
            self._lines += len(entries)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            logger.warning("session index damaged (%s); rebuilding it", exc)
            self._rebuild()
            return
        self._offset += len(data)
        self._compact_if_bloated()

    def _apply(self, entry: dict[str, Any]) -> None:
        problem = index_entry_problem(entry)
        if problem is not None:
            raise ValueError(f"bad index entry: {problem}")
        record = entry.get("put")
        if record is not None:
            self._records[record["session_id"]] = record
        elif "touch" in entry:
            record = self._records.get(entry["touch"])
            if record is not None:  # a bump racing a deletion must not resurrect the session
                record["updated_at"] = max(record["updated_at"], entry["at"])
        else:
            self._records.pop(entry["drop"], None)

    def _write_index_line(self, entry: dict[str, Any]) -> None:
        """Append one entry; call with the lock held, just after `_refresh`, so the cache stays in step."""
        line = encode_line(entry)
        write_all(self._index_fd, line)
        self._apply(entry)
        self._offset += len(line)
        self._lines += 1
        self._compact_if_bloated()

    def _compact_if_bloated(self) -> None:
        if self._lines > 2 * len(self._records) + _COMPACT_SLACK:
            self._rewrite_index(self._records)

    def close(self) -> None:
        """Release the index descriptor (also done when the store is garbage-collected)."""
        with self._mutex:
            if self._index_closer is not None:
                self._index_closer()
            self._index_fd = -1

    def _open_index(self) -> None:
        self.close()
        self._index_fd = os.open(self._index_path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        self._index_closer = weakref.finalize(self, os.close, self._index_fd)
        self._offset = self._lines = 0
        self._records = {}

    def _rebuild(self) -> None:
        """Recreate the index from every session's meta.json; the log's mtime stands in for lost bumps."""
        records: dict[str, dict[str, Any]] = {}
        for entry in os.scandir(self.root):
            if not (SESSION_ID.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False)):
                continue  # the index itself, temp files, directories being deleted
            try:
                record = read_meta(Path(entry.path))
                logged = iso_time(os.stat(Path(entry.path, "messages.jsonl")).st_mtime)
            except FileNotFoundError:
                continue  # a create that crashed before writing meta.json: the client never got the id
            except (OSError, ValueError, TypeError) as exc:
                logger.warning("session %s skipped while rebuilding the index: %s", entry.name, exc)
                continue
            if record["session_id"] != entry.name:
                logger.warning("session %s skipped while rebuilding the index: its meta.json names another", entry.name)
                continue
            record["updated_at"] = max(record["updated_at"], logged)
            records[entry.name] = record
        self._rewrite_index(records)

    def _rewrite_index(self, records: dict[str, dict[str, Any]]) -> None:
        data = b"".join(encode_line({"put": record}) for record in records.values())
        write_atomic(self._index_path, data, durable=False)  # rebuildable: no need to pay for fsync
        self._open_index()
        self._refresh()
