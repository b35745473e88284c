"""The throwaway server itself: reachable, one database per module, emptied between tests, restartable."""

from __future__ import annotations

import psycopg
from tests.pg.server import PostgresServer


def test_a_test_database_starts_empty_and_accepts_writes(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS probe (n int)")
        assert conn.execute("SELECT count(*) FROM probe").fetchone() == (0,)
        conn.execute("INSERT INTO probe VALUES (1)")


def test_the_next_test_finds_the_tables_emptied(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM probe").fetchone() == (0,)


def test_the_server_survives_a_kill_and_restarts_on_the_same_port(postgres_server: PostgresServer) -> None:
    url = postgres_server.create_database()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE kept (n int)")
        conn.execute("INSERT INTO kept VALUES (7)")
    port = postgres_server.port
    postgres_server.kill()
    postgres_server.start()
    assert postgres_server.port == port
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT n FROM kept").fetchone() == (7,)
    postgres_server.drop_database(url)
