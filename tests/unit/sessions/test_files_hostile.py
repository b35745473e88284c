"""Store files damaged by hand or by an attacker: the damage stays with its own session."""

from __future__ import annotations

from pathlib import Path

from iac_code.messages import user
from iac_code.sessions.files import FileSessionStore

from .conftest import make_session

DEEP = b"[" * 1000 + b"]" * 1000


def test_a_deeply_nested_index_line_is_a_bad_line(store: FileSessionStore, root: Path) -> None:
    make_session(store, "s1")
    with (root / "index.jsonl").open("ab") as index:
        index.write(DEEP + b"\n")
    fresh = FileSessionStore(root, durable=False)
    assert [r.session_id for r in fresh.list(None)[0]] == ["s1"]  # rebuilt from meta.json


def test_a_deeply_nested_meta_json_skips_only_its_session(store: FileSessionStore, root: Path) -> None:
    make_session(store, "good")
    make_session(store, "bad")
    (root / "bad" / "meta.json").write_bytes(b'{"session_id":"bad","cwd":' + DEEP + b"}")
    (root / "index.jsonl").unlink()
    assert [r.session_id for r in FileSessionStore(root, durable=False).list(None)[0]] == ["good"]


def test_a_deeply_nested_message_line_is_dropped(store: FileSessionStore, root: Path) -> None:
    make_session(store, "s1")
    store.append("s1", user("one"))
    with (root / "s1" / "messages.jsonl").open("ab") as log:
        log.write(b'{"role":"user","text":' + DEEP + b"}\n")
    store.append("s1", user("two"))
    assert FileSessionStore(root, durable=False).load("s1")[1] == [user("one"), user("two")]
