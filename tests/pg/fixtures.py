"""Fixtures for tests against a real PostgreSQL (loaded for the whole suite by tests/conftest.py).

- `postgres_server` (session): the one throwaway `PostgresServer`, started on first use, removed at the end.
- `pg_module_url` (module): a fresh database for the test module.
- `pg_url` (function): that database with every table emptied (migration bookkeeping kept), for one test.

Without PostgreSQL binaries the tests that use them skip, except under CI=true, where they fail:
CI must never go green by not running them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from tests.pg.server import PostgresServer, PostgresUnavailable, truncate_all


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    try:
        server = PostgresServer()
    except PostgresUnavailable as exc:
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail(f"CI=true and {exc}", pytrace=False)
        pytest.skip(str(exc))
    try:
        server.start()
        yield server
    finally:
        server.remove()


@pytest.fixture(scope="module")
def pg_module_url(postgres_server: PostgresServer) -> Iterator[str]:
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)


@pytest.fixture
def pg_url(pg_module_url: str) -> str:
    truncate_all(pg_module_url)
    return pg_module_url
