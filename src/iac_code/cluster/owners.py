"""SessionOwners across instances: a session held by a connection of this process is leased to this instance.

Within one process, SessionOwners gives each session one runtime (sessions/owners.py). Across instances
sharing a database, the session's lease (leases.py) says which instance may hold that runtime, so its
history has one writer. A connection taking a session first takes its lease:

- free, expired, or already this instance's: taken at once;
- held by a live instance: that instance is asked to let it go (`release` wake-up) and does so unless a
  prompt is running there; after `release_wait` seconds of refusal the call fails as it would locally;
- held by a dead instance (no heartbeat): taken once the lease expires, and the store's load repairs
  what the interrupted turn left, as after a local crash.

The lease is renewed on every heartbeat (`renew`) and given up when the last connection of this process
forgets the session; a session whose lease was taken over meanwhile (this instance was cut off from the
database for longer than the lease) is dropped here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Coroutine
from typing import Any

import psycopg

from iac_code.cluster.leases import SessionLeases
from iac_code.errors import InvalidParams, Unavailable
from iac_code.sessions.keys import SESSION_ID
from iac_code.sessions.owners import Holder, SessionOwners

logger = logging.getLogger(__name__)

POLL_SECONDS = 0.1
ASK_AGAIN_SECONDS = 1.0


def _names_a_session(session_id: str) -> bool:
    """Whether a store would accept the id. Others need no lease (no session has them, and the store
    refuses them as it would alone), and may hold what PostgreSQL's text cannot (U+0000)."""
    return SESSION_ID.fullmatch(session_id) is not None


class LeasedSessionOwners(SessionOwners):
    def __init__(self, leases: SessionLeases, *, instance_max_age: float, release_wait: float = 3.0) -> None:
        super().__init__()
        self.leases = leases
        self._instance_max_age = instance_max_age
        self._release_wait = release_wait
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}
        self._background: set[asyncio.Task[None]] = set()

    # -- SessionOwners -----------------------------------------------------------------------

    async def reserve(self, session_id: str) -> None:
        if not _names_a_session(session_id):
            return
        try:
            async with self._exclusive(session_id):
                await self._take_lease(session_id)
        except psycopg.OperationalError:
            raise Unavailable("the database is unreachable", {"database": "unreachable; retry later"}) from None

    def release(self, session_id: str, owner: Holder) -> None:
        super().release(session_id, owner)
        if self.get(session_id) is None:
            self._spawn(self._give_up(session_id))

    # -- driven by the instance's heartbeat and wake-ups ---------------------------------------

    async def renew(self) -> None:
        """Extend every lease this process holds; drop the sessions whose lease another instance took."""
        held = list(self._by_session)
        if not held:
            return
        kept = await self.leases.renew(held)
        for session_id in set(held) - kept:
            owner = self.get(session_id)
            if owner is not None:
                logger.warning("session %s was taken over by another instance; dropping it here", session_id)
                session = owner.held(session_id)
                owner.forget(session_id)
                if session is not None:
                    self._spawn(session.close())

    async def on_release_request(self, session_id: str) -> None:
        """Another instance wants the session: let it go unless a prompt is running for it here."""
        async with self._exclusive(session_id):
            owner = self.get(session_id)
            session = owner.held(session_id) if owner is not None else None
            if session is not None and session.busy:
                logger.info("session %s stays here: a prompt is running (another instance asked for it)", session_id)
                return
            if session is not None:
                await session.flush()  # the next holder loads everything this one wrote
            if owner is not None:
                owner.forget(session_id)
                logger.info("session %s handed over to another instance", session_id)
            else:
                with contextlib.suppress(psycopg.OperationalError):
                    await self.leases.release(session_id)

    async def close(self) -> None:
        """Wait for the lease releases in progress (before the pool closes)."""
        await asyncio.gather(*self._background, return_exceptions=True)

    # -- helpers -----------------------------------------------------------------------------

    async def _take_lease(self, session_id: str) -> None:
        started = time.monotonic()
        asked_at = -ASK_AGAIN_SECONDS
        while True:
            lease = await self.leases.acquire(session_id)
            if lease is not None:
                if lease.taken_over_from:
                    logger.info("session %s taken over from instance %s", session_id, lease.taken_over_from)
                return
            now = time.monotonic()
            if now - asked_at >= ASK_AGAIN_SECONDS:
                holder, alive = await self.leases.ask_holder_to_release(session_id, self._instance_max_age)
                asked_at = now
                # A live holder answers within release_wait; a dead one's lease runs out within its ttl.
                patience = self._release_wait if alive else self.leases.ttl + self._release_wait
                if holder is not None and now - started > patience:
                    raise InvalidParams("sessionId", "a prompt is running for this session on another instance")
            await asyncio.sleep(POLL_SECONDS)

    async def _give_up(self, session_id: str) -> None:
        async with self._exclusive(session_id):
            if self.get(session_id) is None and _names_a_session(session_id):  # not taken again meanwhile
                try:
                    await self.leases.release(session_id)
                except psycopg.OperationalError:
                    logger.info("session %s: lease not released (database unreachable); it expires", session_id)

    @contextlib.asynccontextmanager
    async def _exclusive(self, session_id: str) -> AsyncIterator[None]:
        """One lease operation at a time per session, so a release never overtakes a later acquire."""
        lock, users = self._locks.get(session_id, (asyncio.Lock(), 0))
        self._locks[session_id] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[session_id]
            if users == 1:
                del self._locks[session_id]
            else:
                self._locks[session_id] = (lock, users - 1)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
