import asyncio

from iac_code.agent.channel import EventChannel
from iac_code.agent.events import ErrorReport
from iac_code.providers.base import TextDelta, ThinkingDelta


async def drain(channel):
    out = []
    while (event := await channel.get()) is not None:
        out.append(event)
    return out


async def test_waiting_deltas_merge_and_order_is_kept():
    channel = EventChannel()
    for event in [
        TextDelta("a"),
        TextDelta("b"),
        ThinkingDelta("t1"),
        ThinkingDelta("t2"),
        ErrorReport("x"),
        TextDelta("c"),
        None,
    ]:
        await channel.put(event)
    assert await drain(channel) == [TextDelta("ab"), ThinkingDelta("t1t2"), ErrorReport("x"), TextDelta("c")]


async def test_differently_signed_thinking_blocks_stay_apart():
    channel = EventChannel()
    for event in [ThinkingDelta("a", "s1"), ThinkingDelta("b"), ThinkingDelta("c", "s2"), None]:
        await channel.put(event)
    assert await drain(channel) == [ThinkingDelta("ab", "s1"), ThinkingDelta("c", "s2")]


async def test_deltas_of_different_messages_stay_apart_and_keep_their_ids():
    channel = EventChannel()
    for event in [TextDelta("a", "m1"), TextDelta("b", "m1"), TextDelta("c", "m2"), ThinkingDelta("t", "", "m3"), None]:
        await channel.put(event)
    assert await drain(channel) == [TextDelta("ab", "m1"), TextDelta("c", "m2"), ThinkingDelta("t", "", "m3")]


async def test_a_full_channel_makes_the_producer_wait():
    channel = EventChannel(limit=2)
    await channel.put(ErrorReport("1"))
    await channel.put(ErrorReport("2"))
    blocked = asyncio.create_task(channel.put(ErrorReport("3")))
    await asyncio.sleep(0.01)
    assert not blocked.done()
    assert await channel.get() == ErrorReport("1")
    await asyncio.wait_for(blocked, 1)
    rest = asyncio.create_task(drain(channel))
    await channel.put(None)
    assert await rest == [ErrorReport("2"), ErrorReport("3")]


async def test_a_consumer_keeps_up_with_a_producer_that_never_awaits_io():
    channel = EventChannel()
    received = []

    async def consume():
        while (event := await channel.get()) is not None:
            received.append(len(event.text))

    consumer = asyncio.create_task(consume())
    for _ in range(10_000):
        await channel.put(TextDelta("x"))
    await channel.put(None)
    await consumer
    assert sum(received) == 10_000
    assert len(received) > 10, "the producer must let the consumer run while it streams"
