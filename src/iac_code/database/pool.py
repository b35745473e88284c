"""One connection pool per process and database, opened with the schema brought up to date."""

from __future__ import annotations

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


async def open_pool(url: str, *, max_size: int = 10, timeout: float = 10.0) -> Pool:
    """A pool of autocommit connections to `url`, after applying any pending migration.

    Every connection is checked before it is handed out (one short round trip), so after a database
    restart callers get a fresh connection instead of a dead one, and reconnection follows demand
    (RECONNECT_SECONDS). Raises psycopg_pool.PoolTimeout when the database cannot be reached within
    `timeout` seconds.
    """
    pool: Pool = AsyncConnectionPool(
        url,
        min_size=1,
        max_size=max_size,
        open=False,
        timeout=timeout,
        kwargs={"autocommit": True},
        check=AsyncConnectionPool.check_connection,
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
