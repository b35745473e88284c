"""The file store (files.py) behind the async SessionStore interface.

FileSessionStore stays synchronous (fdatasync, flock, index rebuilds); every call runs in one worker
thread, in the order it was made, so the event loop never waits on the disk and a session's writes
keep their order. One thread, not a pool: the store serialises on its index lock anyway, and order is
what a session log needs.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from iac_code.messages import Message
from iac_code.sessions.files import FileSessionStore
from iac_code.sessions.store import RecordChanges, SessionRecord

T = TypeVar("T")


class ThreadedFileStore:
    def __init__(self, files: FileSessionStore) -> None:
        self.files = files
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="session-store")

    async def _call(self, work: Callable[..., T], *args: object, **kwargs: object) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._worker, functools.partial(work, *args, **kwargs))

    async def create(self, record: SessionRecord) -> None:
        await self._call(self.files.create, record)

    async def append(self, session_id: str, message: Message) -> None:
        await self._call(self.files.append, session_id, message)

    async def update(self, session_id: str, changes: RecordChanges) -> SessionRecord:
        return await self._call(self.files.update, session_id, changes)

    async def load(self, session_id: str) -> tuple[SessionRecord, list[Message]]:
        return await self._call(self.files.load, session_id)

    async def get(self, session_id: str) -> SessionRecord:
        return await self._call(self.files.get, session_id)

    async def list(
        self, cwd: str | None, cursor: str | None = None, limit: int = 50
    ) -> tuple[list[SessionRecord], str | None]:
        return await self._call(self.files.list, cwd, cursor, limit)

    async def fork(self, session_id: str, new_session_id: str) -> SessionRecord:
        return await self._call(self.files.fork, session_id, new_session_id)

    async def clear(self, session_id: str) -> None:
        await self._call(self.files.clear, session_id)

    async def delete(self, session_id: str) -> None:
        await self._call(self.files.delete, session_id)

    async def close(self) -> None:
        await self._call(self.files.close)
        self._worker.shutdown(wait=False)


def open_file_store(root: Path, *, durable: bool = True) -> ThreadedFileStore:
    """The default store: JSONL files under `root` (Settings.sessions_dir)."""
    return ThreadedFileStore(FileSessionStore(root, durable=durable))
