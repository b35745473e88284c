"""FileSessionStore: records and logs round-trip, survive a new store instance, fork/clear/delete."""

import json
import re
from pathlib import Path

import pytest

from iac_code.messages import Message, ToolCall, tool_result, user
from iac_code.sessions.files import FileSessionStore
from iac_code.sessions.store import RecordChanges, SessionNotFound, SessionRecord

from .conftest import make_session

ISO_MS_Z = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def conversation() -> list[Message]:
    call = ToolCall(id="call_1", name="read_file", arguments={"path": "main.tf", "limit": 20})
    return [
        user("Write a VPC module — with ünïcode"),
        Message(role="assistant", text="Reading.", thinking="hmm", thinking_signature="sig", tool_calls=[call]),
        tool_result(call, 'resource "x" {}\n' * 50),
        Message(role="user", text="summary so far", summary=True, kept=1),
        Message(role="assistant", text="Done."),
    ]


def test_create_fills_times_and_round_trips(store: FileSessionStore, root: Path) -> None:
    record = make_session(store, "s1", title="VPC", model="qwen-max", mode="plan", permissions={"bash": "allow"})
    assert (record.title, record.model, record.mode, record.permissions) == (
        "VPC",
        "qwen-max",
        "plan",
        {"bash": "allow"},
    )
    assert ISO_MS_Z.fullmatch(record.created_at) and record.updated_at == record.created_at
    assert json.loads((root / "s1" / "meta.json").read_text())["title"] == "VPC"
    assert FileSessionStore(root).get("s1") == record


def test_create_twice_is_refused(store: FileSessionStore) -> None:
    make_session(store, "s1")
    with pytest.raises(ValueError):
        make_session(store, "s1")


def test_messages_are_durable_across_store_instances(store: FileSessionStore, root: Path) -> None:
    make_session(store, "s1")
    for message in conversation():
        store.append("s1", message)
    record, messages = FileSessionStore(root).load("s1")
    assert messages == conversation()
    assert record.session_id == "s1"
    lines = (root / "s1" / "messages.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [m.to_dict() for m in conversation()]


def test_append_bumps_updated_at_without_rewriting_meta(store: FileSessionStore, root: Path) -> None:
    record = make_session(store, "s1", created_at="2020-01-01T00:00:00.000Z", updated_at="2020-01-01T00:00:00.000Z")
    meta_before = (root / "s1" / "meta.json").read_bytes()
    store.append("s1", user("hi"))
    bumped = FileSessionStore(root).get("s1")
    assert bumped.updated_at > record.updated_at and ISO_MS_Z.fullmatch(bumped.updated_at)
    assert bumped.created_at == record.created_at
    assert (root / "s1" / "meta.json").read_bytes() == meta_before


def test_unknown_session(store: FileSessionStore) -> None:
    for call in (
        lambda: store.get("nope"),
        lambda: store.load("nope"),
        lambda: store.append("nope", user("x")),
        lambda: store.update("nope", RecordChanges(title="x")),
        lambda: store.fork("nope", "new"),
        lambda: store.clear("nope"),
    ):
        with pytest.raises(SessionNotFound):
            call()


def test_update_changes_metadata_everywhere(store: FileSessionStore, root: Path) -> None:
    before = make_session(store, "s1", created_at="2020-01-01T00:00:00.000Z", updated_at="2020-01-01T00:00:00.000Z")
    after = store.update("s1", RecordChanges(title="New title", mode="plan", permissions={"write_file": "reject"}))
    assert (after.title, after.mode, after.permissions) == ("New title", "plan", {"write_file": "reject"})
    assert after.updated_at > before.updated_at and after.created_at == before.created_at
    assert FileSessionStore(root).get("s1") == after
    assert json.loads((root / "s1" / "meta.json").read_text())["permissions"] == {"write_file": "reject"}


def test_returned_records_do_not_alias_the_store(store: FileSessionStore) -> None:
    record = make_session(store, "s1", permissions={"bash": "allow"})
    record.permissions["bash"] = "reject"
    record.title = "changed"
    assert store.get("s1").permissions == {"bash": "allow"}
    assert store.get("s1").title == ""


def test_fork_copies_log_and_metadata_independently(store: FileSessionStore, root: Path) -> None:
    source = make_session(
        store,
        "src",
        title="T",
        model="m",
        mode="plan",
        permissions={"bash": "allow"},
        created_at="2020-01-01T00:00:00.000Z",
        updated_at="2020-01-01T00:00:00.000Z",
    )
    for message in conversation():
        store.append("src", message)
    fork = store.fork("src", "dst")
    assert (fork.session_id, fork.cwd, fork.title, fork.model, fork.mode, fork.permissions) == (
        "dst",
        source.cwd,
        "T",
        "m",
        "plan",
        {"bash": "allow"},
    )
    assert fork.created_at > source.created_at
    store.append("dst", user("only in the fork"))
    store.append("src", user("only in the source"))
    store.update("dst", RecordChanges(permissions={}))
    fresh = FileSessionStore(root)
    assert fresh.load("dst")[1] == [*conversation(), user("only in the fork")]
    assert fresh.load("src")[1] == [*conversation(), user("only in the source")]
    assert fresh.get("src").permissions == {"bash": "allow"}


def test_fork_onto_an_existing_id_is_refused(store: FileSessionStore) -> None:
    make_session(store, "a")
    make_session(store, "b")
    store.append("b", user("keep me"))
    with pytest.raises(ValueError):
        store.fork("a", "b")
    assert store.load("b")[1] == [user("keep me")]


def test_clear_empties_the_log_and_keeps_metadata(store: FileSessionStore, root: Path) -> None:
    before = make_session(store, "s1", title="T", permissions={"bash": "allow"})
    for message in conversation():
        store.append("s1", message)
    store.clear("s1")
    store.append("s1", user("fresh start"))
    record, messages = FileSessionStore(root).load("s1")
    assert messages == [user("fresh start")]
    assert (record.title, record.permissions, record.created_at) == ("T", {"bash": "allow"}, before.created_at)


def test_delete_is_complete_and_idempotent(store: FileSessionStore, root: Path) -> None:
    make_session(store, "s1")
    make_session(store, "s2")
    store.append("s1", user("x"))
    store.delete("s1")
    store.delete("s1")
    store.delete("never-existed")
    assert not (root / "s1").exists()
    assert [entry.name for entry in root.iterdir() if entry.is_dir()] == ["s2"]
    with pytest.raises(SessionNotFound):
        store.get("s1")
    fresh = FileSessionStore(root)
    assert [r.session_id for r in fresh.list(None)[0]] == ["s2"]
    make_session(fresh, "s1")  # the id is free again
    assert fresh.load("s1")[1] == []


BAD_IDS = ["../x", "/etc", "", "a" * 129, "a/b", ".", "..", "x\n", "x y", "index.jsonl", "é"]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_bad_ids_are_refused_and_never_escape_root(store: FileSessionStore, root: Path, bad: str) -> None:
    make_session(store, "good")
    outside_before = sorted(p.name for p in root.parent.iterdir())
    with pytest.raises(ValueError):
        store.create(SessionRecord(session_id=bad, cwd="/w"))
    with pytest.raises(ValueError):
        store.fork("good", bad)
    for call in (
        lambda: store.get(bad),
        lambda: store.load(bad),
        lambda: store.append(bad, user("x")),
        lambda: store.update(bad, RecordChanges(title="x")),
        lambda: store.clear(bad),
        lambda: store.fork(bad, "other"),
    ):
        with pytest.raises(SessionNotFound):
            call()
    store.delete(bad)
    assert sorted(p.name for p in root.parent.iterdir()) == outside_before
    assert sorted(p.name for p in root.iterdir()) == ["good", "index.jsonl", "index.lock"]


def test_longest_valid_id_is_accepted(store: FileSessionStore) -> None:
    session_id = "A-z_9" * 25 + "abc"
    assert len(session_id) == 128
    make_session(store, session_id)
    store.append(session_id, user("x"))
    assert store.load(session_id)[1] == [user("x")]


def test_files_are_private(store: FileSessionStore, root: Path) -> None:
    make_session(store, "s1")
    store.append("s1", user("secret"))
    for path in (root / "s1", root / "s1" / "messages.jsonl", root / "s1" / "meta.json"):
        assert path.stat().st_mode & 0o077 == 0, path


def test_durable_store_round_trip(root: Path) -> None:
    store = FileSessionStore(root)  # fsync on every write, as in production
    make_session(store, "s1", title="T")
    for message in conversation():
        store.append("s1", message)
    store.fork("s1", "s2")
    store.update("s2", RecordChanges(title="U"))
    store.clear("s1")
    fresh = FileSessionStore(root)
    assert fresh.load("s1")[1] == [] and fresh.load("s2")[1] == conversation()
    assert (fresh.get("s1").title, fresh.get("s2").title) == ("T", "U")


def test_rebuild_skips_a_meta_json_naming_another_session(store: FileSessionStore, root: Path) -> None:
    make_session(store, "s1")
    (root / "copy").mkdir()
    (root / "copy" / "messages.jsonl").write_bytes(b"")
    (root / "copy" / "meta.json").write_bytes((root / "s1" / "meta.json").read_bytes())
    (root / "index.jsonl").unlink()
    assert [r.session_id for r in FileSessionStore(root).list(None)[0]] == ["s1"]
