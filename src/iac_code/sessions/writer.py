"""One writer per session: its store writes run one after another, in the order they were submitted.

The agent loop reports each message synchronously (`on_message`); the session submits the write here
and goes on, and awaits `flush()` where durability matters: before the client sees anything that
follows the message (so what was shown is saved), before a prompt's response, on close. The order holds
for any store, whatever its own concurrency.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

logger = logging.getLogger(__name__)

Write = Callable[[], Awaitable[Any]]


class OrderedWriter:
    def __init__(self, name: str) -> None:
        self._name = name
        self._queue: asyncio.Queue[Write] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None
        self._pending = 0

    @property
    def pending(self) -> bool:
        """Some submitted write has not finished yet."""
        return self._pending > 0

    def submit(self, write: Write) -> None:
        self._pending += 1
        self._queue.put_nowait(write)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain())

    async def flush(self) -> None:
        """Wait for every submitted write; raise the first failure since the last flush."""
        await self._queue.join()
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure

    async def _drain(self) -> None:
        while not self._queue.empty():
            write = self._queue.get_nowait()
            try:
                await write()
            except Exception as exc:  # kept for flush(); later writes still go
                logger.exception("session %s: a store write failed", self._name)
                self._failure = self._failure or exc
            finally:
                self._pending -= 1
                self._queue.task_done()
