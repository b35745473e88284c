"""The store readers against corrupt data. The import of an old file store: whatever a file of one session
holds, that session is imported (repaired) or skipped, and every other session is imported. The SQLite store:
whatever a row of one session holds, that session loads or reports SessionDamaged, and every other
session, the listing and new sessions work."""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iac_code.database.sqlite import connect
from iac_code.messages import Message, ToolCall, tool_result, user
from iac_code.sessions.files import FileSessionStore
from iac_code.sessions.import_files import import_file_store
from iac_code.sessions.sqlite import SqliteSessions
from iac_code.sessions.store import SessionDamaged, SessionRecord

from .conftest import FUZZ, NASTY_TEXT, json_values

CALL = ToolCall(id="call_1", name="read_file", arguments={"path": "main.tf"})
HISTORY = [user("hello"), Message(role="assistant", text="", tool_calls=[CALL]), tool_result(CALL, "ok")]
TARGETS = ["b/meta.json", "b/messages.jsonl"]  # what the import reads (never index.jsonl)


@pytest.fixture(scope="module")
def pristine() -> Iterator[Path]:
    """Three sessions a, b, c with a short history each, built once and copied for every example."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "sessions"
        store = FileSessionStore(root, durable=False)
        for session_id in ("a", "b", "c"):
            store.create(SessionRecord(session_id=session_id, cwd="/w", title=f"session {session_id}"))
            for message in HISTORY:
                store.append(session_id, message)
        store.close()
        yield root


MESSAGE_LIKE = st.fixed_dictionaries(
    {},
    optional={
        "role": st.one_of(st.sampled_from(["user", "assistant", "tool"]), json_values(2)),
        "text": st.one_of(NASTY_TEXT, json_values(3)),
        "tool_calls": st.one_of(
            st.lists(
                st.fixed_dictionaries({"id": json_values(1), "name": json_values(1), "arguments": json_values(3)})
            ),
            json_values(3),
        ),
        "kept": json_values(1),
        "summary": json_values(1),
    },
)
RECORD_LIKE = st.fixed_dictionaries(
    {},
    optional={
        "session_id": st.one_of(st.just("b"), json_values(1)),
        "cwd": st.one_of(st.just("/w"), json_values(2)),
        "title": json_values(2),
        "updated_at": json_values(1),
        "permissions": json_values(3),
        "mode": json_values(1),
    },
)
INDEX_ENTRY = st.one_of(
    RECORD_LIKE.map(lambda record: {"put": record}),
    st.fixed_dictionaries({"touch": json_values(1), "at": json_values(1)}),
    st.fixed_dictionaries({"drop": json_values(1)}),
    json_values(),
)


def json_line(value: Any) -> bytes:
    return json.dumps(value).encode("utf-8", "surrogatepass") + b"\n"


MUTATION = st.one_of(
    st.tuples(st.just("replace"), st.binary(max_size=300)),
    st.tuples(st.just("append"), st.binary(max_size=200)),
    st.tuples(
        st.just("append"),
        st.lists(st.one_of(MESSAGE_LIKE, INDEX_ENTRY, RECORD_LIKE), max_size=3).map(
            lambda values: b"".join(json_line(v) for v in values)
        ),
    ),
    st.tuples(st.just("replace"), RECORD_LIKE.map(json_line)),
    st.tuples(st.just("append"), st.integers(0, 3000).map(lambda depth: b"[" * depth + b"]" * depth + b"\n")),
    st.tuples(st.just("truncate"), st.integers(0, 2000)),
    st.tuples(st.just("flip"), st.integers(0, 2000)),
    st.tuples(st.just("directory"), st.none()),
)


def mutate(path: Path, kind: str, argument: Any) -> None:
    data = path.read_bytes()
    if kind == "replace":
        path.write_bytes(argument)
    elif kind == "append":
        path.write_bytes(data + argument)
    elif kind == "truncate":
        path.write_bytes(data[: argument % (len(data) + 1)])
    elif kind == "flip" and data:
        position = argument % len(data)
        path.write_bytes(data[:position] + bytes([data[position] ^ 0xFF]) + data[position + 1 :])
    elif kind == "directory":
        path.unlink()
        path.mkdir()


def check_loaded(record: SessionRecord, messages: list[Message]) -> None:
    assert all(isinstance(getattr(record, name), str) for name in ("session_id", "cwd", "title", "updated_at"))
    json.dumps([m.to_dict() for m in messages], allow_nan=False).encode()  # all of it can be written back
    for message in messages:
        assert message.role in ("user", "assistant", "tool") and isinstance(message.text, str)


@settings(FUZZ, max_examples=200)
@given(st.sampled_from(TARGETS), MUTATION)
def test_a_corrupt_file_stays_with_its_session(pristine: Path, target: str, mutation: tuple[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "sessions"
        shutil.copytree(pristine, root)
        mutate(root / target, *mutation)
        imported = import_file_store(connect(Path(folder) / "iac-code.db", durable=False), root)
        assert imported is not None and imported.sessions + imported.skipped == 3
        store = SqliteSessions(Path(folder) / "iac-code.db", durable=False)
        listed = {record.session_id for record in store.list(None)[0]}
        assert {"a", "c"} <= listed and imported.sessions == len(listed)
        for session_id in sorted(listed):
            record, messages = store.load(session_id)
            check_loaded(record, messages)
            if session_id != "b":
                assert messages == HISTORY


@pytest.fixture(scope="module")
def pristine_database(pristine: Path) -> Iterator[Path]:
    """The same three sessions in a database."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "iac-code.db"
        conn = connect(path, durable=False)
        import_file_store(conn, pristine)
        conn.close()  # the last connection checkpoints the WAL into the file: one file to copy
        yield path


COLUMNS = ["cwd", "title", "created_at", "updated_at", "model", "mode", "permissions"]
CELL = st.one_of(
    st.binary(max_size=100),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=True),
    st.none(),
    json_values(3).map(lambda value: json.dumps(value)),
    NASTY_TEXT.map(lambda text: text.encode("utf-8", "surrogatepass")),
)
ROW_MUTATION = st.one_of(
    st.tuples(st.sampled_from(COLUMNS), CELL).map(
        lambda change: (f"UPDATE iac_sessions SET {change[0]} = ? WHERE session_id = 'b'", change[1])
    ),
    st.tuples(st.integers(1, 3), st.one_of(CELL, MESSAGE_LIKE.map(json.dumps))).map(
        lambda change: (f"UPDATE iac_messages SET body = ? WHERE session_id = 'b' AND seq = {change[0]}", change[1])
    ),
)


@settings(FUZZ, max_examples=200)
@given(ROW_MUTATION)
def test_a_corrupt_row_stays_with_its_session(pristine_database: Path, mutation: tuple[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "iac-code.db"
        shutil.copyfile(pristine_database, path)
        with sqlite3.connect(path) as conn:
            try:
                conn.execute(*mutation[:1], mutation[1:])
            except sqlite3.IntegrityError:
                return  # a NOT NULL column refused the value: nothing was damaged
        store = SqliteSessions(path, durable=False)
        listed = {record.session_id for record in store.list(None)[0]}
        assert {"a", "c"} <= listed
        for session_id in ("a", "b", "c"):
            try:
                record, messages = store.load(session_id)
            except SessionDamaged:
                assert session_id == "b" and "b" not in listed
                continue
            check_loaded(record, messages)
            if session_id != "b":
                assert messages == HISTORY
        store.create(SessionRecord(session_id="d", cwd="/w"))
        store.append("d", user("after the damage"))
        assert SqliteSessions(path, durable=False).load("d")[1] == [user("after the damage")]
        store.close()
