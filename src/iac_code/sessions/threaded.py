"""A synchronous store (files.py, sqlite.py) behind the async SessionStore interface.

Every call runs in one worker thread, in the order it was made, so the event loop never waits on the
disk and a session's writes keep their order. One thread, not a pool: the file store serialises on its
index lock anyway, an SQLite connection belongs to the thread that opened it, and order is what a
session log needs.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from iac_code.messages import Message
from iac_code.sessions.files import FileSessionStore
from iac_code.sessions.store import RecordChanges, SessionRecord

T = TypeVar("T")


class SyncSessionStore(Protocol):
    """SessionStore's methods, blocking."""

    def create(self, record: SessionRecord) -> None: ...
    def append(self, session_id: str, message: Message) -> None: ...
    def update(self, session_id: str, changes: RecordChanges) -> SessionRecord: ...
    def load(self, session_id: str) -> tuple[SessionRecord, list[Message]]: ...
    def get(self, session_id: str) -> SessionRecord: ...
    def list(
        self, cwd: str | None, cursor: str | None = None, limit: int = 50, owner: str | None = None
    ) -> tuple[list[SessionRecord], str | None]: ...
    def fork(self, session_id: str, new_session_id: str, owner: str | None = None) -> SessionRecord: ...
    def clear(self, session_id: str) -> None: ...
    def delete(self, session_id: str) -> None: ...
    def close(self) -> None: ...


S = TypeVar("S", bound=SyncSessionStore)


class ThreadedStore(Generic[S]):
    def __init__(self, inner: S) -> None:
        self.inner = inner
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="session-store")

    def submit(self, work: Callable[..., T], *args: object) -> Future[T]:
        """Queue `work` in the store's thread, after every call made before; later calls wait for it."""
        return self._worker.submit(work, *args)

    async def _call(self, work: Callable[..., T], *args: object) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._worker, functools.partial(work, *args))

    async def create(self, record: SessionRecord) -> None:
        await self._call(self.inner.create, record)

    async def append(self, session_id: str, message: Message) -> None:
        await self._call(self.inner.append, session_id, message)

    async def update(self, session_id: str, changes: RecordChanges) -> SessionRecord:
        return await self._call(self.inner.update, session_id, changes)

    async def load(self, session_id: str) -> tuple[SessionRecord, list[Message]]:
        return await self._call(self.inner.load, session_id)

    async def get(self, session_id: str) -> SessionRecord:
        return await self._call(self.inner.get, session_id)

    async def list(
        self, cwd: str | None, cursor: str | None = None, limit: int = 50, owner: str | None = None
    ) -> tuple[list[SessionRecord], str | None]:
        return await self._call(self.inner.list, cwd, cursor, limit, owner)

    async def fork(self, session_id: str, new_session_id: str, owner: str | None = None) -> SessionRecord:
        return await self._call(self.inner.fork, session_id, new_session_id, owner)

    async def clear(self, session_id: str) -> None:
        await self._call(self.inner.clear, session_id)

    async def delete(self, session_id: str) -> None:
        await self._call(self.inner.delete, session_id)

    async def close(self) -> None:
        await self._call(self.inner.close)
        self._worker.shutdown(wait=False)


class ThreadedFileStore(ThreadedStore[FileSessionStore]):
    """The legacy file store, async: the baseline of bench/sessions.py and a backend of the conformance tests."""


def open_file_store(root: Path, *, durable: bool = True) -> ThreadedFileStore:
    """The legacy store: JSONL files under `root` (Settings.sessions_dir)."""
    return ThreadedFileStore(FileSessionStore(root, durable=durable))
