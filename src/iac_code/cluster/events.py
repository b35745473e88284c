"""Each connection's event log in the database: the SSE ids and the replay window every instance shares.

An event gets the connection's next id, is stored with its stream ('' = the connection stream, else a
session id) and wakes the connection's owner. Retention keeps the newest `max_events` per connection
(trimmed by the writing statement itself) and nothing older than `max_age` (`trim_expired`, run
periodically by any instance). What retention removes is remembered per stream, so a reader
reconnecting with an older Last-Event-ID is told which ids it lost instead of silently missing them.
The owner records how far it delivered the connection stream, where a reader without Last-Event-ID
starts. Logging a response ends its request's time in flight (inbound.py). Messages are stored as JSON
text (database/json_text.py) and never read by SQL: U+0000 is anywhere a client or a model put it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from iac_code.cluster.connections import UnknownConnection
from iac_code.cluster.wakeups import notify_owner_sql
from iac_code.database.json_text import from_json_text, to_json_text
from iac_code.database.pool import Pool

CONNECTION_STREAM = ""

# Remember what a DELETE … RETURNING connection_id, stream, event_id named `gone` removed.
_RECORD_TRIMS = """
    INSERT INTO iac_event_trims (connection_id, stream, lost_through)
    SELECT connection_id, stream, max(event_id) FROM gone GROUP BY connection_id, stream
    ON CONFLICT (connection_id, stream) DO UPDATE
    SET lost_through = greatest(iac_event_trims.lost_through, excluded.lost_through)"""


def request_key(message_id: Any) -> str:
    """How `iac_inflight` names a request: its JSON-RPC id as text, so 1 and "1" alike (as the SDK's HTTP
    transport keys ids: acp.http.protocol.message_id_key), as JSON text (an id may hold U+0000). Stored
    keys follow this rule (migration 0004): it may not change."""
    return to_json_text(None if message_id is None else str(message_id))


@dataclass(frozen=True)
class Retention:
    max_events: int = 1024  # per connection, all streams together
    max_age: float = 300.0  # seconds


@dataclass(frozen=True)
class StoredEvent:
    event_id: int
    stream: str
    text: str  # the message as stored: compact JSON on one line, ready for an SSE `data:` field

    @property
    def message(self) -> dict[str, Any]:
        message = from_json_text(self.text)
        if not isinstance(message, dict):  # only whole JSON-RPC messages are ever appended
            raise TypeError(f"event {self.event_id} holds {type(message).__name__}, not a message")
        return message


@dataclass(frozen=True)
class Replay:
    """What a reader resuming after event `after` gets: the events it missed, in order, and
    `lost_through` > after when ids in (after, lost_through] were trimmed away."""

    events: list[StoredEvent]
    lost_through: int | None
    after: int = 0


class EventLog:
    def __init__(self, pool: Pool, instance_id: str, retention: Retention | None = None) -> None:
        self.pool = pool
        self.instance_id = instance_id
        self.retention = retention or Retention()

    async def append(self, connection_id: str, stream: str, message: dict[str, Any], *, as_host: bool = False) -> int:
        """Store one outgoing message; returns its event id (see append_many)."""
        return await self.append_many(connection_id, stream, [message], as_host=as_host)

    async def append_many(
        self, connection_id: str, stream: str, messages: Sequence[dict[str, Any]], *, as_host: bool = False
    ) -> int:
        """Store outgoing messages in one statement; returns the last one's event id (they got consecutive
        ids). Raises UnknownConnection, also when `as_host` and the connection's host is another instance
        (it was adopted while this one was cut off: what this one still has to say must not follow the
        adopter's answers)."""
        query = f"""
            WITH counter AS (
                UPDATE iac_connections SET last_event_id = last_event_id + %(count)s, last_seen = now()
                WHERE connection_id = %(connection)s AND (NOT %(as_host)s OR host = %(me)s)
                RETURNING connection_id, last_event_id, owner),
            numbered AS (
                SELECT c.connection_id, c.last_event_id - %(count)s + m.n AS event_id, m.message
                FROM counter c, json_array_elements(%(messages)s::json) WITH ORDINALITY AS m(message, n)),
            stored AS (  -- a batch longer than the window keeps only its end
                INSERT INTO iac_events (connection_id, event_id, stream, message)
                SELECT n.connection_id, n.event_id, %(stream)s, n.message FROM numbered n, counter c
                WHERE n.event_id > c.last_event_id - %(keep)s),
            deleted AS (
                DELETE FROM iac_events e USING counter c
                WHERE e.connection_id = c.connection_id AND e.event_id <= c.last_event_id - %(keep)s
                RETURNING e.connection_id, e.stream, e.event_id),
            gone AS (
                SELECT * FROM deleted
                UNION ALL SELECT n.connection_id, %(stream)s, n.event_id FROM numbered n, counter c
                WHERE n.event_id <= c.last_event_id - %(keep)s),
            trims AS ({_RECORD_TRIMS}),
            answered AS (
                DELETE FROM iac_inflight f USING counter c
                WHERE f.connection_id = c.connection_id AND f.request_key = ANY(%(answers)s))
            SELECT last_event_id, {notify_owner_sql("event")} FROM counter"""
        params = {
            "connection": connection_id,
            "stream": stream,
            "count": len(messages),
            "messages": to_json_text(messages),
            "keep": self.retention.max_events,
            "me": self.instance_id,
            "answers": [request_key(m.get("id")) for m in messages if "method" not in m and "id" in m],
            "as_host": as_host,
        }
        async with self.pool.connection() as conn:
            row = await (await conn.execute(query, params)).fetchone()
        if row is None:
            raise UnknownConnection(connection_id)
        return int(row[0])

    async def events_after(self, connection_id: str, stream: str, last_event_id: int | None) -> Replay:
        """The events of `stream` after `last_event_id` (None: after what was delivered on the connection
        stream) still kept, and what was lost (one snapshot). Raises UnknownConnection."""
        query = """
            SELECT a.after, t.lost_through, e.event_id, e.message::text
            FROM (SELECT coalesce(%(after)s, delivered_through) AS after FROM iac_connections
                  WHERE connection_id = %(connection)s) a
            CROSS JOIN (SELECT coalesce(max(lost_through), 0) AS lost_through FROM iac_event_trims
                        WHERE connection_id = %(connection)s AND stream = %(stream)s) t
            LEFT JOIN LATERAL (
                SELECT event_id, message FROM iac_events
                WHERE connection_id = %(connection)s AND stream = %(stream)s AND event_id > a.after) e ON true
            ORDER BY e.event_id"""
        params = {"connection": connection_id, "stream": stream, "after": last_event_id}
        async with self.pool.connection() as conn:
            rows = await (await conn.execute(query, params)).fetchall()
        if not rows:
            raise UnknownConnection(connection_id)
        after, lost_through = rows[0][0], rows[0][1]
        events = [StoredEvent(event_id, stream, text) for *_, event_id, text in rows if event_id]
        return Replay(events, lost_through if lost_through > after else None, after)

    async def delivered(self, connection_id: str, through: int) -> None:
        """The owner sent the connection stream's events up to `through` (never moves back)."""
        query = """
            UPDATE iac_connections SET delivered_through = greatest(delivered_through, %s), last_seen = now()
            WHERE connection_id = %s"""
        async with self.pool.connection() as conn:
            await conn.execute(query, [through, connection_id])

    async def trim_expired(self) -> int:
        """Drop events older than `max_age` in every connection; returns how many."""
        query = f"""
            WITH gone AS (
                DELETE FROM iac_events WHERE created_at < now() - make_interval(secs => %(age)s)
                RETURNING connection_id, stream, event_id),
            trims AS ({_RECORD_TRIMS})
            SELECT count(*) FROM gone"""
        async with self.pool.connection() as conn:
            row = await (await conn.execute(query, {"age": self.retention.max_age})).fetchone()
        return int(row[0]) if row else 0
