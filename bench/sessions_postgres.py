"""The PostgreSQL session store next to the embedded ones (SQLite, the default, and the legacy file store):
append and load. Prints medians.

Run `python bench/sessions_postgres.py` (needs the PostgreSQL server binaries, like the tests). It starts a
throwaway server with fsync ON, so every store pays for durability: fdatasync per append for files, a
WAL sync per commit for SQLite (synchronous=FULL) and PostgreSQL. The embedded stores are called through
their thread, as served.
Issue 14's goal: PostgreSQL adds at most 5 ms to a prompt round trip (a few appends per round trip).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

# Replace the script directory (whose http.py would shadow the stdlib) with the repo root.
sys.path[0] = str(Path(__file__).resolve().parents[1])

from bench.sessions import realistic_history  # noqa: E402
from tests.pg.server import PostgresServer  # noqa: E402

from iac_code.messages import Message  # noqa: E402
from iac_code.sessions.postgres import PostgresSessionStore  # noqa: E402
from iac_code.sessions.sqlite import open_sqlite_store  # noqa: E402
from iac_code.sessions.store import SessionRecord  # noqa: E402
from iac_code.sessions.threaded import open_file_store  # noqa: E402

APPENDS = 500
LOADS = 21


async def timings_ms(action: Callable[[], Awaitable[object]], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        await action()
        times.append((time.perf_counter() - start) * 1000)
    return sorted(times)


def p(times: list[float], share: float) -> float:
    return times[min(len(times) - 1, int(len(times) * share))]


async def bench(name: str, create: Callable[[SessionRecord], Awaitable[object]], append, load) -> None:
    message = Message(role="assistant", text="Planning the change. " * 40)  # ~1 KB line
    await create(SessionRecord(session_id="appends", cwd="/w"))
    appends = await timings_ms(lambda: append("appends", message), APPENDS)
    await create(SessionRecord(session_id="big", cwd="/w"))
    for entry in realistic_history(1000, random.Random(1)):
        await append("big", entry)
    loads = await timings_ms(lambda: load("big"), LOADS)
    print(
        f"{name:11} append p50 {statistics.median(appends):6.2f} ms  p99 {p(appends, 0.99):6.2f} ms"
        f"   load 1,000 messages p50 {statistics.median(loads):6.1f} ms"
    )


async def main() -> None:
    with tempfile.TemporaryDirectory() as temp:
        for name, store in (
            ("files", open_file_store(Path(temp) / "sessions")),
            ("sqlite", open_sqlite_store(Path(temp) / "iac-code.db")),
        ):
            await bench(name, store.create, store.append, store.load)
            await store.close()
    server = PostgresServer(durable=True)
    try:
        server.start()
        store = await PostgresSessionStore.open(server.create_database("bench"))
        await bench("postgresql", store.create, store.append, store.load)
        await store.close()
    finally:
        server.remove()


if __name__ == "__main__":
    asyncio.run(main())
