"""The connection's outgoing side: one message at a time, and no update before its session is known.

Clients drop `session/update`s for a sessionId they have not yet seen in a response (Zed, JetBrains),
so a new session's out-of-turn updates are held until the response carrying its id is written.
"""

from __future__ import annotations

import asyncio
from typing import Any

from acp._transport import Transport


class Outbox:
    """A Transport wrapper; `hold(session_id)` before answering with that session's id."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport
        self._lock = asyncio.Lock()
        self._held: dict[str, list[dict[str, Any]]] = {}

    def hold(self, session_id: str) -> None:
        self._held.setdefault(session_id, [])

    def discard(self, session_id: str) -> None:
        """The response that was to give the client this session's id will not be sent (its request was cancelled)."""
        self._held.pop(session_id, None)

    async def send(self, message: dict[str, Any]) -> None:
        async with self._lock:
            held = self._held.get(_update_session_id(message) or "")
            if held is not None:
                held.append(message)
                return
            await self._transport.send(message)
            for waiting in self._held.pop(_result_session_id(message) or "", []):
                await self._transport.send(waiting)

    async def receive(self) -> dict[str, Any] | None:
        return await self._transport.receive()

    async def close(self) -> None:
        await self._transport.close()


def _update_session_id(message: dict[str, Any]) -> str | None:
    if message.get("method") != "session/update":
        return None
    params = message.get("params")
    return params.get("sessionId") if isinstance(params, dict) else None


def _result_session_id(message: dict[str, Any]) -> str | None:
    result = message.get("result")
    return result.get("sessionId") if isinstance(result, dict) else None
