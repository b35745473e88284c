"""EventBuffer: ids, one stream per event, replay after Last-Event-ID, lost events, bounds."""

from __future__ import annotations

import asyncio
import json

from iac_code.transports.http.events import Event, EventBuffer, EventLimits


def note(n: int, session: str | None = None) -> dict:
    params = {"n": n} if session is None else {"n": n, "sessionId": session}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


def payloads(events: list[Event]) -> list[dict]:
    out = []
    for event in events:
        for line in event.frame.decode().splitlines():
            if line.startswith("data: "):
                out.append(json.loads(line[6:]))
    return out


async def drain(reader) -> list:
    batch = await reader.next_batch(0.01)
    reader.delivered(batch)
    return batch


async def test_events_wait_for_the_first_reader_and_carry_increasing_ids():
    buffer = EventBuffer()
    buffer.publish(note(1), None)
    buffer.publish(note(2), None)
    batch = await drain(buffer.open_reader(None))
    assert [e.id for e in batch] == [1, 2]
    frame = batch[0].frame.decode()
    assert frame.startswith("id: 1\nevent: message\nretry: 5000\ndata: ") and frame.endswith("\n\n")


async def test_session_events_go_to_the_session_stream_only_when_it_has_a_reader():
    buffer = EventBuffer()
    connection_reader = buffer.open_reader(None)
    buffer.publish(note(1, "s1"), "s1")  # no session reader yet → connection stream
    session_reader = buffer.open_reader("s1")
    buffer.publish(note(2, "s1"), "s1")
    buffer.publish(note(3, "s2"), "s2")
    assert [e.id for e in await drain(connection_reader)] == [1, 3]
    assert [e.id for e in await drain(session_reader)] == [2]


async def test_undelivered_session_events_move_to_the_connection_stream_when_the_session_reader_leaves():
    buffer = EventBuffer()
    connection_reader = buffer.open_reader(None)
    session_reader = buffer.open_reader("s1")
    buffer.publish(note(1, "s1"), "s1")
    buffer.publish(note(2), None)
    session_reader.detach()
    assert [e.id for e in await drain(connection_reader)] == [1, 2]


async def test_a_failed_send_gives_the_events_back_to_the_next_reader():
    buffer = EventBuffer()
    reader = buffer.open_reader(None)
    buffer.publish(note(1), None)
    batch = await reader.next_batch(0.01)
    reader.give_back(batch)
    reader.detach()
    assert [e.id for e in await drain(buffer.open_reader(None))] == [1]


async def test_a_new_reader_replaces_the_old_one_on_the_same_stream():
    buffer = EventBuffer()
    old = buffer.open_reader(None)
    new = buffer.open_reader(None)
    assert await old.next_batch(0.01) is None
    buffer.publish(note(1), None)
    assert [e.id for e in await drain(new)] == [1]


async def test_replay_after_last_event_id_returns_only_that_streams_missed_events():
    buffer = EventBuffer()
    reader = buffer.open_reader(None)
    session_reader = buffer.open_reader("s1")
    for n in range(1, 6):
        buffer.publish(note(n), None)
    buffer.publish(note(6, "s1"), "s1")
    await drain(reader)
    await drain(session_reader)
    assert [p["params"]["n"] for p in payloads(buffer.replay_after(None, 3))] == [4, 5]
    assert buffer.replay_after(None, 5) == []
    assert [p["params"]["n"] for p in payloads(buffer.replay_after("s1", 0))] == [6]


async def test_replay_says_clearly_when_missed_events_fell_out_of_the_window():
    buffer = EventBuffer(EventLimits(replay_events=3))
    reader = buffer.open_reader(None)
    for n in range(1, 8):
        buffer.publish(note(n), None)
    await drain(reader)
    events = buffer.replay_after(None, 2)
    assert events[0].lost and events[0].frame.startswith(b"event: lost\n")
    lost = json.loads(events[0].frame.decode().split("data: ", 1)[1])
    assert lost == {"error": "events lost", "lastEventId": 2, "lostThrough": 4}
    assert [p["params"]["n"] for p in payloads(events[1:])] == [5, 6, 7]
    assert not buffer.replay_after(None, 4)[0].lost


async def test_past_the_pending_bound_the_producer_waits_for_a_reader_then_gives_up():
    buffer = EventBuffer(EventLimits(pending_events=5, stall_seconds=0.05))
    for n in range(6):
        buffer.publish(note(n), None)
    assert buffer.full
    assert await buffer.wait_for_room() is False

    buffer.limits = EventLimits(pending_events=5, stall_seconds=5)
    waiting = asyncio.create_task(buffer.wait_for_room())
    await asyncio.sleep(0.01)  # the producer is now waiting
    await drain(buffer.open_reader(None))
    assert await waiting is True and not buffer.full


async def test_pending_bytes_are_bounded_too():
    buffer = EventBuffer(EventLimits(pending_bytes=10_000))
    buffer.publish({"jsonrpc": "2.0", "method": "x", "params": {"t": "a" * 5_000}}, None)
    assert not buffer.full
    buffer.publish({"jsonrpc": "2.0", "method": "x", "params": {"t": "a" * 6_000}}, None)
    assert buffer.full


async def test_idle_reader_gets_a_keepalive_and_a_closed_buffer_ends_it():
    buffer = EventBuffer()
    reader = buffer.open_reader(None)
    assert await reader.next_batch(0.01) == []
    buffer.close()
    assert await reader.next_batch(0.01) is None
