"""A wake-up listener for tests: records what it hears and waits for the next one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from iac_code.cluster.wakeups import Wakeup, WakeupListener


class Heard:
    def __init__(self) -> None:
        self.queue: asyncio.Queue[Wakeup] = asyncio.Queue()

    async def next(self, timeout: float = 5.0) -> Wakeup:
        return await asyncio.wait_for(self.queue.get(), timeout)

    async def nothing(self, wait: float = 0.3) -> bool:
        await asyncio.sleep(wait)
        return self.queue.empty()


@asynccontextmanager
async def listening(url: str, instance_id: str) -> AsyncIterator[Heard]:
    heard = Heard()
    listener = WakeupListener(url, instance_id, heard.queue.put_nowait)
    await listener.start()
    try:
        yield heard
    finally:
        await listener.close()
