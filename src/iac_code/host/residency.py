"""Which session runtimes one connection keeps in memory.

A session is live (its Session, AgentLoop and history in memory) or evicted: after `idle_seconds`
without a call and with no prompt running, its runtime is dropped, and the connection reloads it from
the store on the next call for it. Closing forgets it for good (only load or resume bring it back).

Within one process (HTTP serves many connections) a session has one runtime, so its log has one
writer: a connection that opens a session held by another takes it over, unless a prompt is running
there. Two processes sharing a config directory are not coordinated: opening the same session in
both at once is not supported (see sessions/README.md, "Limits"); processes sharing a database are, through
session leases (cluster/owners.py).
"""

from __future__ import annotations

import asyncio
import logging

from iac_code.agent.session import SessionCore
from iac_code.errors import InvalidParams
from iac_code.sessions.owners import SessionOwners

logger = logging.getLogger(__name__)


class Residency:
    """One connection's sessions: the live ones and those evicted (reloaded on their next call)."""

    def __init__(self, idle_seconds: float, *, owners: SessionOwners) -> None:
        self.live: dict[str, SessionCore] = {}
        self._owners = owners
        self.evicted: set[str] = set()
        self._idle_seconds = idle_seconds
        self._timers: dict[str, asyncio.TimerHandle] = {}

    async def claim(self, session_id: str) -> None:
        """Hold this session's runtime here, taking it from another connection where it is idle."""
        await self._owners.reserve(session_id)
        owner = self._owners.get(session_id)
        if owner is not None and owner is not self:
            held = owner.held(session_id)
            if held is not None and held.busy:
                raise InvalidParams("sessionId", "a prompt is running for this session in another connection")
            owner.forget(session_id)
            logger.info("session %s moved to another connection", session_id)
        self._owners.set(session_id, self)

    def held(self, session_id: str) -> SessionCore | None:
        return self.live.get(session_id)

    def add(self, session: SessionCore) -> None:
        self.live[session.id] = session
        self.evicted.discard(session.id)
        self.touch(session.id)

    def forget(self, session_id: str) -> None:
        if (session := self.live.pop(session_id, None)) is not None:
            session.release()  # its MCP servers stop even if nobody closes it (taken by another connection)
        self.evicted.discard(session_id)
        self._cancel_timer(session_id)
        self._owners.release(session_id, self)

    def forget_all(self) -> list[SessionCore]:
        """Forget every session; returns the live ones (to close)."""
        live = list(self.live.values())
        for session_id in [*self.live, *self.evicted]:
            self.forget(session_id)
        return live

    def touch(self, session_id: str) -> None:
        """The session was used: it stays live for another `idle_seconds`."""
        self._cancel_timer(session_id)
        self._timers[session_id] = asyncio.get_running_loop().call_later(
            self._idle_seconds, self._evict_if_idle, session_id
        )

    def _cancel_timer(self, session_id: str) -> None:
        timer = self._timers.pop(session_id, None)
        if timer is not None:
            timer.cancel()

    def _evict_if_idle(self, session_id: str) -> None:
        self._timers.pop(session_id, None)
        session = self.live.get(session_id)
        if session is None:
            return
        if session.busy:
            self.touch(session_id)
            return
        del self.live[session_id]
        session.release()
        self.evicted.add(session_id)
        logger.debug("session %s evicted after %.0f s idle", session_id, self._idle_seconds)
