"""Which sessions a connection keeps in memory (seen through IacAgent, as ACP uses the host): idle eviction and
one runtime per session per process."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from tests.unit.host.hosts import host_over

from iac_code.acp.agent import IacAgent
from iac_code.config import Settings
from iac_code.errors import InvalidParams, SessionNotFound
from iac_code.sessions.owners import SessionOwners
from iac_code.sessions.threaded import ThreadedFileStore, open_file_store


class RecordingPeer:
    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []

    async def update(self, session_id: str, update: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(self, request: Any) -> Any:
        raise AssertionError("no permission expected")


class NoOutbox:
    def hold(self, session_id: str) -> None:
        pass


_PROCESS_OWNERS = SessionOwners()  # the connections of one test share a process, as under HTTP


def _agent(tmp_path: Path, store: ThreadedFileStore, idle: float = 1800) -> IacAgent:
    settings = Settings(config_dir=tmp_path / "config", session_idle_seconds=idle)
    agent = IacAgent(host_over(store, settings, owners=_PROCESS_OWNERS), NoOutbox())  # type: ignore[arg-type]
    agent._front.peer = RecordingPeer()  # type: ignore[assignment]
    return agent


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[ThreadedFileStore]:
    store = open_file_store(tmp_path / "sessions", durable=False)
    yield store
    await store.close()


async def test_an_idle_session_is_evicted_then_reloaded_on_its_next_call(tmp_path, store):
    agent = _agent(tmp_path, store, idle=0.05)
    session_id = (await agent.new_session(str(tmp_path))).session_id
    await agent.set_session_mode("read-only", session_id)
    await asyncio.sleep(0.2)
    assert session_id not in agent.sessions.live

    options = await agent.set_config_option("mode", session_id, "accept-edits")
    assert session_id in agent.sessions.live
    assert agent.sessions.live[session_id].mode == "accept-edits"
    assert options.config_options[0].current_value == "accept-edits"
    assert (await store.get(session_id)).mode == "accept-edits"
    await agent.shutdown()


async def test_a_busy_session_is_not_evicted(tmp_path, store):
    agent = _agent(tmp_path, store, idle=0.05)
    session_id = (await agent.new_session(str(tmp_path))).session_id
    agent.sessions.live[session_id]._busy = True  # as during a long turn
    await asyncio.sleep(0.2)
    assert session_id in agent.sessions.live
    agent.sessions.live[session_id]._busy = False
    await agent.shutdown()


async def test_closed_sessions_are_not_reloaded_implicitly(tmp_path, store):
    agent = _agent(tmp_path, store, idle=0.05)
    session_id = (await agent.new_session(str(tmp_path))).session_id
    await asyncio.sleep(0.2)
    await agent.close_session(session_id)  # evicted, then closed
    with pytest.raises(SessionNotFound):
        await agent.set_session_mode("default", session_id)
    await agent.shutdown()


async def test_opening_a_session_in_another_connection_takes_it_over(tmp_path, store):
    first, second = _agent(tmp_path, store), _agent(tmp_path, store)
    session_id = (await first.new_session(str(tmp_path))).session_id
    await second.resume_session(str(tmp_path), session_id)
    assert session_id in second.sessions.live and session_id not in first.sessions.live
    with pytest.raises(SessionNotFound):
        await first.set_session_mode("default", session_id)

    second.sessions.live[session_id]._busy = True
    with pytest.raises(InvalidParams) as refused:
        await first.load_session(str(tmp_path), session_id)
    assert "another connection" in str(refused.value.data)
    second.sessions.live[session_id]._busy = False
    await first.shutdown()
    await second.shutdown()


async def test_delete_reaches_a_session_held_by_another_connection(tmp_path, store):
    first, second = _agent(tmp_path, store), _agent(tmp_path, store)
    session_id = (await first.new_session(str(tmp_path))).session_id
    await second.delete_session(session_id)
    assert session_id not in first.sessions.live
    assert await store.list(None) == ([], None)
    await first.shutdown()
    await second.shutdown()


class WaitingOwners(SessionOwners):
    """Owners whose reserve waits, as taking a lease in PostgreSQL does."""

    async def reserve(self, session_id: str) -> None:
        await asyncio.sleep(0.02)


async def test_a_session_reloaded_by_two_calls_at_once_gets_one_runtime(tmp_path, store):
    settings = Settings(config_dir=tmp_path / "config", session_idle_seconds=0.05)
    agent = IacAgent(host_over(store, settings, owners=WaitingOwners()), NoOutbox())  # type: ignore[arg-type]
    agent._front.peer = RecordingPeer()  # type: ignore[assignment]
    session_id = (await agent.new_session(str(tmp_path))).session_id
    await asyncio.sleep(0.2)
    assert session_id not in agent.sessions.live

    first, second = await asyncio.gather(agent.sessions.get(session_id), agent.sessions.get(session_id))
    assert first is second is agent.sessions.live[session_id]
    await agent.shutdown()
