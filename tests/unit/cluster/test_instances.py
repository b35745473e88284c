"""The instance registry: heartbeats register, silence past max_age is death, the dead are reaped."""

from __future__ import annotations

import asyncio

import pytest

from iac_code.cluster.instances import InstanceRegistry
from iac_code.database.pool import Pool


async def test_a_heartbeat_registers_and_keeps_an_instance_alive(pool: Pool) -> None:
    a = InstanceRegistry(pool, "a", info={"host": "h1", "pid": 1})
    b = InstanceRegistry(pool)  # a generated id
    await a.heartbeat()
    await b.heartbeat()
    live = await a.live(max_age=10)
    assert [i.instance_id for i in live] == ["a", b.instance_id]
    assert live[0].info == {"host": "h1", "pid": 1} and live[0].last_seen >= live[0].started_at
    assert await b.is_live("a", max_age=10) and not await b.is_live("nobody", max_age=10)


async def test_silence_past_max_age_is_death_and_the_dead_are_reaped(pool: Pool) -> None:
    quiet, busy = InstanceRegistry(pool, "quiet"), InstanceRegistry(pool, "busy")
    await quiet.heartbeat()
    await asyncio.sleep(0.3)
    await busy.heartbeat()
    assert [i.instance_id for i in await busy.live(max_age=0.2)] == ["busy"]
    assert await busy.reap(max_age=0.2) == ["quiet"]
    await quiet.heartbeat()  # back from the dead: a beat registers again
    assert await busy.is_live("quiet", max_age=0.2)


async def test_deregister_removes_at_once(pool: Pool) -> None:
    a = InstanceRegistry(pool, "a")
    await a.heartbeat()
    await a.deregister()
    assert await a.live(max_age=60) == []


@pytest.mark.parametrize("bad", ["", "UPPER", "with-dash", "x" * 49, "a;drop"])
def test_instance_ids_must_be_channel_safe(pool: Pool, bad: str) -> None:
    with pytest.raises(ValueError):
        InstanceRegistry(pool, bad)
