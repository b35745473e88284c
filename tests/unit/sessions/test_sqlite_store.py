"""What only the SQLite store has: several processes on one database file, rows edited by hand, its schema
and file, and open_store's choice of it."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from iac_code.config import ConfigError, load_settings
from iac_code.database.migration_files import known_migrations
from iac_code.database.sqlite import connect, migrate
from iac_code.messages import Message, ToolCall, user
from iac_code.sessions.open import open_store
from iac_code.sessions.sqlite import SqliteSessions, SqliteSessionStore
from iac_code.sessions.store import SessionDamaged, SessionRecord

APPENDS = 200
# Appends `count` messages "<tag> <n>" to session s1 of the database, each its own transaction.
APPENDER = """
import sys
from pathlib import Path
from iac_code.messages import user
from iac_code.sessions.sqlite import SqliteSessions
store = SqliteSessions(Path(sys.argv[1]), durable=False)
for n in range(int(sys.argv[3])):
    store.append("s1", user(f"{sys.argv[2]} {n}"))
"""

# Appends "m <n>" to session s1, durably, printing n once each append has returned, until killed.
LOOP = """
import sys
from pathlib import Path
from iac_code.messages import user
from iac_code.sessions.sqlite import SqliteSessions
store = SqliteSessions(Path(sys.argv[1]))
for n in range(10**9):
    store.append("s1", user(f"m {n} " + "x" * 5000))
    print(n, flush=True)
"""


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "iac-code.db"


@pytest.fixture
def store(path: Path) -> SqliteSessions:
    store = SqliteSessions(path, durable=False)
    for session_id in ("good", "bad"):
        store.create(SessionRecord(session_id=session_id, cwd="/w", title=session_id))
        store.append(session_id, user(f"hello {session_id}"))
    return store


def edit(path: Path, statement: str, *params: object) -> None:
    """What a person with the sqlite3 shell might do."""
    with sqlite3.connect(path) as conn:
        conn.execute(statement, params)


def test_two_processes_appending_to_one_session_lose_and_repeat_nothing(path: Path) -> None:
    SqliteSessions(path, durable=False).create(SessionRecord(session_id="s1", cwd="/w"))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[3] / "src")}
    writers = [
        subprocess.Popen([sys.executable, "-c", APPENDER, str(path), tag, str(APPENDS)], env=env) for tag in "ab"
    ]
    for writer in writers:
        assert writer.wait(60) == 0
    _, history = SqliteSessions(path).load("s1")
    texts = [message.text for message in history]
    assert len(texts) == 2 * APPENDS
    for tag in "ab":
        assert [text for text in texts if text.startswith(tag)] == [f"{tag} {n}" for n in range(APPENDS)]


def test_every_append_that_returned_survives_a_kill_9(path: Path) -> None:
    SqliteSessions(path).create(SessionRecord(session_id="s1", cwd="/w"))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[3] / "src")}
    writer = subprocess.Popen([sys.executable, "-c", LOOP, str(path)], env=env, stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None
    acknowledged = -1
    while acknowledged < 200:
        acknowledged = int(writer.stdout.readline())
    writer.send_signal(signal.SIGKILL)
    writer.wait(10)
    _, history = SqliteSessions(path).load("s1")
    assert len(history) > acknowledged
    assert [m.text.split()[1] for m in history] == [str(n) for n in range(len(history))], "no gap, nothing torn"


@pytest.mark.parametrize(
    ("column", "value", "named"),
    [
        ("cwd", "not json", "cwd"),
        ("cwd", "5", "cwd"),
        ("permissions", '{"bash": "maybe"}', "permissions"),
        ("title", b"\xff\xfe", "title"),  # not UTF-8, not JSON
    ],
)
def test_a_record_edited_by_hand_damages_only_its_session(
    store: SqliteSessions, path: Path, column: str, value: object, named: str
) -> None:
    edit(path, f"UPDATE iac_sessions SET {column} = ? WHERE session_id = 'bad'", value)
    fresh = SqliteSessions(path)
    for read in (fresh.get, fresh.load):
        with pytest.raises(SessionDamaged, match=f"session bad is damaged: .*{named}"):
            read("bad")
    assert [record.session_id for record in fresh.list(None)[0]] == ["good"]
    assert fresh.load("good")[1] == [user("hello good")]
    fresh.append("good", user("still works"))


def test_text_that_is_not_utf8_in_another_row_breaks_no_listing(store: SqliteSessions, path: Path) -> None:
    edit(path, "UPDATE iac_sessions SET title = '\"' || CAST(? AS TEXT) || '\"' WHERE session_id = 'bad'", b"\xff")
    listed = SqliteSessions(path).list("/w")[0]
    assert {(record.session_id, record.title) for record in listed} == {("good", "good"), ("bad", "\ufffd")}


def test_a_message_edited_to_bad_json_is_dropped_and_the_log_rewritten(store: SqliteSessions, path: Path) -> None:
    calling = Message(role="assistant", tool_calls=[ToolCall("c1", "bash", {})])
    for message in (calling, user("after")):
        store.append("good", message)
    edit(path, "UPDATE iac_messages SET body = '{\"role\": 5' WHERE session_id = 'good' AND seq = 1")
    _, history = SqliteSessions(path).load("good")
    assert [(m.role, m.text) for m in history] == [("assistant", ""), ("tool", history[1].text), ("user", "after")]
    with sqlite3.connect(path) as conn:
        seqs = [seq for (seq,) in conn.execute("SELECT seq FROM iac_messages WHERE session_id = 'good' ORDER BY seq")]
    assert seqs == [1, 2, 3] and SqliteSessions(path).load("good")[1] == history


def test_the_database_is_private_and_in_wal_mode(store: SqliteSessions, path: Path) -> None:
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_durable_store_syncs_every_commit(path: Path) -> None:
    store = SqliteSessions(path)
    assert store.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert SqliteSessions(path, durable=False).conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL


def test_the_schema_is_applied_once_and_numbered_without_gaps(path: Path) -> None:
    versions = [m.version for m in known_migrations("sqlite_migrations")]
    assert versions == list(range(1, len(versions) + 1))
    conn = connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == versions[-1]
    assert migrate(conn) == [] and migrate(connect(path)) == []


async def test_open_store_defaults_to_sqlite_under_the_config_dir(tmp_path: Path) -> None:
    store = await open_store(load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path / "config")}))
    try:
        assert isinstance(store, SqliteSessionStore) and store.inner.path == tmp_path / "config" / "iac-code.db"
        await store.create(SessionRecord(session_id="s1", cwd="/w"))
        assert [record.session_id for record in (await store.list(None))[0]] == ["s1"]
    finally:
        await store.close()


async def test_open_store_names_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    (tmp_path / "iac-code.db").write_text(json.dumps({"not": "a database"}) * 100)
    with pytest.raises(ConfigError, match="iac-code.db"):
        await open_store(load_settings({"IAC_CODE_CONFIG_DIR": str(tmp_path)}))
