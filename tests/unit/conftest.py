"""Fixtures shared by unit tests: what acts on a workspace (tools/, acp/client_io.py), and the store a
session writes to (agent/ and acp/ session tests)."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from iac_code.sessions.sqlite import SqliteSessionStore, open_sqlite_store
from iac_code.sessions.store import SessionRecord


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the workspace holding a file no tool may touch."""
    other = tmp_path / "outside"
    other.mkdir()
    (other / "secret.txt").write_text("top secret\n")
    return other


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteSessionStore]:
    """The store a server opens by default (SQLite, without syncs), holding the empty session "s1"."""
    store = open_sqlite_store(tmp_path / "iac-code.db", durable=False)
    await store.create(SessionRecord(session_id="s1", cwd=str(tmp_path)))
    yield store
    await store.close()
