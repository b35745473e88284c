"""One instance among those sharing a database: its id, pool, heartbeat, wake-ups and session leases.

`await ClusterNode.open(settings)` connects (schema migrated) and starts listening; `start()` begins the
heartbeat loop, which every `heartbeat_seconds` says "alive" (instances.py), renews the session leases
(owners.py) and starts the `on_tick` callbacks (the HTTP transport's housekeeping) in the background.
A peer that misses three beats counts as dead. `close()` stops it all and deregisters, so peers take over at once.

The HTTP transport builds on it (http_cluster/backend.py); so could any other server process sharing
sessions with a cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import astuple, dataclass

import psycopg

from iac_code.cluster.instances import InstanceRegistry, check_instance_id
from iac_code.cluster.leases import SessionLeases
from iac_code.cluster.owners import LeasedSessionOwners
from iac_code.cluster.wakeups import Wakeup, WakeupListener
from iac_code.config import ConfigError, Settings
from iac_code.database.pool import RECONNECT_SECONDS, Pool, open_pool

logger = logging.getLogger(__name__)

MISSED_BEATS = 3  # a peer silent for this many heartbeats is dead
POOL_SIZE = 20
POOL_TIMEOUT = 3.0  # how long a request waits for a database connection before it is refused (503)
HEALTH_TIMEOUT = 1.0  # /health answers 503 this fast when the database is away
FAIL_FAST_SECONDS = 1.0  # after a request found the database unreachable, the next ones fail at once for this long


class DatabaseUnreachable(Exception):
    pass


@dataclass(frozen=True)
class NodeTimings:
    heartbeat: float = 5.0
    lease: float = 15.0

    @property
    def instance_max_age(self) -> float:
        return self.heartbeat * MISSED_BEATS

    @property
    def settling(self) -> float:
        """How long after an outage an instance waits before it trusts a peer's silence: beyond a dead
        peer's max age, the time a live peer may take to reach the database again (a pending pool wait,
        then a reconnection)."""
        return max(self.instance_max_age, POOL_TIMEOUT + RECONNECT_SECONDS + self.heartbeat)


def default_instance_id() -> str:
    """The host name and a random suffix, in the characters a LISTEN channel allows."""
    host = re.sub(r"[^a-z0-9_]+", "_", socket.gethostname().lower()).strip("_")[:30] or "iac"
    return f"{host}_{uuid.uuid4().hex[:8]}"


class ClusterNode:
    def __init__(self, pool: Pool, url: str, instance_id: str, timings: NodeTimings) -> None:
        self.pool = pool
        self.instance_id = check_instance_id(instance_id)
        self.timings = timings
        self.registry = InstanceRegistry(pool, instance_id, {"host": socket.gethostname(), "pid": os.getpid()})
        self.owners = LeasedSessionOwners(
            SessionLeases(pool, instance_id, ttl=timings.lease), instance_max_age=timings.instance_max_age
        )
        self.on_tick: list[Callable[[], Awaitable[None]]] = []
        self.on_wakeup: Callable[[Wakeup], None] = lambda wakeup: None
        self.listener = WakeupListener(url, instance_id, self._dispatch)
        self._beating: asyncio.Task[None] | None = None
        self._ticking: asyncio.Task[None] | None = None
        self._trust_silence_at: float | None = None  # None while the database is unreachable
        self._unreachable_at = float("-inf")
        self._background: set[asyncio.Task[None]] = set()

    @classmethod
    async def open(cls, settings: Settings) -> ClusterNode:
        if settings.lease_seconds <= 2 * settings.heartbeat_seconds:
            raise ConfigError("IAC_CODE_LEASE_SECONDS must be more than twice IAC_CODE_HEARTBEAT_SECONDS")
        # Coordination state (connections, events, queued messages, leases) is transient: commits need not
        # wait for the disk. Sessions are in the store's own, durable pool.
        pool = await open_pool(settings.database_url, max_size=POOL_SIZE, timeout=POOL_TIMEOUT, durable=False)
        timings = NodeTimings(settings.heartbeat_seconds, settings.lease_seconds)
        node = cls(pool, settings.database_url, settings.instance_id or default_instance_id(), timings)
        try:
            await node.registry.heartbeat()
            await node.listener.start()
        except BaseException:
            await pool.close()
            raise
        node._trust_silence_at = time.monotonic() + timings.instance_max_age
        logger.info("cluster instance %s (heartbeat %gs, lease %gs)", node.instance_id, *astuple(timings))
        return node

    @property
    def settled(self) -> bool:
        """The database answered every heartbeat for long enough that peers' silence means their death,
        not an outage they are still recovering from (after one, everyone looks dead for a moment)."""
        trusted_at = self._trust_silence_at
        return trusted_at is not None and time.monotonic() >= trusted_at

    def start(self) -> None:
        self._beating = asyncio.create_task(self._beat_forever(), name="cluster heartbeat")

    async def close(self) -> None:
        for task in (self._beating, self._ticking):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        await self.listener.close()
        await self.owners.close()
        await asyncio.gather(*self._background, return_exceptions=True)
        with contextlib.suppress(psycopg.OperationalError):
            await self.registry.deregister()
        await self.pool.close()

    @contextlib.contextmanager
    def database_required(self) -> Iterator[None]:
        """Around a request's database work: raises DatabaseUnreachable (at once for a moment after a
        failure, rather than every request waiting out the pool's timeout during an outage)."""
        if time.monotonic() - self._unreachable_at < FAIL_FAST_SECONDS:
            raise DatabaseUnreachable("the database was unreachable a moment ago")
        try:
            yield
        except psycopg.OperationalError as exc:
            self._unreachable_at = time.monotonic()
            self._lost_database()
            raise DatabaseUnreachable(str(exc)) from None

    async def database_ok(self) -> bool:
        try:
            async with self.pool.connection(timeout=HEALTH_TIMEOUT) as conn:
                await conn.execute("SELECT 1")
        except psycopg.OperationalError:
            self._unreachable_at = time.monotonic()
            self._lost_database()
            return False
        self._unreachable_at = float("-inf")
        return True

    def _lost_database(self) -> None:
        """Whatever found the database unreachable (a heartbeat, a request, the housekeeping), peers' silence
        is not trusted again until heartbeats have gone through for `settling` seconds: the peers lost it too,
        and their heartbeats stopped meanwhile."""
        self._trust_silence_at = None

    def spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _beat_forever(self) -> None:
        """A beat every `heartbeat` seconds from the last one's start, whatever the housekeeping costs:
        peers judge this instance by them."""
        loop = asyncio.get_running_loop()
        due = loop.time()
        while True:
            due = max(due + self.timings.heartbeat, loop.time())  # late: beat now, never in a burst
            await asyncio.sleep(due - loop.time())
            try:
                await self.beat()
            except Exception:  # a bug in one beat must not stop the next ones
                logger.exception("cluster heartbeat failed")

    async def beat(self) -> None:
        """Say alive, renew the leases, and start the housekeeping unless the previous one still runs."""
        started = time.monotonic()
        try:
            await self.registry.heartbeat()
            await self.owners.renew()
        except psycopg.OperationalError as exc:
            if self._trust_silence_at is not None:
                logger.warning("cluster heartbeat: the database is unreachable (%s); retrying", exc)
            self._lost_database()
            return
        now = time.monotonic()
        if self._trust_silence_at is None:
            logger.info("cluster heartbeat: the database is back")
            self._trust_silence_at = now + self.timings.settling
        elif now - started > self.timings.heartbeat:  # it waited for the database: so may the peers' beats have
            logger.info(
                "cluster heartbeat took %.1fs: peers' silence not trusted for %gs", now - started, self.timings.settling
            )
            self._trust_silence_at = max(self._trust_silence_at, now + self.timings.settling)
        if self._ticking is None or self._ticking.done():
            self._ticking = asyncio.create_task(self._tick(), name="cluster housekeeping")

    async def _tick(self) -> None:
        for tick in self.on_tick:
            try:
                await tick()
            except psycopg.OperationalError as exc:
                logger.info("cluster housekeeping: the database is unreachable (%s)", exc)
                self._lost_database()
                return
            except Exception:
                logger.exception("cluster housekeeping failed")

    def _dispatch(self, wakeup: Wakeup) -> None:
        if wakeup.kind == "release":
            self.spawn(self.owners.on_release_request(wakeup.subject))
        else:
            self.on_wakeup(wakeup)
