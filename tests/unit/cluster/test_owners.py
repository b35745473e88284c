"""Session owners across instances: a connection takes a session's lease first; a live holder lets an idle
session go when asked, keeps a busy one; a dead holder's lease is waited out; a lease lost is dropped."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
import pytest

from iac_code.cluster.leases import SessionLeases
from iac_code.cluster.node import ClusterNode
from iac_code.cluster.owners import LeasedSessionOwners
from iac_code.config import Settings
from iac_code.database.pool import Pool
from iac_code.errors import InvalidParams, Unavailable
from iac_code.host.residency import Residency


class FakeSession:
    def __init__(self, session_id: str, busy: bool = False) -> None:
        self.id = session_id
        self.busy = busy
        self.flushed = False
        self.closed = False

    async def flush(self) -> None:
        self.flushed = True

    async def close(self) -> None:
        self.closed = True

    def release(self) -> None:  # a dropped session stops its MCP servers; this one has none
        pass


@asynccontextmanager
async def node(pg_url: str, name: str, lease: float = 1.0) -> AsyncIterator[ClusterNode]:
    settings = Settings(database_url=pg_url, instance_id=name, heartbeat_seconds=0.1, lease_seconds=lease)
    opened = await ClusterNode.open(settings)
    opened.start()
    try:
        yield opened
    finally:
        await opened.close()


def residency(owners: LeasedSessionOwners) -> Residency:
    return Residency(60, owners=owners)


async def hold(conn: Residency, session: FakeSession) -> None:
    await conn.claim(session.id)
    conn.add(session)  # type: ignore[arg-type]


async def test_a_session_is_leased_while_held_and_free_once_forgotten(pool: Pool, pg_url: str) -> None:
    async with node(pg_url, "a") as a:
        conn = residency(a.owners)
        await hold(conn, FakeSession("s1"))
        assert await a.owners.leases.holder("s1") == "a"
        conn.forget("s1")
        await a.owners.close()  # the release runs in the background
        assert await a.owners.leases.holder("s1") is None


async def test_an_id_no_session_can_have_takes_no_lease(pool: Pool, pg_url: str) -> None:
    # session/delete claims before the store checks the id; alone the server then answers it. An id holding
    # U+0000 (which PostgreSQL's text cannot hold) must not fail the claim nor the release behind it.
    async with node(pg_url, "a") as a:
        conn = residency(a.owners)
        await conn.claim("no\x00such")
        conn.forget("no\x00such")
        await a.owners.renew()
        await a.owners.close()
        async with pool.connection() as db:
            assert await (await db.execute("SELECT * FROM iac_leases")).fetchall() == []


async def test_a_live_holder_hands_over_an_idle_session_and_keeps_a_busy_one(pool: Pool, pg_url: str) -> None:
    async with node(pg_url, "a") as a, node(pg_url, "b") as b:
        b.owners._release_wait = 0.5
        on_a = residency(a.owners)
        idle, busy = FakeSession("idle"), FakeSession("busy", busy=True)
        for session in (idle, busy):
            await hold(on_a, session)
        on_b = residency(b.owners)
        await on_b.claim("idle")
        assert idle.flushed and "idle" not in on_a.live
        assert await b.owners.leases.holder("idle") == "b"
        with pytest.raises(InvalidParams) as refused:
            await on_b.claim("busy")
        assert "another instance" in str(refused.value.data)
        assert "busy" in on_a.live and await a.owners.leases.holder("busy") == "a"


async def test_a_dead_holders_lease_is_waited_out_then_taken(pool: Pool, pg_url: str) -> None:
    await SessionLeases(pool, "dead", ttl=0.5).acquire("s1")  # and never renewed
    async with node(pg_url, "b") as b:
        started = asyncio.get_running_loop().time()
        await residency(b.owners).claim("s1")
        assert 0.3 < asyncio.get_running_loop().time() - started < 3
        assert await b.owners.leases.holder("s1") == "b"


async def test_a_session_whose_lease_was_taken_over_is_dropped(pool: Pool, pg_url: str) -> None:
    async with node(pg_url, "a", lease=1.0) as a:
        conn = residency(a.owners)
        session = FakeSession("s1")
        await hold(conn, session)
        async with pool.connection() as db:  # as if a had been cut off long enough for b to take it
            await db.execute("UPDATE iac_leases SET holder = 'b', generation = generation + 1")
        await a.owners.renew()
        assert "s1" not in conn.live
        await a.owners.close()
        assert session.closed


class UnreachableLeases(SessionLeases):
    def __init__(self) -> None:
        pass  # no pool: every call fails as with the database gone

    async def acquire(self, session_id: str) -> None:
        raise psycopg.OperationalError("connection refused")


async def test_an_unreachable_database_is_a_neutral_unavailable_error() -> None:
    owners = LeasedSessionOwners(UnreachableLeases(), instance_max_age=1.0)
    with pytest.raises(Unavailable) as refused:
        await owners.reserve("sess_0123456789abcdef0123456789abcdef")
    assert refused.value.data == {"database": "unreachable; retry later"}
