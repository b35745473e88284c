"""The session host: the store opened once, by the first call that needs it, and every session created one way."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp.helpers import text_block
from tests.unit.agent.fakes import FakeProvider, say
from tests.unit.agent.test_session import loop_factory
from tests.unit.host.hosts import host_over

from iac_code.acp.agent import IacAgent
from iac_code.agent.factory import LoopParts
from iac_code.agent.loop import AgentLoop
from iac_code.agent.workspace import Workspace
from iac_code.config import Settings
from iac_code.host.host import SessionHost
from iac_code.principals import Principal
from iac_code.sessions.store import SessionStore
from iac_code.sessions.threaded import open_file_store


class NoOutbox:
    def hold(self, session_id: str) -> None:
        pass


class Peer:
    async def update(self, session_id: str, update: object) -> None:
        pass


async def test_the_store_is_opened_once_by_the_first_calls_that_need_it(tmp_path: Path) -> None:
    opened: list[SessionStore] = []

    async def open_slowly(settings: Settings) -> SessionStore:
        await asyncio.sleep(0.05)  # a database connecting: other calls come meanwhile
        opened.append(open_file_store(tmp_path / "sessions", durable=False))
        return opened[-1]

    host = SessionHost(Settings(config_dir=tmp_path / "config"), open_store=open_slowly)
    assert host.opened is None
    stores = await asyncio.gather(*(host.store() for _ in range(5)))
    assert len(opened) == 1 and all(store is opened[0] for store in stores) and host.opened is opened[0]
    await host.close()


async def test_a_new_record_is_owned_by_its_principal_and_names_the_configured_model(tmp_path: Path) -> None:
    settings = Settings(config_dir=tmp_path / "config", provider="dashscope", api_key="k", model="qwen-max")
    store = open_file_store(tmp_path / "sessions", durable=False)
    host = host_over(store, settings)
    record = host.new_record(Principal("alice"), tmp_path)
    await host.store_new(record)
    stored = await store.get(record.session_id)
    assert (stored.owner, stored.model, stored.cwd) == ("alice", "qwen-max", str(tmp_path))
    assert record.session_id.startswith("sess_") and host.new_record(Principal("alice"), tmp_path) != record
    await store.close()


async def test_a_session_created_before_anything_opened_the_store_keeps_its_turns(tmp_path: Path) -> None:
    provider = FakeProvider(say("hello"))

    def make_loop(workspace: Workspace, parts: LoopParts) -> AgentLoop:
        return loop_factory(provider, [], workspace.root)(parts)

    store = open_file_store(tmp_path / "sessions", durable=False)
    host = host_over(store, Settings(config_dir=tmp_path / "config"), make_loop=make_loop)
    agent = IacAgent(host, NoOutbox())  # type: ignore[arg-type]
    agent._front.peer = Peer()  # type: ignore[assignment]
    session_id = (await agent.new_session(str(tmp_path))).session_id
    await agent.prompt(session_id, [text_block("hi")])
    _, history = await store.load(session_id)
    assert [message.role for message in history] == ["user", "assistant"]
    await agent.shutdown()
    await store.close()
