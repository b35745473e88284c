"""The wake-up listener survives losing its database connection and says it may have missed some."""

from __future__ import annotations

import asyncio

import psycopg

from iac_code.cluster.connections import ConnectionOwnership
from iac_code.cluster.inbound import InboundQueue
from iac_code.cluster.wakeups import Wakeup, channel, parse
from iac_code.database.pool import Pool

from .wakeups import listening


async def test_after_losing_its_connection_the_listener_resyncs_and_listens_again(pool: Pool, pg_url: str) -> None:
    await ConnectionOwnership(pool, "owner").open("c1")
    async with listening(pg_url, "owner") as heard:
        async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as admin:
            await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%'"
                " AND datname = current_database()"
            )
        assert await heard.next() == Wakeup("resync", "")
        await InboundQueue(pool, "other").push("c1", {"jsonrpc": "2.0", "id": 1, "method": "m"})
        assert await heard.next() == Wakeup("inbound", "c1")


def test_payloads_that_are_not_wakeups_are_ignored() -> None:
    assert parse("event c1") == Wakeup("event", "c1")
    assert parse("closed c1") == Wakeup("closed", "c1") and parse("release s1") == Wakeup("release", "s1")
    assert parse("event") is None and parse("reboot c1") is None
    assert parse("resync c1") is None, "only the listener itself makes a resync"
    assert channel("abc") == "iac_abc"


async def test_start_returns_only_once_listening(pg_url: str) -> None:
    async with listening(pg_url, "x") as heard:
        async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
            await conn.execute("SELECT pg_notify('iac_x', 'inbound c9')")
        assert await asyncio.wait_for(heard.next(), 5) == Wakeup("inbound", "c9")
