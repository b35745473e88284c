"""The bounded hand-off between a running turn and whoever consumes its events.

Adjacent text (or thinking) deltas of one message merge while they wait, so a consumer that falls behind receives
fewer, larger pieces instead of a backlog of tiny ones, and the number of waiting items stays bounded.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import replace

from iac_code.agent.events import Event
from iac_code.providers.base import TextDelta, ThinkingDelta

_MERGEABLE = (TextDelta, ThinkingDelta)
_YIELD_EVERY = 64  # merged pieces after which the producer lets the consumer run


class _Run:
    """Deltas of one kind waiting together; joined once, when taken."""

    def __init__(self, first: TextDelta | ThinkingDelta) -> None:
        self.first = first
        self.parts = [first.text]

    def joins(self, event: TextDelta | ThinkingDelta) -> bool:
        """`event` continues the run: the same kind, the same message, and (Anthropic signs each thinking
        block; deltas of differently signed blocks must stay apart) no other signature."""
        first = self.first
        if type(event) is not type(first) or event.message_id != first.message_id:
            return False
        return getattr(event, "signature", "") in ("", getattr(first, "signature", ""))

    def take(self) -> Event:
        return replace(self.first, text="".join(self.parts))


class EventChannel:
    def __init__(self, limit: int = 256) -> None:
        self._items: deque[Event | _Run | None] = deque()
        self._limit = limit
        self._readable = asyncio.Event()
        self._writable = asyncio.Event()
        self._writable.set()

    async def put(self, event: Event | None) -> None:
        """Add an event (None closes the channel); waits while the channel is full."""
        last = self._items[-1] if self._items else None
        if isinstance(last, _Run) and isinstance(event, _MERGEABLE) and last.joins(event):
            last.parts.append(event.text)
            if len(last.parts) % _YIELD_EVERY == 0:
                await asyncio.sleep(0)
            return
        while len(self._items) >= self._limit:
            self._writable.clear()
            await self._writable.wait()
        self._items.append(_Run(event) if isinstance(event, _MERGEABLE) else event)
        self._readable.set()

    async def get(self) -> Event | None:
        """The next event, or None once the channel is closed."""
        while not self._items:
            self._readable.clear()
            await self._readable.wait()
        item = self._items.popleft()
        self._writable.set()
        return item.take() if isinstance(item, _Run) else item
