"""Connection ownership: claims, the previous owner woken, release, expiry, orphans of dead instances."""

from __future__ import annotations

import asyncio

import pytest

from iac_code.cluster.connections import ConnectionOwnership, UnknownConnection
from iac_code.cluster.events import EventLog
from iac_code.cluster.inbound import InboundQueue
from iac_code.cluster.instances import InstanceRegistry
from iac_code.cluster.wakeups import Wakeup
from iac_code.database.pool import Pool

from .wakeups import listening


async def test_claiming_a_new_connection_creates_it(pool: Pool) -> None:
    a = ConnectionOwnership(pool, "a")
    assert await a.claim("c1") is None
    assert await a.owner("c1") == "a"
    assert await a.claim("c1") == "a"  # claiming again is harmless
    with pytest.raises(UnknownConnection):
        await a.owner("c2")


async def test_a_claim_from_another_instance_wakes_the_previous_owner(pool: Pool, pg_url: str) -> None:
    a, b = ConnectionOwnership(pool, "a"), ConnectionOwnership(pool, "b")
    await a.claim("c1")
    async with listening(pg_url, "a") as heard_by_a, listening(pg_url, "b") as heard_by_b:
        assert await b.claim("c1") == "a"
        assert await heard_by_a.next() == Wakeup("claimed", "c1")
        assert await heard_by_b.nothing()
    assert await a.owner("c1") == "b"


async def test_release_only_gives_up_what_is_still_ours(pool: Pool) -> None:
    a, b = ConnectionOwnership(pool, "a"), ConnectionOwnership(pool, "b")
    await a.claim("c1")
    await b.claim("c1")
    await a.release("c1")  # too late: b holds it
    assert await a.owner("c1") == "b"
    await b.release("c1")
    assert await a.owner("c1") is None


async def test_forget_removes_the_connection_with_its_events_and_inbound(pool: Pool) -> None:
    a = ConnectionOwnership(pool, "a")
    await a.claim("c1")
    await EventLog(pool, "a").append("c1", "", {"jsonrpc": "2.0", "method": "x"})
    await InboundQueue(pool, "b").push("c1", {"jsonrpc": "2.0", "id": 1, "method": "y"})
    await a.forget("c1")
    with pytest.raises(UnknownConnection):
        await a.owner("c1")
    async with pool.connection() as conn:
        counts = await (
            await conn.execute("SELECT (SELECT count(*) FROM iac_events), (SELECT count(*) FROM iac_inbound)")
        ).fetchone()
    assert counts == (0, 0)


async def test_idle_connections_expire_and_touch_keeps_them(pool: Pool) -> None:
    a = ConnectionOwnership(pool, "a")
    for connection_id in ("idle", "busy"):
        await a.claim(connection_id)
    await asyncio.sleep(0.3)
    await a.touch(["busy"])
    assert await a.expire_idle(max_idle=0.2) == ["idle"]
    assert await a.owner("busy") == "a"


async def test_orphans_are_connections_whose_owner_is_dead_or_missing(pool: Pool) -> None:
    alive, dead = InstanceRegistry(pool, "alive"), InstanceRegistry(pool, "dead")
    await dead.heartbeat()
    await asyncio.sleep(0.3)
    await alive.heartbeat()
    for owner, connection_id in (("alive", "c_alive"), ("dead", "c_dead"), ("alive", "c_released")):
        await ConnectionOwnership(pool, owner).claim(connection_id)
    await ConnectionOwnership(pool, "alive").release("c_released")
    assert await ConnectionOwnership(pool, "alive").orphans(max_age=0.2) == ["c_dead", "c_released"]
