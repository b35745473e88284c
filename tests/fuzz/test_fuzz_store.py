"""The store readers against corrupt files: whatever a file of one session holds, that session loads or
reports SessionNotFound / SessionDamaged, and every other session, the listing and new sessions work."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iac_code.messages import Message, ToolCall, tool_result, user
from iac_code.sessions.files import FileSessionStore
from iac_code.sessions.store import SessionDamaged, SessionNotFound, SessionRecord

from .conftest import FUZZ, NASTY_TEXT, json_values

CALL = ToolCall(id="call_1", name="read_file", arguments={"path": "main.tf"})
HISTORY = [user("hello"), Message(role="assistant", text="", tool_calls=[CALL]), tool_result(CALL, "ok")]
TARGETS = ["index.jsonl", "b/meta.json", "b/messages.jsonl"]


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
        store = FileSessionStore(root, durable=False)
        listed = {record.session_id for record in store.list(None)[0]}
        for session_id in ("a", "b", "c"):
            try:
                record, messages = store.load(session_id)
            except (SessionNotFound, SessionDamaged):
                # b's own files may take b down; the index may only lose what a valid entry removes
                assert session_id == "b" or target == "index.jsonl"
                continue
            check_loaded(record, messages)
            if session_id != "b":
                assert messages == HISTORY and session_id in listed
        store.create(SessionRecord(session_id="d", cwd="/w"))
        store.append("d", user("after the damage"))
        assert FileSessionStore(root, durable=False).load("d")[1] == [user("after the damage")]
        store.close()
