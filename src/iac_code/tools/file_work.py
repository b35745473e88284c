"""A small pool of daemon threads of its own for the file tools' blocking system calls.

Why not `asyncio.to_thread`: its default executor is shared with everything else (the provider is
built there), and it is joined at exit. One file that blocks a read (a FIFO, a hung network mount)
per worker thread used to freeze every session on every connection, and then SIGTERM and stdin EOF
could not end the process either. Here a blocked call holds one of these threads only, the tool
gives up after a timeout, and exit never waits: the threads are daemons, never joined.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from iac_code.tools.base import ToolError

T = TypeVar("T")

MAX_WORKERS = 4
TIMEOUT_SECONDS = 60.0  # far above any local read or write; a call past it is stuck, not slow


class DaemonPool:
    """Runs callables on at most `max_workers` daemon threads, started as work arrives."""

    def __init__(self, max_workers: int, name: str) -> None:
        self._max_workers = max_workers
        self._name = name
        self._work: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._workers = 0
        self._idle = 0

    def submit(self, call: Callable[[], T]) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._idle == 0 and self._workers < self._max_workers:
                self._workers += 1
                threading.Thread(target=self._serve, name=f"{self._name}-{self._workers}", daemon=True).start()
            self._work.put((future, call))
        return future

    def _serve(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            future, call = self._work.get()
            with self._lock:
                self._idle -= 1
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(call())
            except BaseException as exc:
                future.set_exception(exc)


_POOL = DaemonPool(MAX_WORKERS, "file-tools")


async def run_file_work(call: Callable[..., T], *args: Any, timeout: float = TIMEOUT_SECONDS) -> T:
    """`call(*args)` on the file tools' own threads; a ToolError if it has not returned in `timeout`."""
    future = _POOL.submit(lambda: call(*args))
    try:
        return await asyncio.wait_for(asyncio.wrap_future(future), timeout)
    except TimeoutError:
        raise ToolError(f"the file system did not answer within {timeout:g}s (a hung mount?); gave up") from None
