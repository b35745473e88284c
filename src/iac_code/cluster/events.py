"""Each connection's event log in the database: the SSE ids and the replay window every instance shares.

An event gets the connection's next id (one counter for all the connection's streams) and is stored on
its stream: its session's stream while one is open (session_streams.py), else the connection stream
(''). The statement that logs it decides which, and wakes the instance reading that stream (the
connection's owner, or the session stream's holder). Retention keeps the newest `max_events` per
connection (trimmed by the writing statement itself) and nothing older than `max_age` (`trim_expired`,
run periodically by any instance). What retention removes is remembered per stream, so a reader
reconnecting with an older Last-Event-ID is told which ids it lost instead of silently missing them.
Each stream's reader records how far it delivered, where a reader without Last-Event-ID starts. Logging
a response ends its request's time in flight (inbound.py). Messages are stored as JSON text
(database/json_text.py) and never read by SQL: U+0000 is anywhere a client or a model put it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from iac_code.cluster.connections import UnknownConnection
from iac_code.cluster.wakeups import CHANNEL_PREFIX
from iac_code.database.json_text import from_json_text, to_json_text
from iac_code.database.pool import Connection, Pool

CONNECTION_STREAM = ""

# Remember what a DELETE … RETURNING connection_id, stream, event_id named `gone` removed.
_RECORD_TRIMS = """
    INSERT INTO iac_event_trims (connection_id, stream, lost_through)
    SELECT connection_id, stream, max(event_id) FROM gone GROUP BY connection_id, stream
    ON CONFLICT (connection_id, stream) DO UPDATE
    SET lost_through = greatest(iac_event_trims.lost_through, excluded.lost_through)"""


def session_stream(session_id: str) -> str:
    """The stream key of a session's stream: its id as a JSON string literal (a client chose it: it may
    hold U+0000, database/json_text.py), which also never equals the connection stream's ''."""
    return to_json_text(session_id)


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
class Appended:
    last_id: int  # the last message's event id; they got consecutive ids
    streams: list[str]  # each message's stream, in order


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

    async def append(
        self, connection_id: str, message: dict[str, Any], session_id: str | None = None, *, as_host: bool = False
    ) -> int:
        """Store one outgoing message about `session_id` (if any); returns its event id (see append_many)."""
        return (await self.append_many(connection_id, [message], [session_id], as_host=as_host)).last_id

    async def append_many(
        self,
        connection_id: str,
        messages: Sequence[dict[str, Any]],
        session_ids: Sequence[str | None] | None = None,
        *,
        as_host: bool = False,
    ) -> Appended:
        """Store outgoing messages in one statement, each about the session of the same index in `session_ids`
        (None: no session): on that session's stream if it is open, else on the connection stream. They get
        consecutive ids. Raises UnknownConnection, also when `as_host` and the connection's host is another
        instance (it was adopted while this one was cut off: what this one still has to say must not follow
        the adopter's answers)."""
        sessions = [None if s is None else session_stream(s) for s in session_ids or [None] * len(messages)]
        answers = [request_key(m.get("id")) for m in messages if "method" not in m and "id" in m]
        async with self.pool.connection() as conn:
            appended = await self._append(
                conn, connection_id, to_json_text(messages), sessions, answers=answers, as_host=as_host
            )
        if appended is None:
            raise UnknownConnection(connection_id)
        return appended

    async def append_moved(self, conn: Connection, connection_id: str, texts: Sequence[str]) -> None:
        """Append stored messages (`texts`, in order) to the connection stream with new ids, on `conn`: in the
        transaction of a closing session stream (session_streams.py), which holds the connection's row."""
        await self._append(conn, connection_id, "[" + ",".join(texts) + "]", [None] * len(texts))

    async def _append(
        self,
        conn: Connection,
        connection_id: str,
        messages: str,
        sessions: list[str | None],
        *,
        answers: Sequence[str] = (),
        as_host: bool = False,
    ) -> Appended | None:
        # `counter` locks the connection's row: its RETURNING shows the newest session_streams even when it
        # had to wait for a session stream's open or close to commit, so each message's stream is decided
        # by what holds from now on (other CTEs keep the statement's older snapshot).
        query = f"""
            WITH counter AS (
                UPDATE iac_connections SET last_event_id = last_event_id + %(count)s, last_seen = now()
                WHERE connection_id = %(connection)s AND (NOT %(as_host)s OR host = %(me)s)
                RETURNING connection_id, last_event_id, owner, session_streams),
            numbered AS (
                SELECT c.connection_id, c.last_event_id - %(count)s + m.n AS event_id, m.message,
                       CASE WHEN c.session_streams ? m.session THEN m.session ELSE '' END AS stream
                FROM counter c, ROWS FROM (json_array_elements(%(messages)s::json), unnest(%(sessions)s::text[]))
                                WITH ORDINALITY AS m(message, session, n)),
            stored AS (  -- a batch longer than the window keeps only its end
                INSERT INTO iac_events (connection_id, event_id, stream, message)
                SELECT n.connection_id, n.event_id, n.stream, n.message FROM numbered n, counter c
                WHERE n.event_id > c.last_event_id - %(keep)s),
            deleted AS (
                DELETE FROM iac_events e USING counter c
                WHERE e.connection_id = c.connection_id AND e.event_id <= c.last_event_id - %(keep)s
                RETURNING e.connection_id, e.stream, e.event_id),
            gone AS (
                SELECT * FROM deleted
                UNION ALL SELECT n.connection_id, n.stream, n.event_id FROM numbered n, counter c
                WHERE n.event_id <= c.last_event_id - %(keep)s),
            trims AS ({_RECORD_TRIMS}),
            answered AS (
                DELETE FROM iac_inflight f USING counter c
                WHERE f.connection_id = c.connection_id AND f.request_key = ANY(%(answers)s)),
            woken AS (  -- the instances reading the streams that got events: the owner, session streams' holders
                SELECT pg_notify('{CHANNEL_PREFIX}' || who, 'event ' || %(connection)s) FROM (
                    SELECT DISTINCT CASE WHEN n.stream = '' THEN c.owner
                                         ELSE c.session_streams -> n.stream ->> 'holder' END AS who
                    FROM numbered n, counter c) readers
                WHERE who IS NOT NULL AND who <> %(me)s)
            SELECT last_event_id, (SELECT array_agg(stream ORDER BY event_id) FROM numbered),
                   (SELECT count(*) FROM woken)
            FROM counter"""
        params = {
            "connection": connection_id,
            "count": len(sessions),
            "messages": messages,
            "sessions": sessions,
            "keep": self.retention.max_events,
            "me": self.instance_id,
            "answers": list(answers),
            "as_host": as_host,
        }
        row = await (await conn.execute(query, params)).fetchone()
        return None if row is None else Appended(int(row[0]), list(row[1]))

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

    async def delivered(self, connection_id: str, stream: str, through: int) -> None:
        """This instance's reader of `stream` sent its events up to `through` (never moves back). A session
        stream's position is kept only while this instance holds it."""
        if stream == CONNECTION_STREAM:
            query = """
                UPDATE iac_connections SET delivered_through = greatest(delivered_through, %(through)s),
                                           last_seen = now()
                WHERE connection_id = %(connection)s"""
        else:
            query = """
                UPDATE iac_connections SET last_seen = now(), session_streams = jsonb_set(
                    session_streams, ARRAY[%(stream)s::text, 'delivered'],
                    to_jsonb(greatest((session_streams -> %(stream)s::text ->> 'delivered')::bigint, %(through)s)))
                WHERE connection_id = %(connection)s AND session_streams -> %(stream)s::text ->> 'holder' = %(me)s"""
        params = {"connection": connection_id, "stream": stream, "through": through, "me": self.instance_id}
        async with self.pool.connection() as conn:
            await conn.execute(query, params)

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
