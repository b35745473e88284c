"""The one-time import of a file store (written here by the file store's own code) into the database."""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from iac_code.config import load_settings
from iac_code.database.sqlite import connect
from iac_code.messages import Message, ToolCall, tool_result, user
from iac_code.sessions import import_files
from iac_code.sessions.files import FileSessionStore
from iac_code.sessions.import_files import Imported, import_file_store
from iac_code.sessions.open import open_store
from iac_code.sessions.repair import INTERRUPTED
from iac_code.sessions.sqlite import SqliteSessions
from iac_code.sessions.store import RecordChanges, SessionNotFound, SessionRecord

CALL = ToolCall("c1", "read_file", {"path": "main.tf"})
MTIME_TICK = timedelta(milliseconds=20)


def _moment(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def tree(root: Path) -> dict[str, str]:
    """Every file under root with a digest of its content: what "untouched" means."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()
    }


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """A config directory holding a file store of an earlier version: three good sessions, one whose
    meta.json was damaged, one left by a create that crashed before its meta.json."""
    files = FileSessionStore(tmp_path / "sessions", durable=False)
    files.create(SessionRecord(session_id="plain", cwd="/a", title="Plain", permissions={"bash": "allow"}))
    files.append("plain", user("hello"))
    files.create(SessionRecord(session_id="dangling", cwd="/a", mode="plan"))
    files.append("dangling", user("look"))
    files.append("dangling", Message(role="assistant", text="Reading.", tool_calls=[CALL]))
    files.create(SessionRecord(session_id="torn", cwd="/b"))
    files.append("torn", user("kept"))
    with (tmp_path / "sessions" / "torn" / "messages.jsonl").open("a") as log:
        log.write('{"role":"assistant","text":"torn in the midd')
    files.create(SessionRecord(session_id="damaged", cwd="/a"))
    meta = tmp_path / "sessions" / "damaged" / "meta.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "cwd": 5}))
    (tmp_path / "sessions" / "crashed").mkdir()
    files.update("plain", RecordChanges(title="Plain, renamed"))
    return tmp_path


def test_every_readable_session_is_imported_repaired_and_the_files_are_untouched(
    config: Path, caplog: pytest.LogCaptureFixture
) -> None:
    before = tree(config / "sessions")
    expected = {name: FileSessionStore(config / "sessions", durable=False).get(name) for name in ("plain", "dangling")}
    conn = connect(config / "iac-code.db", durable=False)
    with caplog.at_level(logging.INFO):
        assert import_file_store(conn, config / "sessions") == Imported(sessions=3, skipped=1)
    assert tree(config / "sessions") == before
    assert "session damaged not imported" in caplog.text and "cwd must be a string" in caplog.text
    assert sum("imported 3 sessions" in r.getMessage() for r in caplog.records) == 1

    store = SqliteSessions(config / "iac-code.db")
    assert {r.session_id for r in store.list("/a")[0]} == {"plain", "dangling"}
    assert store.get("plain").title == "Plain, renamed" and store.get("plain").permissions == {"bash": "allow"}
    assert store.get("dangling").mode == "plan"
    for name, record in expected.items():
        imported = store.get(name)
        assert (imported.created_at, imported.cwd) == (record.created_at, record.cwd)
        # the import takes the last append's time from the log's mtime, which the kernel stamps from a coarse
        # clock: it may read up to a tick (a few ms) before the time the file store's index wrote down
        assert _moment(imported.updated_at) >= _moment(record.updated_at) - MTIME_TICK
    assert store.load("plain")[1] == [user("hello")]
    assert store.load("dangling")[1][-1] == tool_result(CALL, INTERRUPTED, is_error=True)
    assert store.load("torn")[1] == [user("kept")]
    for missing in ("damaged", "crashed"):
        with pytest.raises(SessionNotFound):
            store.get(missing)


def test_an_import_happens_once(config: Path) -> None:
    conn = connect(config / "iac-code.db", durable=False)
    assert import_file_store(conn, config / "sessions") is not None
    SqliteSessions(config / "iac-code.db").delete("plain")
    assert import_file_store(conn, config / "sessions") is None
    assert import_file_store(connect(config / "iac-code.db"), config / "sessions") is None
    with pytest.raises(SessionNotFound):
        SqliteSessions(config / "iac-code.db").get("plain")  # a session deleted since is not brought back


def test_no_file_store_no_import(tmp_path: Path) -> None:
    assert import_file_store(connect(tmp_path / "iac-code.db", durable=False), tmp_path / "sessions") is None


def test_a_failure_midway_imports_nothing_and_the_next_start_imports_everything(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = tree(config / "sessions")
    real_insert, inserted = import_files._insert, []

    def insert_then_fail(*args: object) -> bool:
        if inserted:
            raise OSError("disk full")
        inserted.append(real_insert(*args))
        return True

    monkeypatch.setattr(import_files, "_insert", insert_then_fail)
    with pytest.raises(OSError):
        import_file_store(connect(config / "iac-code.db", durable=False), config / "sessions")
    assert inserted and SqliteSessions(config / "iac-code.db").list(None) == ([], None)
    assert tree(config / "sessions") == before

    monkeypatch.undo()
    assert import_file_store(connect(config / "iac-code.db"), config / "sessions") == Imported(3, 1)
    assert tree(config / "sessions") == before


async def test_open_store_imports_before_answering_and_logs_a_failure_without_failing(
    config: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    settings = load_settings({"IAC_CODE_CONFIG_DIR": str(config)})

    def fail(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(import_files, "_insert", fail)
    store = await open_store(settings)
    try:
        assert await store.list(None) == ([], None)  # serving, without the old sessions
    finally:
        await store.close()
    assert "importing the sessions of" in caplog.text and "tried again at the next start" in caplog.text

    monkeypatch.undo()
    store = await open_store(settings)
    try:
        assert {r.session_id for r in (await store.list(None))[0]} == {"plain", "dangling", "torn"}
        with pytest.raises(SessionNotFound):
            await store.get("damaged")
    finally:
        await store.close()
