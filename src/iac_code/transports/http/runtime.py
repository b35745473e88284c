"""How the HTTP server's process runs many turns at once: its event loop, and the collector's pace.

Measured with a hundred one-line prompts at once against an instant model (`bench/http.py`), where
the server is CPU-bound on one core:
- uvloop (libuv) instead of asyncio's own loop: every turn is dozens of task steps, socket reads and
  writes, futures and timers (the SDK's HTTP client, the SSE streams); ~10% less CPU per prompt.
- The cyclic garbage collector: every turn allocates thousands of short-lived containers (request
  options, headers, events, JSON). CPython runs a young-generation collection every 700 container
  allocations by default, then an older one every 10 of those: ~0.3 ms of CPU per prompt (a tenth),
  and a full collection (~25 ms, every stream paused) every few hundred prompts, because each young
  collection promotes whatever is in flight at that moment. Every 20,000 allocations instead, most of
  those objects die first (reference counting frees them without the collector), for a few MB of
  garbage cycles kept a little longer.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Coroutine
from typing import Any

YOUNG_COLLECTION_EVERY = 20_000  # container allocations (net of frees) between young collections


def pace_collector_for_serving() -> None:
    """Collect the young generation less often (never more often than it is already set to)."""
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_COLLECTION_EVERY), middle, old)


def run_serving(main: Coroutine[Any, Any, None]) -> None:
    """Run the server's main coroutine to completion on uvloop (asyncio's loop where uvloop has no
    build: Windows)."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
        return
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(main)
