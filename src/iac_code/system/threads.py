"""Daemon threads for blocking calls that may never return (a FIFO read, a hung mount, a stuck worker).

Why not `asyncio.to_thread`: its default executor is shared with everything else and joined at exit, so
one call that blocks forever would hold a thread everybody needs and keep the process from ending.
These threads are daemons, never joined; the caller gives up after its own timeout.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")


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
