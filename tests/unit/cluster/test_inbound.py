"""Inbound requests for a connection owned elsewhere: queued in order, taken once, the owner woken."""

from __future__ import annotations

import asyncio

import pytest

from iac_code.cluster.connections import ConnectionOwnership, UnknownConnection
from iac_code.cluster.inbound import InboundQueue
from iac_code.cluster.wakeups import Wakeup
from iac_code.database.pool import Pool

from .wakeups import listening


def request(n: int) -> dict:
    return {"jsonrpc": "2.0", "id": n, "method": "session/prompt", "params": {"n": n}}


async def test_a_post_on_another_instance_reaches_the_owner_in_order(pool: Pool, pg_url: str) -> None:
    await ConnectionOwnership(pool, "owner").open("c1")
    async with listening(pg_url, "owner") as heard:
        for n in range(3):
            await InboundQueue(pool, "other").push("c1", request(n))
        assert await heard.next() == Wakeup("inbound", "c1")
    owner = InboundQueue(pool, "owner")
    assert await owner.take("c1") == [request(0), request(1), request(2)]
    assert await owner.take("c1") == []


async def test_concurrent_takers_never_get_the_same_message(pool: Pool) -> None:
    await ConnectionOwnership(pool, "owner").open("c1")
    queue = InboundQueue(pool, "owner")
    for n in range(40):
        await queue.push("c1", request(n))
    batches = await asyncio.gather(*(queue.take("c1", limit=7) for _ in range(8)))
    taken = [message["id"] for batch in batches for message in batch]
    assert sorted(taken) == list(range(40))
    assert all(batch == sorted(batch, key=lambda m: m["id"]) for batch in batches)


async def test_a_push_for_an_unknown_connection_is_refused(pool: Pool) -> None:
    with pytest.raises(UnknownConnection):
        await InboundQueue(pool, "a").push("nope", request(1))


async def test_a_message_posted_to_the_host_follows_what_was_queued_and_is_in_flight(pool: Pool) -> None:
    await ConnectionOwnership(pool, "host").open("c1")
    for n in (1, 2):
        await InboundQueue(pool, "other").push("c1", request(n))
    host = InboundQueue(pool, "host")
    assert await host.take_before("c1", request(3)) == [request(1), request(2)]
    assert await host.take_before("c1", {"jsonrpc": "2.0", "method": "session/cancel", "params": {}}) == []
    async with pool.connection() as conn:
        keys = await (await conn.execute("SELECT request_key FROM iac_inflight ORDER BY request_key")).fetchall()
    assert [key for (key,) in keys] == ['"1"', '"2"', '"3"']  # JSON text: an id may hold U+0000
    with pytest.raises(UnknownConnection):
        await host.take_before("nope", request(4))


async def test_messages_holding_nul_characters_are_taken_unchanged_and_tracked(pool: Pool) -> None:
    # PostgreSQL's text and jsonb cannot hold U+0000; any JSON-RPC message may (a pasted prompt, a file).
    await ConnectionOwnership(pool, "host").open("c1")
    prompt = {"jsonrpc": "2.0", "id": "p\x00", "method": "session/prompt", "params": {"text": "a\x00b", "\x00": 1}}
    answer = {"jsonrpc": "2.0", "id": 7, "result": {"outcome": "\x00"}}
    posted = {"jsonrpc": "2.0", "id": 2.5, "method": "x\x00", "params": {}}
    for message in (prompt, answer):
        await InboundQueue(pool, "other").push("c1", message)
    host = InboundQueue(pool, "host")
    assert await host.take_before("c1", posted) == [prompt, answer]
    await InboundQueue(pool, "other").push("c1", prompt)
    assert await host.take("c1") == [prompt]
    async with pool.connection() as conn:
        rows = await (await conn.execute("SELECT request_key, request_id::text FROM iac_inflight")).fetchall()
    assert sorted(rows) == [('"2.5"', "2.5"), ('"p\\u0000"', '"p\\u0000"')]  # requests only, each once
