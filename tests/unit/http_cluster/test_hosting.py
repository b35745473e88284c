"""A hosted connection's take of what was POSTed elsewhere outlives the database going away: a failed take
is tried again (the wake-up that started it may be the only one), and nothing is taken twice or lost."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg

from iac_code.http_cluster.hosting import HostedConnection


class FlakyInbound:
    """Queued messages that can only be taken once `failures` takes have failed as if the database were away."""

    def __init__(self, messages: list[dict[str, Any]], failures: int) -> None:
        self.messages = messages
        self.failures = failures
        self.takes = 0

    async def take(self, connection_id: str, limit: int) -> list[dict[str, Any]]:
        self.takes += 1
        if self.failures:
            self.failures -= 1
            raise psycopg.OperationalError("the database system is shutting down")
        taken, self.messages = self.messages[:limit], self.messages[limit:]
        return taken


def hosted(inbound: FlakyInbound) -> HostedConnection:
    return HostedConnection("c1", log=None, inbound=inbound, deliver=lambda *_: None, stall_seconds=5)  # type: ignore[arg-type]


def notification(n: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": f"s{n}"}}


async def test_a_take_that_fails_is_tried_again_until_the_messages_reach_the_agent() -> None:
    inbound = FlakyInbound([notification(1), notification(2)], failures=3)
    conn = hosted(inbound)
    conn.drain_soon()
    received = [await asyncio.wait_for(conn.receive(), 5) for _ in range(2)]
    assert received == [notification(1), notification(2)]
    assert inbound.takes == 4


async def test_a_closed_connection_stops_trying() -> None:
    inbound = FlakyInbound([notification(1)], failures=10**6)
    conn = hosted(inbound)
    conn.drain_soon()
    await asyncio.sleep(0.05)
    conn.shutdown("closed by the test")
    assert conn._drain_task is not None
    await asyncio.wait_for(conn._drain_task, 5)
    assert inbound.messages == [notification(1)]
