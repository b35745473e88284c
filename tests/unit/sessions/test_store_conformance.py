"""One behaviour, every backend: the SessionStore contract (sessions/store.py), run against each store.

A backend is an async callable that opens a store on one shared backing (a directory, a database); every
call is like another process opening it, which is how durability is checked. To add or swap a backend,
change OPENERS.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from iac_code.messages import Message, ToolCall, tool_result, user
from iac_code.sessions.postgres import PostgresSessionStore
from iac_code.sessions.repair import INTERRUPTED
from iac_code.sessions.sqlite import open_sqlite_store
from iac_code.sessions.store import RecordChanges, SessionNotFound, SessionRecord
from iac_code.sessions.threaded import open_file_store

Opener = Callable[[], Awaitable[Any]]


async def _files(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    async def opener() -> Any:
        return open_file_store(tmp_path / "sessions", durable=False)

    return opener


async def _sqlite(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    async def opener() -> Any:
        return open_sqlite_store(tmp_path / "iac-code.db", durable=False)

    return opener


async def _postgres(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    url = request.getfixturevalue("pg_url")  # skips (or fails under CI=true) without PostgreSQL

    async def opener() -> Any:
        return await PostgresSessionStore.open(url, max_size=4)

    return opener


OPENERS = {"files": _files, "postgres": _postgres, "sqlite": _sqlite}


@pytest.fixture(params=sorted(OPENERS))
async def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Opener]:
    opened: list[Any] = []
    opener = await OPENERS[request.param](request, tmp_path)

    async def open_and_track() -> Any:
        opened.append(await opener())
        return opened[-1]

    yield open_and_track
    for store in opened:
        await store.close()


@pytest.fixture
async def store(open_store: Opener) -> Any:
    return await open_store()


def stamp(minute: int) -> str:
    return f"2001-01-01T00:{minute:02d}:00.000Z"


def ids(records: list[SessionRecord]) -> list[str]:
    return [record.session_id for record in records]


def assistant_calling(*call_ids: str) -> Message:
    calls = [ToolCall(id=call_id, name="read_file", arguments={"path": f"{call_id}.tf"}) for call_id in call_ids]
    return Message(role="assistant", text="Let me look.", tool_calls=calls)


async def new_session(store: Any, session_id: str, cwd: str = "/work/project", **fields: Any) -> SessionRecord:
    await store.create(SessionRecord(session_id=session_id, cwd=cwd, **fields))
    return await store.get(session_id)


# ---- create, get, update ----


async def test_create_fills_the_times_and_get_returns_the_record(store: Any) -> None:
    record = await new_session(
        store, "s1", title="Fix VPC", model="qwen-plus", mode="plan", permissions={"bash": "allow"}
    )
    assert (record.session_id, record.cwd, record.title, record.model, record.mode) == (
        "s1",
        "/work/project",
        "Fix VPC",
        "qwen-plus",
        "plan",
    )
    assert record.permissions == {"bash": "allow"}
    assert len(record.created_at) == 24 and record.created_at.endswith("Z") and record.updated_at >= record.created_at
    record.permissions["write_file"] = "reject"  # a returned record is the caller's own
    assert (await store.get("s1")).permissions == {"bash": "allow"}


async def test_given_times_are_kept(store: Any) -> None:
    record = await new_session(store, "s1", created_at=stamp(1), updated_at=stamp(2))
    assert (record.created_at, record.updated_at) == (stamp(1), stamp(2))


async def test_create_twice_is_refused(store: Any) -> None:
    await new_session(store, "s1")
    with pytest.raises(ValueError, match="already exists"):
        await store.create(SessionRecord(session_id="s1", cwd="/elsewhere"))
    assert (await store.get("s1")).cwd == "/work/project"


async def test_an_unknown_session_is_reported_by_every_method(store: Any) -> None:
    for call in (
        store.get("nope"),
        store.load("nope"),
        store.append("nope", user("hi")),
        store.update("nope", RecordChanges(title="x")),
        store.fork("nope", "copy"),
        store.clear("nope"),
    ):
        with pytest.raises(SessionNotFound):
            await call
    await store.delete("nope")  # no error


@pytest.mark.parametrize("bad", ["", "../etc", "a/b", "a.b", "x" * 129])
async def test_ids_no_session_can_have_are_refused(store: Any, bad: str) -> None:
    with pytest.raises(ValueError):
        await store.create(SessionRecord(session_id=bad, cwd="/w"))
    with pytest.raises(SessionNotFound):
        await store.get(bad)
    await store.delete(bad)


async def test_update_changes_the_given_fields_and_bumps_updated_at(store: Any) -> None:
    before = await new_session(store, "s1", title="old", updated_at=stamp(0))
    after = await store.update(
        "s1", RecordChanges(title="new", mode="accept-edits", model="m2", permissions={"bash": "reject"})
    )
    assert (after.title, after.mode, after.model, after.permissions) == (
        "new",
        "accept-edits",
        "m2",
        {"bash": "reject"},
    )
    assert after.created_at == before.created_at and after.updated_at > before.updated_at
    assert await store.get("s1") == after


# ---- append and load ----


async def test_appends_keep_their_order_and_survive_another_instance(open_store: Opener) -> None:
    first = await open_store()
    await new_session(first, "s1")
    history = [user("plan a VPC"), assistant_calling("c1"), tool_result(ToolCall("c1", "read_file", {}), "ok")]
    history += [Message(role="assistant", text=f"step {n} — ünïcode", thinking="hmm") for n in range(40)]
    for message in history:
        await first.append("s1", message)
    record, loaded = await (await open_store()).load("s1")
    assert loaded == history and record.session_id == "s1"


async def test_nul_characters_anywhere_come_back_unchanged_in_another_instance(open_store: Opener) -> None:
    # U+0000 is valid JSON text a client or a model may send; PostgreSQL's text and jsonb cannot hold it.
    first = await open_store()
    fields = {"title": "t\x00itle", "model": "m\x00", "mode": "plan", "permissions": {"to\x00ol": "allow"}}
    await new_session(first, "s1", cwd="/work/\x00dir", **fields)
    call = ToolCall("c\x00", "read_file", {"path": "a\x00.tf", "\x00": ["\x00"]})
    history = [
        user("pasted\x00prompt"),
        Message(role="assistant", text="re\x00ply", thinking="th\x00ought", tool_calls=[call]),
        tool_result(call, "file\x00content", title="read a\x00.tf"),
    ]
    for message in history:
        await first.append("s1", message)
    updated = await first.update("s1", RecordChanges(title="new\x00title", permissions={"\x00": "reject"}))
    other = await open_store()
    record, loaded = await other.load("s1")
    assert loaded == history
    assert (record.cwd, record.title, record.model, record.permissions) == (
        "/work/\x00dir",
        "new\x00title",
        "m\x00",
        {"\x00": "reject"},
    )
    assert record == updated == await other.get("s1")
    assert ids((await other.list("/work/\x00dir"))[0]) == ["s1"] and ids((await other.list("/work/"))[0]) == []
    await other.fork("s1", "s2")
    assert (await first.load("s2"))[1] == history and (await first.get("s2")).title == "new\x00title"


async def test_a_lone_surrogate_in_a_record_is_stored_as_u_fffd(open_store: Opener) -> None:
    await new_session(await open_store(), "s1", title="a\ud800b")
    assert (await (await open_store()).get("s1")).title == "a\ufffdb"


async def test_append_bumps_updated_at(store: Any) -> None:
    before = await new_session(store, "s1", updated_at=stamp(0))
    await store.append("s1", user("hi"))
    assert (await store.get("s1")).updated_at > before.updated_at


async def test_a_dangling_tool_call_is_answered_interrupted_and_the_repair_written_back(open_store: Opener) -> None:
    store = await open_store()
    await new_session(store, "s1")
    asked = assistant_calling("c1", "c2")
    for message in (user("look"), asked, tool_result(asked.tool_calls[0], "found")):
        await store.append("s1", message)
    _, history = await store.load("s1")
    assert [m.role for m in history] == ["user", "assistant", "tool", "tool"]
    assert (history[-1].tool_call_id, history[-1].text, history[-1].is_error) == ("c2", INTERRUPTED, True)
    _, again = await (await open_store()).load("s1")
    assert again == history  # written back once, not repaired twice


async def test_a_dangling_call_before_a_later_prompt_is_answered_in_place(open_store: Opener) -> None:
    store = await open_store()
    await new_session(store, "s1")
    for message in (user("look"), assistant_calling("c1"), user("are you there?")):
        await store.append("s1", message)
    _, history = await store.load("s1")
    assert [(m.role, m.tool_call_id) for m in history] == [
        ("user", ""),
        ("assistant", ""),
        ("tool", "c1"),
        ("user", ""),
    ]
    await store.append("s1", Message(role="assistant", text="yes"))
    _, again = await (await open_store()).load("s1")
    assert again == [*history, Message(role="assistant", text="yes")]


async def test_concurrent_appends_to_two_sessions_stay_whole_and_ordered(open_store: Opener) -> None:
    one, other = await open_store(), await open_store()
    await new_session(one, "a")
    await new_session(one, "b")

    async def write(store: Any, session_id: str) -> None:
        for n in range(30):
            await store.append(session_id, user(f"{session_id}{n}"))

    await asyncio.gather(write(one, "a"), write(other, "b"))
    for session_id in ("a", "b"):
        _, history = await one.load(session_id)
        assert [m.text for m in history] == [f"{session_id}{n}" for n in range(30)]


# ---- list ----


@pytest.fixture
async def seven(store: Any) -> Any:
    """s0..s6, s6 newest; even ones in /a, odd ones in /b."""
    for n in range(7):
        await new_session(store, f"s{n}", cwd="/a" if n % 2 == 0 else "/b", created_at=stamp(n), updated_at=stamp(n))
    return store


async def test_list_is_newest_first_and_filtered_by_cwd(seven: Any) -> None:
    assert ids((await seven.list(None))[0]) == ["s6", "s5", "s4", "s3", "s2", "s1", "s0"]
    assert ids((await seven.list("/a"))[0]) == ["s6", "s4", "s2", "s0"]
    assert ids((await seven.list("/b/"))[0]) == ["s5", "s3", "s1"]  # the same directory
    assert await seven.list("/nowhere") == ([], None)


async def test_an_append_moves_a_session_to_the_top(seven: Any) -> None:
    await seven.append("s1", user("hi"))
    assert ids((await seven.list("/b"))[0]) == ["s1", "s5", "s3"]


async def test_paging_covers_everything_once(seven: Any) -> None:
    pages, cursor = [], None
    while True:
        page, cursor = await seven.list(None, cursor, limit=3)
        pages.append(ids(page))
        if cursor is None:
            break
    assert pages == [["s6", "s5", "s4"], ["s3", "s2", "s1"], ["s0"]]
    assert await seven.list("/a", limit=4) == ((await seven.list("/a"))[0], None)


async def test_ties_are_ordered_by_id_bytewise(store: Any) -> None:
    for name in ("b", "C", "a", "B"):
        await new_session(store, name, updated_at=stamp(1))
    assert ids((await store.list(None))[0]) == ["b", "a", "C", "B"]
    first, cursor = await store.list(None, limit=3)
    assert ids(first) == ["b", "a", "C"] and ids((await store.list(None, cursor))[0]) == ["B"]


@pytest.mark.parametrize("cursor", ["garbage!", base64.urlsafe_b64encode(b"x|y").decode(), "YQ=="])
async def test_a_bad_cursor_is_a_value_error(seven: Any, cursor: str) -> None:
    with pytest.raises(ValueError):
        await seven.list(None, cursor)


async def test_a_limit_below_one_is_a_value_error(store: Any) -> None:
    with pytest.raises(ValueError):
        await store.list(None, limit=0)


# ---- fork, clear, delete ----


async def test_fork_copies_log_and_metadata_and_the_two_then_live_apart(store: Any) -> None:
    await new_session(store, "src", title="T", mode="plan", permissions={"bash": "allow"}, created_at=stamp(0))
    for text in ("one", "two"):
        await store.append("src", user(text))
    copy = await store.fork("src", "copy")
    assert (copy.session_id, copy.cwd, copy.title, copy.mode, copy.permissions) == (
        "copy",
        "/work/project",
        "T",
        "plan",
        {"bash": "allow"},
    )
    assert copy.created_at > stamp(0)
    await store.append("copy", user("only in the copy"))
    await store.append("src", user("only in the source"))
    await store.update("copy", RecordChanges(permissions={}))
    assert [m.text for m in (await store.load("src"))[1]] == ["one", "two", "only in the source"]
    assert [m.text for m in (await store.load("copy"))[1]] == ["one", "two", "only in the copy"]
    assert (await store.get("src")).permissions == {"bash": "allow"}


# ---- owners (the principal that created a session) ----


async def test_the_owner_is_kept_and_list_filters_by_it(open_store: Opener) -> None:
    store = await open_store()
    for n, owner in enumerate(["alice", "bob", "alice", ""]):  # "": stored before principals existed
        await new_session(store, f"s{n}", cwd="/a", owner=owner, updated_at=stamp(n))
    again = await open_store()
    assert (await again.get("s0")).owner == "alice" and (await again.get("s3")).owner == ""
    assert ids((await again.list(None, owner="alice"))[0]) == ["s2", "s0"]
    assert ids((await again.list("/a", owner="bob"))[0]) == ["s1"]
    assert ids((await again.list(None, owner=""))[0]) == ["s3"]
    assert ids((await again.list(None))[0]) == ["s3", "s2", "s1", "s0"]  # anyone's
    first, cursor = await again.list(None, limit=1, owner="alice")
    assert ids(first) == ["s2"] and ids((await again.list(None, cursor, owner="alice"))[0]) == ["s0"]
    assert await again.list("/b", owner="alice") == ([], None)


async def test_a_fork_belongs_to_whom_it_is_given_or_to_the_source_s_owner(store: Any) -> None:
    await new_session(store, "src", owner="alice")
    assert (await store.fork("src", "mine", owner="root")).owner == "root"
    assert (await store.fork("src", "same")).owner == "alice"
    assert (await store.get("mine")).owner == "root" and (await store.get("src")).owner == "alice"


async def test_fork_onto_an_existing_id_is_refused(store: Any) -> None:
    await new_session(store, "src")
    await new_session(store, "taken", title="keep me")
    with pytest.raises(ValueError):
        await store.fork("src", "taken")
    assert (await store.get("taken")).title == "keep me"


async def test_clear_empties_the_log_and_keeps_the_metadata(open_store: Opener) -> None:
    store = await open_store()
    await new_session(store, "s1", title="kept", updated_at=stamp(0))
    await store.append("s1", user("forget me"))
    await store.clear("s1")
    record, history = await (await open_store()).load("s1")
    assert history == [] and record.title == "kept" and record.updated_at > stamp(0)
    await store.append("s1", user("fresh"))
    assert [m.text for m in (await store.load("s1"))[1]] == ["fresh"]


async def test_delete_is_complete_and_idempotent(open_store: Opener) -> None:
    store = await open_store()
    await new_session(store, "gone")
    await new_session(store, "kept")
    await store.append("gone", user("bye"))
    await store.delete("gone")
    await store.delete("gone")
    other = await open_store()
    with pytest.raises(SessionNotFound):
        await other.load("gone")
    assert ids((await other.list(None))[0]) == ["kept"]
    await new_session(other, "gone")  # the id is free again, with an empty log
    assert (await other.load("gone"))[1] == []


# ---- additional directories (ACP's additionalDirectories) ----


async def test_additional_directories_are_kept_updated_and_forked(open_store: Opener) -> None:
    store = await open_store()
    await new_session(store, "s", additional_directories=["/work/modules", "/work/shared"])
    assert (await new_session(store, "none")).additional_directories == []
    again = await open_store()
    assert (await again.get("s")).additional_directories == ["/work/modules", "/work/shared"]
    assert [r.additional_directories for r in (await again.list(None))[0] if r.session_id == "s"] == [
        ["/work/modules", "/work/shared"]
    ]
    forked = await again.fork("s", "f")
    assert forked.additional_directories == ["/work/modules", "/work/shared"]
    changed = await again.update("s", RecordChanges(additional_directories=["/work/other"]))
    assert changed.additional_directories == ["/work/other"]
    assert (await (await open_store()).get("s")).additional_directories == ["/work/other"]
    assert (await again.get("f")).additional_directories == ["/work/modules", "/work/shared"]
    kept = await again.update("s", RecordChanges(title="t"))  # None leaves them as they are
    assert kept.additional_directories == ["/work/other"]


async def test_options_are_stored_changed_reopened_and_forked(open_store: Opener) -> None:
    store = await open_store()
    await new_session(store, "src", options={"check_after_edit": True})
    changed = await store.update("src", RecordChanges(options={"check_after_edit": False, "other": True}))
    assert changed.options == {"check_after_edit": False, "other": True}
    assert (await store.fork("src", "copy")).options == changed.options
    reopened = await open_store()
    assert (await reopened.get("src")).options == changed.options
    assert (await reopened.get("copy")).options == changed.options
