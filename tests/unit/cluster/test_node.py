"""When an instance trusts its peers' silence (and may adopt their connections): only after its own heartbeats
have gone through for a while since it last found the database unreachable, by whatever path."""

import asyncio
import time
from collections.abc import AsyncIterator

import psycopg
import pytest

from iac_code.cluster.node import ClusterNode, DatabaseUnreachable
from iac_code.config import Settings

HEARTBEAT = 0.1


@pytest.fixture
async def node(pg_url: str) -> AsyncIterator[ClusterNode]:
    settings = Settings(database_url=pg_url, instance_id="n", heartbeat_seconds=HEARTBEAT, lease_seconds=1.0)
    opened = await ClusterNode.open(settings)
    opened.start()
    yield opened
    await opened.close()


async def _settled(node: ClusterNode, within: float) -> bool:
    deadline = time.monotonic() + within
    while not node.settled and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return node.settled


async def test_a_request_that_lost_the_database_unsettles_until_heartbeats_have_gone_through_long_enough(node):
    assert await _settled(node, node.timings.instance_max_age + 1)
    with pytest.raises(DatabaseUnreachable), node.database_required():
        raise psycopg.OperationalError("server closed the connection unexpectedly")
    assert not node.settled  # the heartbeats never failed, but the peers' may have: their silence means nothing
    await asyncio.sleep(3 * HEARTBEAT)  # a beat goes through: the settling time starts from it
    assert not node.settled
    assert await _settled(node, node.timings.settling + 1)


async def test_a_heartbeat_that_waited_for_the_database_unsettles(node, monkeypatch):
    assert await _settled(node, node.timings.instance_max_age + 1)
    heartbeat = node.registry.heartbeat

    async def slow_heartbeat() -> None:
        await asyncio.sleep(2 * HEARTBEAT)
        await heartbeat()

    monkeypatch.setattr(node.registry, "heartbeat", slow_heartbeat)
    await node.beat()
    assert not node.settled
