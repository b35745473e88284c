"""A config directory holding the file store of an earlier version, written by the file store's own code:
the real server imports it on its first start, once, and a crash midway loses nothing."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path

from tests.e2e.sessions.conftest import kill
from tests.e2e.sessions.flows import load, replayed, summary

from iac_code.messages import Message, ToolCall, user
from iac_code.sessions.files import FileSessionStore
from iac_code.sessions.store import RecordChanges, SessionRecord

READ = ToolCall("call_read", "read_file", {"path": "main.tf"})


def tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()
    }


def imports(agent) -> list[str]:
    return [line for line in agent.stderr_lines if "sessions of the file store" in line]


def recorded_imports(config_dir: Path) -> list[tuple[str, int, int]]:
    with sqlite3.connect(config_dir / "iac-code.db") as conn:
        return conn.execute("SELECT source, sessions, skipped FROM iac_imports").fetchall()


def test_the_first_start_imports_the_old_sessions_once(spawn, model, workspace, config_dir):
    files = FileSessionStore(config_dir / "sessions")
    files.create(SessionRecord(session_id="sess_older", cwd=str(workspace)))
    files.create(SessionRecord(session_id="sess_old", cwd=str(workspace)))
    for message in (user("what is in main.tf?"), Message(role="assistant", text="Let me look.", tool_calls=[READ])):
        files.append("sess_old", message)  # the old server died with the read unanswered
    files.update("sess_old", RecordChanges(title="What is in main.tf"))
    files.create(SessionRecord(session_id="sess_damaged", cwd=str(workspace)))
    meta = config_dir / "sessions" / "sess_damaged" / "meta.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "cwd": 5}))
    before = tree(config_dir / "sessions")

    first = spawn()
    listed = first.result("session/list", {"cwd": str(workspace)})["sessions"]
    assert [(s["sessionId"], s.get("title")) for s in listed] == [
        ("sess_old", "What is in main.tf"),
        ("sess_older", None),
    ]
    response, before_response = load(first, "sess_old", workspace)
    assert "result" in response
    assert [summary(u) for u in replayed(before_response, "sess_old")] == [
        ("user_message_chunk", "what is in main.tf?"),
        ("agent_message_chunk", "Let me look."),
        ("tool_call", "call_read", "pending"),
        ("tool_call_update", "call_read", "failed"),  # answered "interrupted", as the file store did
    ]
    assert first.close() == 0
    assert len(imports(first)) == 1 and "imported 2 sessions" in imports(first)[0]
    assert any("sess_damaged not imported" in line for line in first.stderr_lines)
    assert tree(config_dir / "sessions") == before, "the old files are left as they were"

    second = spawn()
    second.result("session/delete", {"sessionId": "sess_older"})
    assert second.close() == 0
    third = spawn()
    assert [s["sessionId"] for s in third.result("session/list", {"cwd": str(workspace)})["sessions"]] == ["sess_old"]
    assert third.close() == 0
    assert imports(second) == imports(third) == [] and len(recorded_imports(config_dir)) == 1


def _import_in_progress(config_dir: Path) -> bool:
    """Whether the schema is in place and a write transaction is open: the import, the only write then."""
    try:
        conn = sqlite3.connect(f"file:{config_dir / 'iac-code.db'}?mode=rw", uri=True, timeout=0)
    except sqlite3.OperationalError:
        return False  # not created yet
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] == 0:
            return False
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError as exc:
        return "locked" in str(exc) and conn.in_transaction is False and _schema_committed(conn)
    finally:
        conn.close()


def _schema_committed(conn: sqlite3.Connection) -> bool:
    try:
        return conn.execute("PRAGMA user_version").fetchone()[0] > 0
    except sqlite3.OperationalError:
        return False


def test_a_kill_midway_leaves_the_files_intact_and_the_next_start_imports(spawn, workspace, config_dir):
    files = FileSessionStore(config_dir / "sessions", durable=False)
    names = [f"sess_{n:03d}" for n in range(300)]
    for name in names:  # enough that the import takes a moment
        files.create(SessionRecord(session_id=name, cwd=str(workspace if name.endswith("7") else config_dir)))
        for n in range(20):
            files.append(name, user(f"{name} message {n} " + "x" * 2000))
    before = tree(config_dir / "sessions")

    first = spawn()
    deadline = time.monotonic() + 30
    while not _import_in_progress(config_dir):
        assert time.monotonic() < deadline and not imports(first), "the import was not seen in progress"
    kill(first)
    assert imports(first) == [] and recorded_imports(config_dir) == []
    with sqlite3.connect(config_dir / "iac-code.db") as conn:
        assert conn.execute("SELECT count(*) FROM iac_sessions").fetchone()[0] == 0, "nothing half-imported"
    assert tree(config_dir / "sessions") == before

    second = spawn()
    listed = second.result("session/list", {"cwd": str(workspace)})["sessions"]
    assert sorted(s["sessionId"] for s in listed) == [name for name in names if name.endswith("7")]
    assert second.close() == 0
    assert len(imports(second)) == 1 and recorded_imports(config_dir) == [(str(config_dir / "sessions"), 300, 0)]
    assert tree(config_dir / "sessions") == before
