"""A provider's stream, observed: unchanged for the loop, and recorded with its outcome and last usage."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from iac_code.observability import metrics
from iac_code.observability.record import model_spent
from iac_code.providers.base import Finish, ProviderError, ProviderEvent, TextDelta, Usage
from iac_code.providers.observed import observed


def calls(outcome: str) -> float:
    labels = {"provider": "p", "model": "m", "outcome": outcome}
    return metrics.enable().registry.get_sample_value("iac_code_model_call_seconds_count", labels) or 0.0


def tokens(direction: str) -> float:
    labels = {"provider": "p", "model": "m", "direction": direction}
    return metrics.enable().registry.get_sample_value("iac_code_model_tokens_total", labels) or 0.0


async def events(*items: ProviderEvent, fail: bool = False) -> AsyncIterator[ProviderEvent]:
    for item in items:
        yield item
    if fail:
        raise ProviderError("the model service said no")


async def test_the_events_pass_unchanged_and_the_last_usage_counts():
    before, inputs = calls("completed"), tokens("input")
    sent = [TextDelta("hi"), Usage(5, 1), Usage(7, 2), Finish("end_turn")]
    assert [event async for event in observed("p", "m", events(*sent))] == sent
    assert calls("completed") == before + 1
    assert tokens("input") == inputs + 7


async def test_a_failed_call_is_an_error():
    before = calls("error")
    with pytest.raises(ProviderError):
        async for _ in observed("p", "m", events(TextDelta("hi"), fail=True)):
            pass
    assert calls("error") == before + 1


async def test_a_call_whose_reader_stops_is_cancelled():
    before = calls("cancelled")

    async def endless() -> AsyncIterator[ProviderEvent]:
        while True:
            yield TextDelta(".")
            await asyncio.sleep(0)

    stream = observed("p", "m", endless())
    assert await anext(stream) == TextDelta(".")
    await stream.aclose()  # type: ignore[attr-defined]  # an async generator; declared an iterator
    assert calls("cancelled") == before + 1


async def test_the_cached_parts_of_the_input_are_counted_apart():
    read, written = tokens("cache_read"), tokens("cache_write")
    sent = [Usage(100, 1, cache_read_tokens=60, cache_write_tokens=30), Finish("end_turn")]
    assert [event async for event in observed("p", "m", events(*sent))] == sent
    assert (tokens("cache_read"), tokens("cache_write")) == (read + 60, written + 30)


def test_what_a_priced_call_cost_is_counted_by_currency():
    labels = {"provider": "p", "model": "m", "currency": "USD"}
    before = metrics.enable().registry.get_sample_value("iac_code_model_cost_total", labels) or 0.0
    model_spent("p", "m", 0.25, "USD")
    assert metrics.enable().registry.get_sample_value("iac_code_model_cost_total", labels) == before + 0.25
