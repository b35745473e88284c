"""A model call as operators see it: its latency, tokens and outcome in the metrics, and its span
(observability/record.py's ModelCall), whichever provider makes it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from iac_code.observability.record import ModelCall
from iac_code.providers.base import ProviderEvent, Usage


async def observed(provider: str, model: str, events: AsyncIterator[ProviderEvent]) -> AsyncIterator[ProviderEvent]:
    """`events` unchanged, recorded as one model call: "completed", "error" (a ProviderError, or any other
    failure) or "cancelled" (the turn stopped, or its reader went away)."""
    call = ModelCall(provider, model)
    outcome = "cancelled"
    try:
        async for event in events:
            if isinstance(event, Usage):  # the last one holds, as for the loop (model_call.read_reply)
                call.usage(event.input_tokens, event.output_tokens, event.cache_read_tokens, event.cache_write_tokens)
            yield event
        outcome = "completed"
    except (asyncio.CancelledError, GeneratorExit):
        raise
    except Exception:  # a ProviderError, mostly; an SDK's bug too
        outcome = "error"
        raise
    finally:
        call.end(outcome)
