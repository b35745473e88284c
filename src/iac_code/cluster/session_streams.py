"""Which session streams are open, who holds each, and where a closed one's undelivered events go.

A session stream (the HTTP transport's GET with Acp-Session-Id) receives its session's messages while it is
open, whichever instance holds it (events.py routes them by the connection's row). Its entry in
`iac_connections.session_streams` names the instance holding it and how far that one delivered.

- `open`: hold it here. A previous holder elsewhere is woken (`claimed`) and ends its stale reader, as a
  reconnect does in one process. The reader starts after its Last-Event-ID; without one, where the previous
  holder stopped, or, when none holds it, from now on.
- `close`: its reader ended. One transaction holding the connection's row forgets the entry (only if the
  closer still holds it) and moves the events after the reader's position to the connection stream, in
  order, with new ids: the connection stream's reader reads by position, so older ids would be missed, and
  a client reading only the connection stream still gets each message once. A message being logged
  meanwhile waits for the row and then goes to the connection stream; one logged before it is moved.
- `stranded`: entries that no reader will close: their holder is dead, or is this instance, which may no
  longer read them (it restarted, or a close failed while the database was away).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from iac_code.cluster.connections import UnknownConnection
from iac_code.cluster.events import EventLog
from iac_code.cluster.wakeups import notify_owner_sql


@dataclass(frozen=True)
class HeldStream:
    connection_id: str
    stream: str  # the stream's key in the log (events.session_stream)
    holder: str


class SessionStreams:
    def __init__(self, log: EventLog) -> None:
        self.log = log
        self.pool = log.pool
        self.instance_id = log.instance_id

    async def open(self, connection_id: str, stream: str, after: int | None) -> int:
        """Hold `stream` here from the event after `after` (None: see the module's docstring); returns the
        id its reader starts after. Raises UnknownConnection."""
        # `previous` locks the row and sees its newest version, like ConnectionOwnership.claim.
        query = f"""
            WITH previous AS (
                SELECT session_streams -> %(stream)s::text AS entry, last_event_id FROM iac_connections
                WHERE connection_id = %(connection)s FOR UPDATE),
            start AS (
                SELECT coalesce(%(after)s::bigint, (entry ->> 'delivered')::bigint, last_event_id) AS after,
                       entry ->> 'holder' AS holder
                FROM previous),
            opened AS (
                UPDATE iac_connections SET last_seen = now(), session_streams = session_streams
                    || jsonb_build_object(%(stream)s::text, jsonb_build_object(
                        'holder', %(me)s::text, 'delivered', (SELECT after FROM start)))
                WHERE connection_id = %(connection)s RETURNING connection_id)
            SELECT start.after, {notify_owner_sql("claimed", "start.holder")} FROM start, opened"""
        params = {"connection": connection_id, "stream": stream, "after": after, "me": self.instance_id}
        async with self.pool.connection() as conn:
            row = await (await conn.execute(query, params)).fetchone()
        if row is None:
            raise UnknownConnection(connection_id)
        return int(row[0])

    async def close(self, connection_id: str, stream: str, holder: str, after: int | None = None) -> int | None:
        """Close `stream` if `holder` still holds it, moving its events after `after` (the last id its reader
        delivered; None: the position the holder last recorded) to the connection stream. Returns how many
        moved; None when `holder` no longer held it (superseded, closed, or the connection is gone)."""
        async with self.pool.connection() as conn, conn.transaction():
            cursor = await conn.execute(
                "SELECT session_streams -> %s::text FROM iac_connections WHERE connection_id = %s FOR UPDATE",
                [stream, connection_id],
            )
            row = await cursor.fetchone()
            entry: Any = row[0] if row is not None else None
            if not isinstance(entry, dict) or entry.get("holder") != holder:
                return None
            # Later statements see every event logged before this transaction got the row: they held it.
            query = """
                WITH closed AS (
                    UPDATE iac_connections SET session_streams = session_streams - %(stream)s::text
                    WHERE connection_id = %(connection)s)
                DELETE FROM iac_events WHERE connection_id = %(connection)s AND stream = %(stream)s
                                         AND event_id > %(after)s
                RETURNING event_id, message::text"""
            position = int(entry["delivered"]) if after is None else after
            params = {"connection": connection_id, "stream": stream, "after": position}
            moved = sorted(await (await conn.execute(query, params)).fetchall())
            if moved:
                await self.log.append_moved(conn, connection_id, [text for _, text in moved])
        return len(moved)

    async def held_here(self, connection_ids: Sequence[str]) -> set[tuple[str, str]]:
        """(connection id, stream) of these connections' session streams the database says this instance holds."""
        query = """
            SELECT c.connection_id, s.key FROM iac_connections c, jsonb_each(c.session_streams) s
            WHERE c.connection_id = ANY(%(ids)s) AND s.value ->> 'holder' = %(me)s"""
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(query, {"ids": list(connection_ids), "me": self.instance_id})).fetchall()
        return {(row[0], row[1]) for row in rows}

    async def stranded(self, grace: float) -> list[HeldStream]:
        """Session streams held by an instance silent for `grace` seconds (or gone), or by this one."""
        query = """
            SELECT c.connection_id, s.key, s.value ->> 'holder'
            FROM iac_connections c, jsonb_each(c.session_streams) s
            WHERE c.session_streams <> '{}' AND (s.value ->> 'holder' = %(me)s OR NOT EXISTS (
                SELECT 1 FROM iac_instances i WHERE i.instance_id = s.value ->> 'holder'
                AND i.last_seen > now() - make_interval(secs => %(grace)s)))
            ORDER BY 1, 2"""
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(query, {"grace": grace, "me": self.instance_id})).fetchall()
        return [HeldStream(*row) for row in rows]
