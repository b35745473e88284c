"""The SessionStore contract (sessions/store.py), run against every implementation.

To add one (PostgreSQL…), add a param to the `store` fixture that yields a fresh, empty store.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from iac_code.messages import Message, ToolCall, tool_result, user
from iac_code.sessions.store import SessionNotFound, SessionRecord, SessionStore
from iac_code.sessions.threaded import open_file_store


@pytest.fixture(params=["files"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    if request.param == "files":
        implementation: SessionStore = open_file_store(tmp_path / "sessions", durable=False)
    else:  # pragma: no cover - a new param without its implementation
        raise AssertionError(request.param)
    yield implementation
    await implementation.close()


async def new(store: SessionStore, session_id: str, cwd: str = "/work/a", **fields: object) -> SessionRecord:
    await store.create(SessionRecord(session_id=session_id, cwd=cwd, **fields))  # type: ignore[arg-type]
    return await store.get(session_id)


def conversation() -> list[Message]:
    call = ToolCall("c1", "read_file", {"path": "main.tf"})
    return [
        user("read main.tf"),
        Message(role="assistant", text="Reading.", tool_calls=[call]),
        tool_result(call, "resource ..."),
        Message(role="assistant", text="Done."),
    ]


async def test_create_then_get_round_trips_the_record(store: SessionStore) -> None:
    record = await new(store, "s1", title="VPC", model="m", mode="plan", permissions={"bash": "allow"})
    assert (record.session_id, record.cwd, record.title, record.model, record.mode) == (
        "s1",
        "/work/a",
        "VPC",
        "m",
        "plan",
    )
    assert record.permissions == {"bash": "allow"}
    assert record.created_at and record.updated_at >= record.created_at


async def test_create_twice_is_refused(store: SessionStore) -> None:
    await new(store, "s1")
    with pytest.raises(ValueError):
        await new(store, "s1")


async def test_appends_load_back_in_order(store: SessionStore) -> None:
    await new(store, "s1")
    for message in conversation():
        await store.append("s1", message)
    record, history = await store.load("s1")
    assert history == conversation() and record.session_id == "s1"


async def test_appends_of_different_sessions_may_run_at_once(store: SessionStore) -> None:
    await asyncio.gather(*(new(store, f"s{i}") for i in range(5)))
    await asyncio.gather(*(store.append(f"s{i}", user(f"hello {i}")) for i in range(5)))
    for i in range(5):
        assert (await store.load(f"s{i}"))[1] == [user(f"hello {i}")]


async def test_load_answers_an_interrupted_tool_call(store: SessionStore) -> None:
    await new(store, "s1")
    call = ToolCall("c1", "bash", {"command": "sleep 100"})
    await store.append("s1", user("run"))
    await store.append("s1", Message(role="assistant", text="", tool_calls=[call]))
    _, history = await store.load("s1")
    assert history[-1].role == "tool" and history[-1].tool_call_id == "c1" and history[-1].is_error
    assert (await store.load("s1"))[1] == history, "the repair is written back"


async def test_update_changes_metadata(store: SessionStore) -> None:
    await new(store, "s1")
    updated = await store.update("s1", title="T", mode="read-only", model="m2", permissions={"bash": "reject"})
    assert (updated.title, updated.mode, updated.model, updated.permissions) == (
        "T",
        "read-only",
        "m2",
        {"bash": "reject"},
    )
    assert await store.get("s1") == updated


async def test_unknown_sessions_raise_session_not_found(store: SessionStore) -> None:
    with pytest.raises(SessionNotFound):
        await store.get("nope")
    with pytest.raises(SessionNotFound):
        await store.load("nope")


async def test_list_filters_by_cwd_newest_first_with_pages(store: SessionStore) -> None:
    for i in range(5):
        await new(store, f"s{i}", cwd="/work/a")
        await store.append(f"s{i}", user("bump"))  # bumps updated_at: later sessions are newer
    await new(store, "other", cwd="/work/b")
    first, cursor = await store.list("/work/a", limit=3)
    assert cursor is not None and len(first) == 3
    rest, end = await store.list("/work/a", cursor, limit=3)
    assert end is None
    ids = [r.session_id for r in first + rest]
    assert sorted(ids) == [f"s{i}" for i in range(5)]
    times = [r.updated_at for r in first + rest]
    assert times == sorted(times, reverse=True)
    assert {r.session_id for r in (await store.list(None))[0]} == {*ids, "other"}


async def test_list_refuses_a_cursor_it_did_not_issue(store: SessionStore) -> None:
    with pytest.raises(ValueError):
        await store.list(None, "not-a-cursor")


async def test_fork_copies_log_and_metadata_independently(store: SessionStore) -> None:
    await new(store, "a", title="orig", mode="accept-edits")
    for message in conversation():
        await store.append("a", message)
    forked = await store.fork("a", "b")
    assert (forked.session_id, forked.title, forked.mode) == ("b", "orig", "accept-edits")
    await store.append("b", user("only in the fork"))
    assert (await store.load("a"))[1] == conversation()
    assert (await store.load("b"))[1] == [*conversation(), user("only in the fork")]


async def test_clear_empties_the_log_and_keeps_metadata(store: SessionStore) -> None:
    await new(store, "s1", title="kept")
    await store.append("s1", user("forget me"))
    await store.clear("s1")
    record, history = await store.load("s1")
    assert history == [] and record.title == "kept"


async def test_delete_is_complete_and_idempotent(store: SessionStore) -> None:
    await new(store, "s1")
    await store.delete("s1")
    await store.delete("s1")
    await store.delete("never-existed")
    with pytest.raises(SessionNotFound):
        await store.get("s1")
    assert await store.list(None) == ([], None)
