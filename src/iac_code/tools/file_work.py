"""A small pool of daemon threads of its own for the file tools' blocking system calls.

Why not `asyncio.to_thread`: its default executor is shared with everything else (the provider is
built there), and it is joined at exit. One file that blocks a read (a FIFO, a hung network mount)
per worker thread used to freeze every session on every connection, and then SIGTERM and stdin EOF
could not end the process either. Here a blocked call holds one of these threads only, the tool
gives up after a timeout, and exit never waits: the threads are daemons, never joined.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from iac_code.system.threads import DaemonPool
from iac_code.tools.common import ToolError

T = TypeVar("T")

MAX_WORKERS = 4
TIMEOUT_SECONDS = 60.0  # far above any local read or write; a call past it is stuck, not slow


_POOL = DaemonPool(MAX_WORKERS, "file-tools")


async def run_file_work(call: Callable[..., T], *args: Any, timeout: float = TIMEOUT_SECONDS) -> T:
    """`call(*args)` on the file tools' own threads; a ToolError if it has not returned in `timeout`."""
    future = _POOL.submit(lambda: call(*args))
    try:
        async with asyncio.timeout(timeout):
            return await asyncio.wrap_future(future)
    except TimeoutError:
        raise ToolError(f"the file system did not answer within {timeout:g}s (a hung mount?); gave up") from None
