"""Several instances on PostgreSQL: one instance on the file store vs the same on PostgreSQL vs two behind nginx.

Prints, for each: prompt round trip p50/p99 with 1, 10 and 100 connections prompting at once (each its own
session, a one-line answer from an instant scripted model, POST to the response on the SSE stream), how many
prompts went unanswered (the 100-connection run must lose none), and session/load of a 1,000-message session
over HTTP (POST to the response, after the whole replay). PostgreSQL is a throwaway server with fsync on, so
both stores pay for durability. Issue 14's goals: PostgreSQL adds at most 5 ms to a prompt round trip; two
instances behind a round-robin nginx lose nothing. Run: .venv/bin/python bench/cluster.py (needs PostgreSQL's
server binaries and nginx, like the tests).
"""

from __future__ import annotations

import sys
from pathlib import Path

# Replace the script directory (whose http.py would shadow the stdlib) with the repo root.
sys.path[0] = str(Path(__file__).resolve().parents[1])

import asyncio  # noqa: E402
import contextlib  # noqa: E402
import random  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from collections.abc import Iterator  # noqa: E402

from bench.http import Connection, client, percentile  # noqa: E402
from bench.sessions import realistic_history  # noqa: E402
from tests.e2e.cluster.conftest import cluster  # noqa: E402
from tests.e2e.http.server_process import http_server  # noqa: E402
from tests.fakes.openai_server import ScriptedOpenAI  # noqa: E402
from tests.pg.server import PostgresServer  # noqa: E402

from iac_code.sessions.files import FileSessionStore  # noqa: E402
from iac_code.sessions.postgres import PostgresSessionStore  # noqa: E402
from iac_code.sessions.store import SessionRecord  # noqa: E402

RUNS = ((1, 50), (10, 10), (100, 3))  # (connections prompting at once, rounds)
ANSWER_TIMEOUT = 30.0
LOADS = 5


async def round_trips(url: str, concurrency: int, rounds: int) -> tuple[list[float], int]:
    """Prompt round-trip times, and how many prompts got no end_turn answer in time."""
    async with client() as http:
        conns = [Connection(http, url) for _ in range(concurrency)]
        await asyncio.gather(*(c.open() for c in conns))
        unanswered = 0

        async def timed(conn: Connection) -> float | None:
            nonlocal unanswered
            started = time.perf_counter()
            try:
                answer = await asyncio.wait_for(conn.prompt("hello"), ANSWER_TIMEOUT)
            except TimeoutError:
                answer = {}
            if answer.get("result", {}).get("stopReason") != "end_turn":
                unanswered += 1
                return None
            return time.perf_counter() - started

        await asyncio.gather(*(timed(c) for c in conns))  # warm-up round
        unanswered = 0
        samples: list[float] = []
        for _ in range(rounds):
            samples += [s for s in await asyncio.gather(*(timed(c) for c in conns)) if s is not None]
        await asyncio.gather(*(c.close() for c in conns))
    return samples, unanswered


async def load_ms(url: str, session_id: str, cwd: Path) -> float:
    async with client() as http:
        conn = Connection(http, url)
        await conn.open(with_session=False)
        times = []
        for _ in range(LOADS):
            started = time.perf_counter()
            answer = await conn.request("session/load", {"sessionId": session_id, "cwd": str(cwd), "mcpServers": []})
            assert "result" in answer, answer
            times.append((time.perf_counter() - started) * 1000)
        await conn.close()
    return statistics.median(times)


def history_record(cwd: Path) -> SessionRecord:
    return SessionRecord(session_id=f"bench_{uuid.uuid4().hex}", cwd=str(cwd), title="1,000 messages")


def seed_files(sessions_dir: Path, cwd: Path) -> str:
    store = FileSessionStore(sessions_dir, durable=False)
    record = history_record(cwd)
    store.create(record)
    for message in realistic_history(1000, random.Random(1)):
        store.append(record.session_id, message)
    store.close()
    return record.session_id


async def seed_postgres(url: str, cwd: Path) -> str:
    store = await PostgresSessionStore.open(url)
    record = history_record(cwd)
    await store.create(record)
    for message in realistic_history(1000, random.Random(1)):
        await store.append(record.session_id, message)
    await store.close()
    return record.session_id


async def report(name: str, url: str, session_id: str, cwd: Path) -> dict[int, float]:
    print(name)
    medians = {}
    for concurrency, rounds in RUNS:
        samples, unanswered = await round_trips(url, concurrency, rounds)
        medians[concurrency] = percentile(samples, 0.5) * 1000
        print(
            f"  prompt round trip, {concurrency:>3} connection(s) at once: p50 {medians[concurrency]:7.1f} ms"
            f"   p99 {percentile(samples, 0.99) * 1000:7.1f} ms   ({len(samples)} answered, {unanswered} unanswered)"
        )
    print(f"  session/load of 1,000 messages: {await load_ms(url, session_id, cwd):7.1f} ms (median of {LOADS})")
    return medians


@contextlib.contextmanager
def durable_postgres() -> Iterator[str]:
    server = PostgresServer(durable=True)
    server.start()
    try:
        yield server.create_database("bench")
    finally:
        server.remove()


async def main() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(soft, 8192), hard), hard))
    print("iac-code instances on the file store and on PostgreSQL (real processes, instant scripted model, 127.0.0.1)")
    with ScriptedOpenAI(default={"text": "ok"}) as model, durable_postgres() as database_url:
        with http_server(model.url) as alone:
            session_id = seed_files(alone.log.parent / "config" / "sessions", alone.workspace)
            files = await report("one instance, file store", alone.url, session_id, alone.workspace)
        with http_server(model.url, env={"IAC_CODE_DATABASE_URL": database_url}) as alone:
            session_id = await seed_postgres(database_url, alone.workspace)
            postgres = await report("one instance, PostgreSQL", alone.url, session_id, alone.workspace)
        with cluster(model.url, database_url, heartbeat=5.0, lease=15.0) as two:
            session_id = await seed_postgres(database_url, two.workspace)
            await report("two instances behind nginx (round-robin), PostgreSQL", two.url, session_id, two.workspace)
    added = ", ".join(f"{postgres[n] - files[n]:+.1f} ms at {n}" for n, _ in RUNS)
    print(f"PostgreSQL vs files, prompt round trip p50: {added} (goal: at most +5 ms)")


if __name__ == "__main__":
    asyncio.run(main())
