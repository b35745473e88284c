from pathlib import Path

import pytest

from iac_code.sessions.files import FileSessionStore
from iac_code.sessions.store import SessionRecord


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


@pytest.fixture
def store(root: Path) -> FileSessionStore:
    # Durability (fsync) is measured in bench/sessions.py; the tests exercise the logic.
    return FileSessionStore(root, durable=False)


def make_session(
    store: FileSessionStore, session_id: str, cwd: str = "/work/project", **fields: object
) -> SessionRecord:
    store.create(SessionRecord(session_id=session_id, cwd=cwd, **fields))  # type: ignore[arg-type]
    return store.get(session_id)
