"""The audit trail in both databases: records read back as written (U+0000 and plans included), filtered by
session and time, in the order written; the table refuses UPDATE and DELETE; a failed write is
AuditUnavailable. `--since`'s time format."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest

from iac_code.sessions.audit import AuditRecord, AuditTrail, AuditUnavailable, since_time
from iac_code.sessions.keys import iso_time
from iac_code.sessions.sqlite import open_sqlite_store

DECISION = AuditRecord(
    kind="decision",
    principal="al\u0000ice",
    session="s1",
    tool="bash",
    digest="d" * 64,
    arguments='{"command":"echo \u00e9\u0000"}',
    decision="allowed",
    source="user:allow_once",
    plan_sha256="ab" * 32,
    plan_counts={"create": 2, "delete": 1},
)


@pytest.fixture(params=["sqlite", "postgresql"])
async def trail(request, tmp_path: Path) -> AsyncIterator[AuditTrail]:
    if request.param == "sqlite":
        store = open_sqlite_store(tmp_path / "iac-code.db", durable=False)
        request.node.database = ("sqlite", tmp_path / "iac-code.db")
    else:
        from iac_code.sessions.postgres import PostgresSessionStore

        url = request.getfixturevalue("pg_url")
        store = await PostgresSessionStore.open(url, max_size=2)  # type: ignore[assignment]
        request.node.database = ("postgresql", url)
    try:
        yield store.audit_trail()
    finally:
        await store.close()


async def test_records_read_back_in_order_and_filtered(trail: AuditTrail) -> None:
    before = iso_time()
    outcome = replace(DECISION, kind="outcome", exit_status=2)
    other = replace(DECISION, session="s2", plan_sha256=None, plan_counts=None, decision="denied", source="mode:plan")
    for record in (DECISION, other, outcome):
        await trail.append(record)
    everything = await trail.read()
    assert [replace(r, time="") for r in everything] == [DECISION, other, outcome]
    assert all(before <= r.time <= iso_time() for r in everything) and everything[0].time.endswith("Z")
    assert [r.kind for r in await trail.read("s1")] == ["decision", "outcome"]
    assert [r.session for r in await trail.read("s2")] == ["s2"]
    assert await trail.read(since=since_time("2999-01-01")) == []
    assert len(await trail.read("s1", since=before)) == 2


async def test_the_table_is_append_only(trail: AuditTrail, request) -> None:
    await trail.append(DECISION)
    kind, where = request.node.database
    for statement in ("UPDATE iac_audit SET decision = 'denied'", "DELETE FROM iac_audit"):
        if kind == "sqlite":
            with sqlite3.connect(where) as conn, pytest.raises(sqlite3.IntegrityError, match="append-only"):
                conn.execute(statement)
        else:
            with psycopg.connect(where) as conn, pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                conn.execute(statement)
    assert [r.decision for r in await trail.read()] == ["allowed"]


async def test_a_write_that_fails_is_the_trail_unavailable(tmp_path: Path) -> None:
    store = open_sqlite_store(tmp_path / "iac-code.db", durable=False)
    try:
        await store.audit_trail().read()  # the schema is made
        with sqlite3.connect(tmp_path / "iac-code.db") as conn:
            conn.execute("DROP TRIGGER iac_audit_no_update")  # any change will do: the table goes
            conn.execute("ALTER TABLE iac_audit RENAME TO gone")
        with pytest.raises(AuditUnavailable, match="OperationalError: no such table: iac_audit"):
            await store.audit_trail().append(DECISION)
    finally:
        await store.close()


@pytest.mark.parametrize(
    ("given", "since"),
    [
        ("2026-12-01", "2026-12-01T00:00:00.000Z"),
        ("2026-12-01T09:30Z", "2026-12-01T09:30:00.000Z"),
        ("2026-12-01T09:30:00+02:00", "2026-12-01T07:30:00.000Z"),
    ],
)
def test_since_is_utc_in_the_trails_format(given: str, since: str) -> None:
    assert since_time(given) == since


def test_since_refuses_what_is_not_a_time() -> None:
    with pytest.raises(ValueError):
        since_time("yesterday")
