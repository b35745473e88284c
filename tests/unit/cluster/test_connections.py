"""Connections: host and owner, claims waking the previous owner, release, close and expiry waking both,
orphans of dead instances adopted once with their unanswered requests, and what the database still grants."""

from __future__ import annotations

import asyncio

import pytest

from iac_code.cluster.connections import Adopted, ConnectionOwnership, Standing, UnknownConnection
from iac_code.cluster.events import EventLog, session_stream
from iac_code.cluster.inbound import InboundQueue
from iac_code.cluster.instances import InstanceRegistry
from iac_code.cluster.session_streams import SessionStreams
from iac_code.cluster.wakeups import Wakeup
from iac_code.database.pool import Pool

from .wakeups import listening


def request(n: int | str, method: str = "session/prompt") -> dict:
    return {"jsonrpc": "2.0", "id": n, "method": method, "params": {}}


async def test_opening_makes_the_instance_host_and_owner_and_claims_need_an_existing_connection(pool: Pool) -> None:
    a = ConnectionOwnership(pool, "a")
    await a.open("c1")
    assert await a.owner("c1") == "a"
    assert await a.claim("c1") == "a"  # claiming again is harmless
    with pytest.raises(UnknownConnection):
        await a.claim("c2")
    with pytest.raises(UnknownConnection):
        await a.owner("c2")
    assert await a.exists("c1") and not await a.exists("c2")


async def test_a_claim_from_another_instance_wakes_the_previous_owner(pool: Pool, pg_url: str) -> None:
    a, b = ConnectionOwnership(pool, "a"), ConnectionOwnership(pool, "b")
    await a.open("c1")
    async with listening(pg_url, "a") as heard_by_a, listening(pg_url, "b") as heard_by_b:
        assert await b.claim("c1") == "a"
        assert await heard_by_a.next() == Wakeup("claimed", "c1")
        assert await heard_by_b.nothing()
    assert await a.owner("c1") == "b"


async def test_release_only_gives_up_what_is_still_ours(pool: Pool) -> None:
    a, b = ConnectionOwnership(pool, "a"), ConnectionOwnership(pool, "b")
    await a.open("c1")
    await b.claim("c1")
    await a.release("c1")  # too late: b holds it
    assert await a.owner("c1") == "b"
    await b.release("c1")
    assert await a.owner("c1") is None


async def test_forget_removes_the_connection_with_its_rows_and_wakes_host_owner_and_holders(
    pool: Pool, pg_url: str
) -> None:
    host, owner, closer = (ConnectionOwnership(pool, name) for name in ("host", "owner", "closer"))
    await host.open("c1")
    await owner.claim("c1")
    await SessionStreams(EventLog(pool, "holder")).open("c1", session_stream("s1"), None)
    await EventLog(pool, "host").append("c1", {"jsonrpc": "2.0", "method": "x"})
    await InboundQueue(pool, "closer").push("c1", request(1))
    async with (
        listening(pg_url, "host") as heard_by_host,
        listening(pg_url, "owner") as heard_by_owner,
        listening(pg_url, "holder") as heard_by_holder,
    ):
        assert await closer.forget("c1")
        for heard in (heard_by_host, heard_by_owner, heard_by_holder):
            assert await heard.next() == Wakeup("closed", "c1")
    assert not await closer.forget("c1")
    with pytest.raises(UnknownConnection):
        await host.owner("c1")
    async with pool.connection() as conn:
        counts = await (
            await conn.execute("SELECT (SELECT count(*) FROM iac_events), (SELECT count(*) FROM iac_inbound)")
        ).fetchone()
    assert counts == (0, 0)


async def test_idle_connections_expire_waking_their_host_and_posts_keep_them(pool: Pool, pg_url: str) -> None:
    a = ConnectionOwnership(pool, "a")
    for connection_id in ("idle", "touched", "posted"):
        await a.open(connection_id)
    await asyncio.sleep(0.3)
    await a.touch(["touched"])
    await InboundQueue(pool, "b").push("posted", request(1))
    async with listening(pg_url, "a") as heard:
        assert await ConnectionOwnership(pool, "b").expire_idle(max_idle=0.2) == ["idle"]
        assert await heard.next() == Wakeup("closed", "idle")
    assert await a.exists("touched") and await a.exists("posted")


async def test_orphans_are_connections_whose_owner_is_dead_or_missing(pool: Pool) -> None:
    alive, dead = InstanceRegistry(pool, "alive"), InstanceRegistry(pool, "dead")
    await dead.heartbeat()
    await asyncio.sleep(0.3)
    await alive.heartbeat()
    for owner, connection_id in (("alive", "c_alive"), ("dead", "c_dead"), ("alive", "c_released")):
        await ConnectionOwnership(pool, owner).open(connection_id)
    await ConnectionOwnership(pool, "alive").release("c_released")
    assert await ConnectionOwnership(pool, "alive").orphans(max_age=0.2) == ["c_dead", "c_released"]


async def test_a_dead_hosts_used_connections_are_adopted_once_with_their_unanswered_requests(pool: Pool) -> None:
    dead, alive = InstanceRegistry(pool, "dead"), InstanceRegistry(pool, "alive")
    await dead.heartbeat()
    for connection_id in ("streamed", "posted", "unused", "answered"):
        await ConnectionOwnership(pool, "dead").open(connection_id)
    await ConnectionOwnership(pool, "alive").claim("streamed")  # its stream is held by the survivor
    await ConnectionOwnership(pool, "alive").claim("answered")
    dead_queue = InboundQueue(pool, "dead")
    # U+0000 in ids and params: PostgreSQL never has to read a message (it could not).
    taken = (("streamed", request(7)), ("streamed", request("x\x00")), ("answered", request("\x00")))
    for connection_id, message in taken:
        await dead_queue.push(connection_id, message)
        await dead_queue.take(connection_id)  # the dead host took them…
    await dead_queue.push("streamed", {"jsonrpc": "2.0", "method": "session/cancel", "params": {}})
    await dead_queue.take("streamed")  # … a notification is never in flight
    await EventLog(pool, "dead").append("answered", {"jsonrpc": "2.0", "id": "\x00", "result": {}})  # … answered one
    await InboundQueue(pool, "alive").push("posted", request(2))  # waiting for a host that will not take it
    # The window is wide so that the survivors' own heartbeats stay fresh on a loaded machine.
    await asyncio.sleep(1.2)
    await alive.heartbeat()
    await InstanceRegistry(pool, "other").heartbeat()

    survivors = [ConnectionOwnership(pool, "alive"), ConnectionOwnership(pool, "other")]
    adopted = await asyncio.gather(*(s.adopt_orphans(max_age=1.0) for s in survivors))
    everything = sorted((a for batch in adopted for a in batch), key=lambda a: a.connection_id)
    assert [a.connection_id for a in everything] == ["answered", "posted", "streamed"]
    by_id = {a.connection_id: a for a in everything}
    assert sorted(by_id["streamed"].interrupted, key=str) == [7, "x\x00"]
    assert by_id["answered"] == Adopted("answered", []) and by_id["posted"] == Adopted("posted", [])
    assert await survivors[0].adopt_orphans(max_age=1.0) == []  # the adopters are alive


async def test_standing_tells_what_the_database_still_grants(pool: Pool) -> None:
    a, b = ConnectionOwnership(pool, "a"), ConnectionOwnership(pool, "b")
    for connection_id in ("kept", "moved", "closed"):
        await a.open(connection_id)
    await b.claim("moved")
    await b.forget("closed")
    assert await a.standing(["kept", "moved", "closed"]) == Standing({"kept", "moved"}, {"kept"})
