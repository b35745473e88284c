"""Store files damaged by hand or by an attacker: the damage stays with its own session."""

from __future__ import annotations

from pathlib import Path

import pytest

from iac_code.messages import user
from iac_code.sessions.files import FileSessionStore
from iac_code.sessions.store import SessionDamaged, SessionNotFound

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


def _index_line(root: Path, line: bytes) -> None:
    with (root / "index.jsonl").open("ab") as index:
        index.write(line + b"\n")


def _listed(root: Path) -> list[str]:
    return sorted(r.session_id for r in FileSessionStore(root, durable=False).list(None)[0])


@pytest.mark.parametrize(
    "line",
    [
        b'{"put":{"session_id":"x1","cwd":5,"title":"","created_at":"","updated_at":"","model":"","mode":"default","permissions":{}}}',
        b'{"put":{"session_id":7,"cwd":"/w","title":"","created_at":"","updated_at":"","model":"","mode":"default","permissions":{}}}',
        b'{"put":{"session_id":"x1","cwd":"/w","title":"","created_at":"","updated_at":"","model":"","mode":"default","permissions":"all"}}',
        b'{"put":{"session_id":"../x","cwd":"/w","title":"","created_at":"","updated_at":"","model":"","mode":"default","permissions":{}}}',
        b'{"put":{"session_id":"x1","cwd":"/w","title":[],"created_at":"","updated_at":1,"model":"","mode":"default","permissions":{"bash":1}}}',
        b'{"touch":"s1","at":5}',
        b'{"touch":["s1"],"at":"2020-01-01T00:00:00.000Z"}',
        b'{"drop":[1]}',
        b'{"drop":{}}',
        b"5",
        b'"text"',
        b"null",
        b"[]",
        b"{}",
    ],
)
def test_a_wrong_typed_index_line_breaks_no_listing(store: FileSessionStore, root: Path, line: bytes) -> None:
    make_session(store, "s1")
    make_session(store, "s2", cwd="/elsewhere")
    _index_line(root, line)
    fresh = FileSessionStore(root, durable=False)
    assert sorted(r.session_id for r in fresh.list(None)[0]) == ["s1", "s2"]
    assert [r.session_id for r in fresh.list("/work/project")[0]] == ["s1"]
    assert fresh.get("s1").cwd == "/work/project"
    store.append("s1", user("still writable"))
    assert fresh.load("s1")[1] == [user("still writable")]


@pytest.mark.parametrize(
    ("meta", "named"),
    [
        (b'{"session_id":"bad","cwd":5}', "cwd"),
        (b'{"session_id":"bad","cwd":"/w","permissions":{"bash":"maybe"}}', "permissions"),
        (b'{"session_id":"bad","cwd":"/w","colour":"red"}', "colour"),
        (b"[1, 2]", "meta.json"),
        (b"not json", "meta.json"),
    ],
)
def test_a_corrupt_meta_json_affects_only_its_session(
    store: FileSessionStore, root: Path, meta: bytes, named: str
) -> None:
    make_session(store, "good")
    make_session(store, "bad")
    (root / "bad" / "meta.json").write_bytes(meta)
    (root / "index.jsonl").unlink()  # the index is rebuilt from every meta.json
    fresh = FileSessionStore(root, durable=False)
    assert [r.session_id for r in fresh.list(None)[0]] == ["good"]
    with pytest.raises(SessionDamaged, match=rf"session bad .*{named}"):
        fresh.load("bad")
    with pytest.raises(SessionDamaged):
        fresh.get("bad")
    assert fresh.load("good")[0].session_id == "good"
    fresh.delete("bad")  # a damaged session can still be deleted
    with pytest.raises(SessionNotFound):
        fresh.get("bad")


def test_a_message_line_of_wrong_types_is_dropped(store: FileSessionStore, root: Path) -> None:
    make_session(store, "s1")
    store.append("s1", user("one"))
    with (root / "s1" / "messages.jsonl").open("ab") as log:
        for bad in (
            b'{"role":"user","text":123}',
            b'{"role":"wizard","text":"x"}',
            b'{"role":"assistant","tool_calls":[{"id":1,"name":"bash","arguments":{}}]}',
            b'{"role":"assistant","tool_calls":[{"id":"c","name":"bash","arguments":[]}]}',
            b'{"role":"tool","is_error":"yes"}',
            b'{"role":"user","kept":-1,"summary":true}',
            b"[]",
        ):
            log.write(bad + b"\n")
    store.append("s1", user("two"))
    assert FileSessionStore(root, durable=False).load("s1")[1] == [user("one"), user("two")]


def test_a_directory_in_place_of_the_log_is_a_clear_error_for_that_session_only(
    store: FileSessionStore, root: Path
) -> None:
    make_session(store, "good")
    make_session(store, "bad")
    log = root / "bad" / "messages.jsonl"
    log.unlink()
    log.mkdir()
    with pytest.raises(SessionDamaged, match="session bad .*messages.jsonl"):
        store.load("bad")
    with pytest.raises(SessionDamaged, match="session bad"):
        store.append("bad", user("x"))
    with pytest.raises(SessionDamaged, match="session bad"):
        store.fork("bad", "copy")
    assert _listed(root) == ["bad", "good"]  # listed (its record is fine), loadable it is not
    store.append("good", user("fine"))
    assert store.load("good")[1] == [user("fine")]


def test_lone_surrogates_never_break_the_store_for_other_sessions(store: FileSessionStore, root: Path) -> None:
    make_session(store, "good", title="fine")
    make_session(store, "odd", title="a\ud800b")  # written as U+FFFD, never as an unencodable line
    store.append("odd", user("x\udfffy"))
    (root / "good" / "meta.json").write_bytes(
        (root / "good" / "meta.json").read_bytes().replace(b'"fine"', b'"\\udc00 by hand"')
    )
    (root / "index.jsonl").unlink()  # the rebuild reads both meta.json files back
    fresh = FileSessionStore(root, durable=False)
    assert {r.session_id: r.title for r in fresh.list(None)[0]} == {"good": "\ufffd by hand", "odd": "a\ufffdb"}
    assert fresh.load("odd")[1] == [user("x\ufffdy")]
    make_session(fresh, "later")
    assert fresh.get("later").session_id == "later"


def test_an_index_that_is_not_a_file_is_moved_aside_and_rebuilt(store: FileSessionStore, root: Path) -> None:
    make_session(store, "s1")
    (root / "index.jsonl").unlink()
    (root / "index.jsonl").mkdir()  # found by tests/fuzz: it made every store call fail
    fresh = FileSessionStore(root, durable=False)
    assert [r.session_id for r in fresh.list(None)[0]] == ["s1"]
    assert (root / "index.jsonl").is_file()
