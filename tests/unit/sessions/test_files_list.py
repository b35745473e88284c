"""list(): filtering by cwd, newest first, cursor paging; the index behind it, rebuilt when damaged."""

import base64
import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from iac_code.messages import user
from iac_code.sessions import files
from iac_code.sessions.files import FileSessionStore
from iac_code.sessions.store import RecordChanges

from .conftest import make_session


def stamp(minute: int) -> str:
    return f"2026-01-01T00:{minute:02d}:00.000Z"


def ids(records) -> list[str]:
    return [r.session_id for r in records]


@pytest.fixture
def seven(store: FileSessionStore) -> FileSessionStore:
    """s0..s6, s6 newest; even ones in /a, odd ones in /b."""
    for n in range(7):
        make_session(store, f"s{n}", cwd="/a" if n % 2 == 0 else "/b", created_at=stamp(n), updated_at=stamp(n))
    return store


def test_newest_first_and_filtered_by_cwd(seven: FileSessionStore) -> None:
    assert ids(seven.list(None)[0]) == ["s6", "s5", "s4", "s3", "s2", "s1", "s0"]
    assert ids(seven.list("/a")[0]) == ["s6", "s4", "s2", "s0"]
    assert ids(seven.list("/b/")[0]) == ["s5", "s3", "s1"]
    assert seven.list("/nowhere") == ([], None)


def test_an_append_moves_a_session_to_the_top(seven: FileSessionStore) -> None:
    seven.append("s1", user("hi"))
    assert ids(seven.list(None)[0])[0] == "s1"
    assert ids(seven.list("/b")[0]) == ["s1", "s5", "s3"]


def test_ties_are_ordered_by_id(store: FileSessionStore) -> None:
    for name in ("b", "c", "a"):
        make_session(store, name, updated_at=stamp(1))
    assert ids(store.list(None)[0]) == ["c", "b", "a"]
    first, cursor = store.list(None, limit=2)
    assert ids(first) == ["c", "b"] and ids(store.list(None, cursor, limit=2)[0]) == ["a"]


def test_paging_covers_everything_once(seven: FileSessionStore) -> None:
    pages, cursor = [], None
    while True:
        page, cursor = seven.list(None, cursor, limit=3)
        pages.append(ids(page))
        if cursor is None:
            break
    assert pages == [["s6", "s5", "s4"], ["s3", "s2", "s1"], ["s0"]]
    assert seven.list("/a", limit=4) == (seven.list("/a")[0], None)


def test_cursor_survives_concurrent_appends(seven: FileSessionStore, root: Path) -> None:
    first, cursor = seven.list(None, limit=3)
    FileSessionStore(root, durable=False).append("s5", user("bump"))  # another process, same directory
    FileSessionStore(root, durable=False).append("s1", user("bump"))
    rest, cursor = seven.list(None, cursor, limit=10)
    assert ids(first) == ["s6", "s5", "s4"]
    assert ids(rest) == ["s3", "s2", "s0"]  # s1 moved above the cursor; nothing repeats
    assert cursor is None


@pytest.mark.parametrize(
    "cursor",
    [
        "garbage!",
        base64.urlsafe_b64encode(b"x|y").decode(),
        base64.urlsafe_b64encode(b"2026-01-01T00:00:00.000Z|../x").decode(),
        base64.urlsafe_b64encode(b"2026-01-01T00:00:00.000Z").decode(),
        base64.urlsafe_b64encode(b"\xff\xfe").decode(),
    ],
)
def test_bad_cursor_is_refused(seven: FileSessionStore, cursor: str) -> None:
    with pytest.raises(ValueError):
        seven.list(None, cursor)


def test_bad_limit_is_refused(seven: FileSessionStore) -> None:
    with pytest.raises(ValueError):
        seven.list(None, limit=0)


def test_list_does_not_read_message_logs(seven: FileSessionStore, root: Path) -> None:
    for n in range(7):
        (root / f"s{n}" / "messages.jsonl").chmod(0)
    assert len(FileSessionStore(root).list(None)[0]) == 7


def test_another_store_sees_changes(seven: FileSessionStore, root: Path) -> None:
    other = FileSessionStore(root, durable=False)
    assert len(other.list(None)[0]) == 7
    seven.delete("s6")
    seven.update("s0", RecordChanges(title="renamed"))
    make_session(seven, "late", cwd="/a", updated_at="2999-01-01T00:00:00.000Z")
    listed = other.list("/a")[0]
    assert ids(listed) == ["late", "s0", "s4", "s2"]  # the update bumped s0
    assert listed[1].title == "renamed"


def test_index_rebuilt_when_missing(seven: FileSessionStore, root: Path) -> None:
    seven.append("s2", user("latest activity"))
    expected = seven.list(None)[0]
    for n in range(7):  # mtimes, not meta.json's stale updated_at, carry the bumps after a rebuild
        os.utime(root / f"s{n}" / "messages.jsonl", (0, 0))
    latest = datetime.fromisoformat(expected[0].updated_at.replace("Z", "+00:00")).timestamp()
    os.utime(root / "s2" / "messages.jsonl", (latest, latest))
    (root / "index.jsonl").unlink()
    rebuilt = FileSessionStore(root).list(None)[0]
    assert ids(rebuilt) == ["s2", "s6", "s5", "s4", "s3", "s1", "s0"]
    assert rebuilt[0].updated_at == expected[0].updated_at
    assert all(line.startswith('{"put"') for line in (root / "index.jsonl").read_text().splitlines())


@pytest.mark.parametrize(
    "damage", [b'{"put":{"session_id":"s9","cw', b"not json\n", b'{"touch":"s1"}\n', b'{"put":{"x":1}}\n']
)
def test_index_rebuilt_when_damaged(seven: FileSessionStore, root: Path, damage: bytes) -> None:
    with (root / "index.jsonl").open("ab") as f:
        f.write(damage)
    assert ids(FileSessionStore(root).list(None)[0]) == ["s6", "s5", "s4", "s3", "s2", "s1", "s0"]
    for line in (root / "index.jsonl").read_text().splitlines():
        json.loads(line)


def test_index_damaged_under_a_running_store(seven: FileSessionStore, root: Path) -> None:
    seven.list(None)
    with (root / "index.jsonl").open("ab") as f:
        f.write(b"\x00garbage\n")
    seven.append("s0", user("hi"))
    assert ids(seven.list(None)[0])[0] == "s0"


def test_index_replaced_by_another_process_is_reread(seven: FileSessionStore, root: Path) -> None:
    seven.list(None)
    (root / "index.jsonl").unlink()
    other = FileSessionStore(root, durable=False)
    other.list(None)  # rebuilds: a new file under the same name
    other.delete("s3")
    assert "s3" not in ids(seven.list(None)[0])


def test_index_is_compacted(store: FileSessionStore, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "_COMPACT_SLACK", 10)
    make_session(store, "a")
    make_session(store, "b")
    for n in range(100):
        store.append("a" if n % 2 else "b", user(str(n)))
    lines = (root / "index.jsonl").read_text().splitlines()
    assert len(lines) <= 2 * 2 + 10 + 1
    assert store.list(None) == FileSessionStore(root).list(None)
    assert sorted(ids(store.list(None)[0])) == ["a", "b"]
    assert len(store.load("a")[1]) == 50
