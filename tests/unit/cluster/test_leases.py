"""Session leases: one holder at a time, renewal, takeover after expiry with a new generation, release."""

from __future__ import annotations

import asyncio

from iac_code.cluster.instances import InstanceRegistry
from iac_code.cluster.leases import SessionLeases
from iac_code.cluster.wakeups import Wakeup
from iac_code.database.pool import Pool

from .wakeups import listening


async def test_one_holder_at_a_time_and_reacquiring_renews(pool: Pool) -> None:
    a, b = SessionLeases(pool, "a", ttl=30), SessionLeases(pool, "b", ttl=30)
    first = await a.acquire("s1")
    assert first is not None and first.generation == 1 and first.taken_over_from is None
    assert await b.acquire("s1") is None
    again = await a.acquire("s1")
    assert again is not None and again.generation == 1 and again.expires_at >= first.expires_at
    assert await b.holder("s1") == "a"


async def test_an_expired_lease_is_taken_over_and_its_old_holder_learns_it(pool: Pool) -> None:
    a, b = SessionLeases(pool, "a", ttl=0.2), SessionLeases(pool, "b", ttl=30)
    await a.acquire("s1")
    await a.acquire("s2")
    await asyncio.sleep(0.3)
    assert await b.holder("s1") is None
    lease = await b.acquire("s1")
    assert lease is not None and lease.generation == 2 and lease.taken_over_from == "a"
    assert await a.renew(["s1", "s2"]) == {"s2"}  # s1 is b's now: a must stop running it
    assert await a.acquire("s1") is None


async def test_renewal_keeps_a_lease_past_its_first_ttl(pool: Pool) -> None:
    a, b = SessionLeases(pool, "a", ttl=0.4), SessionLeases(pool, "b", ttl=30)
    await a.acquire("s1")
    for _ in range(3):
        await asyncio.sleep(0.2)
        assert await a.renew(["s1"]) == {"s1"}
    assert await b.acquire("s1") is None


async def test_release_frees_the_lease_and_only_for_its_holder(pool: Pool) -> None:
    a, b = SessionLeases(pool, "a", ttl=30), SessionLeases(pool, "b", ttl=30)
    await a.acquire("s1")
    await b.release("s1")  # not b's to give
    assert await b.holder("s1") == "a"
    await a.release("s1")
    lease = await b.acquire("s1")
    assert lease is not None and lease.taken_over_from is None


async def test_racing_instances_elect_exactly_one_holder(pool: Pool) -> None:
    contenders = [SessionLeases(pool, f"i{n}", ttl=30) for n in range(6)]
    won = await asyncio.gather(*(c.acquire("s1") for c in contenders))
    winners = [c.instance_id for c, lease in zip(contenders, won, strict=True) if lease is not None]
    assert len(winners) == 1 and await contenders[0].holder("s1") == winners[0]


async def test_a_live_holder_is_asked_to_release_and_a_dead_one_is_not(pool: Pool, pg_url: str) -> None:
    a, b = SessionLeases(pool, "a", ttl=30), SessionLeases(pool, "b", ttl=30)
    await a.acquire("s1")
    assert await b.ask_holder_to_release("s1", max_age=5) == ("a", False)  # no heartbeat yet: dead
    await InstanceRegistry(pool, "a").heartbeat()
    async with listening(pg_url, "a") as heard:
        assert await b.ask_holder_to_release("s1", max_age=5) == ("a", True)
        assert await heard.next() == Wakeup("release", "s1")
        assert await a.ask_holder_to_release("s1", max_age=5) == (None, False)  # nobody else holds it
    assert await b.ask_holder_to_release("s2", max_age=5) == (None, False)
