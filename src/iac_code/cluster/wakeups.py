"""LISTEN/NOTIFY: each instance listens on its own channel; writers wake the owner of a connection.

A wake-up carries no data, only "look at connection X" (or session X): the tables hold the truth, so a lost or
duplicated notification costs a query, never a message. Notifications are sent by the writing
statement itself (`notify_owner_sql`) and delivered when it commits. When the listening connection
drops, notifications sent meanwhile are gone: after reconnecting the listener reports a `resync`,
and the owner re-reads everything it owns.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeGuard

import psycopg
from psycopg import sql

from iac_code.cluster.instances import check_instance_id

logger = logging.getLogger(__name__)

WakeupKind = Literal["event", "inbound", "claimed", "closed", "release", "resync"]
_KINDS = frozenset({"event", "inbound", "claimed", "closed", "release"})
CHANNEL_PREFIX = "iac_"
RECONNECT_SECONDS = (0.1, 0.5, 1.0, 2.0, 5.0)


@dataclass(frozen=True)
class Wakeup:
    """About connection `subject`: `event`: new events to deliver; `inbound`: POSTed messages to take;
    `claimed`: another instance took one of its streams (end yours); `closed`: it was closed or expired.
    About session `subject`: `release`: another instance wants it (give its lease up if it is idle).
    `resync` (subject ''): notifications may have been missed."""

    kind: WakeupKind
    subject: str


def channel(instance_id: str) -> str:
    return CHANNEL_PREFIX + check_instance_id(instance_id)


def notify_owner_sql(kind: WakeupKind, owner_column: str = "owner") -> str:
    """A SQL expression waking `owner_column`'s instance about the connection in parameter %(connection)s,
    unless that owner is NULL or the writer itself (parameter %(me)s)."""
    return (
        f"CASE WHEN {owner_column} IS NOT NULL AND {owner_column} <> %(me)s"
        f" THEN pg_notify('{CHANNEL_PREFIX}' || {owner_column}, '{kind} ' || %(connection)s) END"
    )


def parse(payload: str) -> Wakeup | None:
    kind, _, subject = payload.partition(" ")
    if not _is_kind(kind) or not subject:
        return None
    return Wakeup(kind, subject)


def _is_kind(kind: str) -> TypeGuard[WakeupKind]:
    """A kind another instance may send (`resync` is only ever made here)."""
    return kind in _KINDS


class WakeupListener:
    """One dedicated connection (not from the pool: LISTEN belongs to a session) delivering this
    instance's wake-ups to `on_wakeup`, reconnecting by itself when the database goes away."""

    def __init__(self, url: str, instance_id: str, on_wakeup: Callable[[Wakeup], None]) -> None:
        self.url = url
        self.channel = channel(instance_id)
        self.on_wakeup = on_wakeup
        self.listening = asyncio.Event()  # set while LISTEN is in force
        self._task: asyncio.Task[None] | None = None

    async def start(self, timeout: float = 10.0) -> None:
        """Listen; returns once LISTEN is in force (so no later write is missed)."""
        self._task = asyncio.create_task(self._run(), name=f"wakeups {self.channel}")
        async with asyncio.timeout(timeout):
            await self.listening.wait()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        failures = 0
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as conn:
                    await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
                    self.listening.set()
                    if failures:
                        self.on_wakeup(Wakeup("resync", ""))
                    failures = 0
                    async for notification in conn.notifies():
                        wakeup = parse(notification.payload)
                        if wakeup is not None:
                            self.on_wakeup(wakeup)
            except psycopg.OperationalError as exc:
                self.listening.clear()
                delay = RECONNECT_SECONDS[min(failures, len(RECONNECT_SECONDS) - 1)]
                failures += 1
                logger.warning("wake-up listener lost the database (%s); retrying in %gs", exc, delay)
                await asyncio.sleep(delay)
