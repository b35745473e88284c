"""Several instances on PostgreSQL: one instance on the embedded SQLite store vs the same on PostgreSQL vs two behind nginx.

The three run side by side and take turns, so they share the machine's (noisy) load alike. Prints, for each:
prompt round trip p50/p99 with 1, 10 and 100 connections prompting at once (each its own session, a one-line
answer from an instant scripted model, POST to the response on the SSE stream), how many prompts went unanswered (the 100-connection run must lose none), and session/load of a 1,000-message session
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

import argparse  # noqa: E402
import asyncio  # noqa: E402
import contextlib  # noqa: E402
import random  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

from bench.http import Connection, client, percentile  # noqa: E402
from bench.sessions import realistic_history  # noqa: E402
from tests.e2e.cluster.conftest import cluster  # noqa: E402
from tests.e2e.http.server_process import http_server  # noqa: E402
from tests.fakes.openai_server import ScriptedOpenAI  # noqa: E402
from tests.pg.server import PostgresServer  # noqa: E402

from iac_code.sessions.postgres import PostgresSessionStore  # noqa: E402
from iac_code.sessions.sqlite import SqliteSessions  # noqa: E402
from iac_code.sessions.store import SessionRecord  # noqa: E402

RUNS = ((1, 20), (10, 4), (100, 1))  # (connections prompting at once, rounds), run INTERLEAVED times
INTERLEAVED = 3
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


def seed_embedded(config_dir: Path, cwd: Path) -> str:
    config_dir.mkdir(parents=True, exist_ok=True)
    store = SqliteSessions(config_dir / "iac-code.db", durable=False)  # the store the server opens
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


@dataclass
class Setup:
    name: str
    url: str
    session_id: str  # the 1,000-message session
    cwd: Path
    samples: dict[int, list[float]] = field(default_factory=dict)
    unanswered: dict[int, int] = field(default_factory=dict)
    loads: list[float] = field(default_factory=list)


async def measure(setups: list[Setup]) -> None:
    """Each run in turn on every setup, so that they share the machine's load alike (it is noisy)."""
    for concurrency, rounds in RUNS:
        for _ in range(INTERLEAVED):
            for setup in setups:
                samples, unanswered = await round_trips(setup.url, concurrency, rounds)
                setup.samples.setdefault(concurrency, []).extend(samples)
                setup.unanswered[concurrency] = setup.unanswered.get(concurrency, 0) + unanswered
    for _ in range(INTERLEAVED):
        for setup in setups:
            setup.loads.append(await load_ms(setup.url, setup.session_id, setup.cwd))


def report(setup: Setup) -> None:
    print(setup.name)
    for concurrency, _ in RUNS:
        samples = setup.samples[concurrency]
        print(
            f"  prompt round trip, {concurrency:>3} connection(s) at once: p50 {percentile(samples, 0.5) * 1000:7.1f} ms"
            f"   p99 {percentile(samples, 0.99) * 1000:7.1f} ms"
            f"   ({len(samples)} answered, {setup.unanswered[concurrency]} unanswered)"
        )
    print(f"  session/load of 1,000 messages: {statistics.median(setup.loads):7.1f} ms (median)")


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
    print(
        "iac-code instances on the embedded SQLite store and on PostgreSQL (real processes, instant scripted model, 127.0.0.1)"
    )
    with contextlib.ExitStack() as stack:
        model = stack.enter_context(ScriptedOpenAI(default={"text": "ok"}))
        database_url = stack.enter_context(durable_postgres())
        on_embedded = stack.enter_context(http_server(model.url))
        on_postgres = stack.enter_context(http_server(model.url, env={"IAC_CODE_DATABASE_URL": database_url}))
        two = stack.enter_context(cluster(model.url, database_url, heartbeat=5.0, lease=15.0))
        setups = [
            Setup(
                "one instance, SQLite store",
                on_embedded.url,
                seed_embedded(on_embedded.log.parent / "config", on_embedded.workspace),
                on_embedded.workspace,
            ),
            Setup(
                "one instance, PostgreSQL",
                on_postgres.url,
                await seed_postgres(database_url, on_postgres.workspace),
                on_postgres.workspace,
            ),
            Setup(
                "two instances behind nginx (round-robin), PostgreSQL",
                two.url,
                await seed_postgres(database_url, two.workspace),
                two.workspace,
            ),
        ]
        await measure(setups)
    for setup in setups:
        report(setup)
    embedded, postgres = (setup.samples for setup in setups[:2])
    added = ", ".join(
        f"{(percentile(postgres[n], 0.5) - percentile(embedded[n], 0.5)) * 1000:+.1f} ms at {n}" for n, _ in RUNS
    )
    print(f"PostgreSQL vs SQLite, prompt round trip p50: {added} (goal: at most +5 ms)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--at-most", type=int, default=100, help="only the runs of at most this many connections")
    RUNS = tuple(run for run in RUNS if run[0] <= parser.parse_args().at_most)
    asyncio.run(main())
