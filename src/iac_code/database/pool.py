"""One connection pool per process and database, opened with the schema brought up to date."""

from __future__ import annotations

import time
from weakref import WeakKeyDictionary

from psycopg import AsyncConnection
from psycopg.rows import TupleRow
from psycopg_pool import AsyncConnectionPool

from iac_code.database.migrate import migrate

Connection = AsyncConnection[TupleRow]
Pool = AsyncConnectionPool[Connection]


# A lost connection is retried with a doubling delay for this long, then the slot is dropped and the next
# caller's demand connects at once. The library's default (5 minutes) lets the delay grow so large that
# a database back after half a minute would wait as long again before anyone reconnected.
RECONNECT_SECONDS = 2.0
_ASYNC_COMMIT = "-c synchronous_commit=off"
RECENTLY_USED_SECONDS = 1.0  # a connection given back this recently is handed out again unchecked


class _Freshness:
    """The pool's check: one empty round trip before handing out a connection, unless it was in use a
    moment ago. Checking every time would double the round trips of a busy server; not checking would
    hand out every connection a database restart killed."""

    def __init__(self) -> None:
        self._returned: WeakKeyDictionary[Connection, float] = WeakKeyDictionary()

    async def returned(self, conn: Connection) -> None:
        self._returned[conn] = time.monotonic()

    async def check(self, conn: Connection) -> None:
        if time.monotonic() - self._returned.get(conn, float("-inf")) > RECENTLY_USED_SECONDS:
            await AsyncConnectionPool.check_connection(conn)


async def open_pool(url: str, *, max_size: int = 10, timeout: float = 10.0, durable: bool = True) -> Pool:
    """A pool of autocommit connections to `url`, after applying any pending migration.

    A connection idle for more than a second is checked before it is handed out (one short round trip), so
    after a database restart callers get a fresh connection instead of a dead one, and reconnection follows demand
    (RECONNECT_SECONDS). Raises psycopg_pool.PoolTimeout when the database cannot be reached within
    `timeout` seconds. `durable=False` commits without waiting for the disk (synchronous_commit off): a
    database crash, not a restart, may lose the last fraction of a second; for data that is transient.
    """
    freshness = _Freshness()
    pool: Pool = AsyncConnectionPool(
        url,
        min_size=1,
        max_size=max_size,
        open=False,
        timeout=timeout,
        # Server-side prepared statements measured slower here (bench/cluster.py, 100 connections: 1.6 s → 1.3 s p50).
        kwargs={"autocommit": True, "prepare_threshold": None, **({} if durable else {"options": _ASYNC_COMMIT})},
        check=freshness.check,
        reset=freshness.returned,
        reconnect_timeout=RECONNECT_SECONDS,
        name="iac-code",
    )
    await pool.open(wait=True, timeout=timeout)
    try:
        async with pool.connection() as conn:
            await migrate(conn)
    except BaseException:
        await pool.close()
        raise
    return pool
