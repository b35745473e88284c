"""Answers given before the SDK loads (acp/early.py): the same as the SDK-served agent's, valid for the SDK's
models, and handed over so that the session is open before any later message is read."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp.schema import NewSessionResponse, SessionConfigOptionBoolean, SessionConfigOptionSelect, SessionModeState

from iac_code.acp.agent import IacAgent
from iac_code.acp.config_options import config_options, mode_state, new_session_toggles
from iac_code.acp.early import EarlyAnswers
from iac_code.acp.early_session import plain_new_session_workspace
from iac_code.acp.server import serve
from iac_code.config import Settings
from iac_code.host.host import SessionHost
from iac_code.host.unavailable_store import UnavailableStore, open_or_explain

_DUMP: dict[str, Any] = {"mode": "json", "by_alias": True, "exclude_none": True}
CONFIGURED = {
    "demo": {},
    "openai-compatible": {"provider": "openai_compatible", "base_url": "http://127.0.0.1:9", "model": "m1"},
    "dashscope": {"provider": "dashscope", "api_key": "k"},
    "anthropic": {"provider": "anthropic", "api_key": "k"},
}


def _new_session(cwd: Any, request_id: Any = 2, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "session/new", "params": {"cwd": cwd, **params}}


def _early(settings: Settings) -> tuple[EarlyAnswers, SessionHost]:
    """The early answers of a stdio server, and its host."""
    host = SessionHost(settings, open_store=open_or_explain)
    return EarlyAnswers(host), host


class NoOutbox:
    def hold(self, session_id: str) -> None:
        pass


class NoPeer:
    async def update(self, session_id: str, update: Any) -> None:
        pass


@pytest.mark.parametrize("name", CONFIGURED)
async def test_an_early_session_new_answers_what_the_agent_answers_and_the_sdk_accepts(tmp_path, name):
    settings = Settings(config_dir=tmp_path / "config", **CONFIGURED[name])
    answers, host = _early(settings)
    early = await answers.answer(_new_session(str(tmp_path), mcpServers=[]))
    assert early is not None
    result = early["result"]

    agent = IacAgent(host, NoOutbox())  # type: ignore[arg-type]
    agent._front.peer = NoPeer()  # type: ignore[assignment]
    served = (await agent.new_session(str(tmp_path), [])).model_dump(**_DUMP, exclude_unset=True)
    await agent.shutdown()
    await host.close()
    assert {**result, "sessionId": ""} == {**served, "sessionId": ""}

    response = NewSessionResponse.model_validate(result)
    # `models` (the seed's object) has no class in the schema any more; everything else round-trips.
    assert response.model_dump(**_DUMP, exclude_unset=True) == {k: v for k, v in result.items() if k != "models"}
    assert early["id"] == 2 and early["jsonrpc"] == "2.0"


@pytest.mark.parametrize("mode", ["default", "accept-edits", "read-only"])
def test_the_plain_config_state_is_the_sdk_models_wire_form(mode):
    state = mode_state(mode)
    assert SessionModeState.model_validate(state).model_dump(**_DUMP) == state
    for option in config_options(mode, "m1", ["m1", "m2"]):
        assert SessionConfigOptionSelect.model_validate(option).model_dump(**_DUMP) == option


def test_boolean_options_are_the_sdk_models_wire_form_and_only_for_a_client_that_shows_them():
    booleans = config_options("default", "m1", ["m1"], {"check_after_edit": True})[2:]
    assert [option["id"] for option in booleans] == ["check_after_edit"] and booleans[0]["currentValue"] is True
    for option in booleans:
        assert SessionConfigOptionBoolean.model_validate(option).model_dump(**_DUMP) == option
    assert [option["type"] for option in config_options("default", "m1", ["m1"])] == ["select", "select"]
    assert new_session_toggles({"session": {"configOptions": {"boolean": {}}}}) == {}
    assert new_session_toggles({"session": {"configOptions": {}}}) is None
    assert new_session_toggles(None) is None


async def test_the_early_session_is_stored_with_its_workspace_and_model(tmp_path):
    answers, host = _early(
        Settings(config_dir=tmp_path / "config", provider="dashscope", api_key="k", model="qwen-max")
    )
    result = (await answers.answer(_new_session(str(tmp_path / "." / ""))))["result"]  # type: ignore[index]
    record = await (await host.store()).get(result["sessionId"])
    await host.close()
    assert (record.cwd, record.model) == (str(tmp_path.resolve()), "qwen-max")


async def test_an_unusable_session_database_is_left_to_the_agent(tmp_path):
    (tmp_path / "config" / "iac-code.db").mkdir(parents=True)
    answers, host = _early(Settings(config_dir=tmp_path / "config"))
    assert await answers.answer(_new_session(str(tmp_path))) is None
    assert isinstance(host.opened, UnavailableStore)  # the agent answers every call with what to fix


async def test_only_plain_session_new_requests_are_answered_early(tmp_path):
    answers, host = _early(Settings(config_dir=tmp_path / "config"))
    server = {"name": "fs", "command": "mcp-fs", "args": [], "env": []}
    for odd in [
        _new_session("relative/dir"),
        _new_session(str(tmp_path / "missing")),
        _new_session(str(tmp_path) + "\0"),
        _new_session(7),
        _new_session(str(tmp_path), mcpServers=[server]),
        _new_session(str(tmp_path), additionalDirectories=[]),
        _new_session(str(tmp_path), request_id=True),
        _new_session(str(tmp_path), request_id=None),
        {"jsonrpc": "2.0", "method": "session/new", "params": {"cwd": str(tmp_path)}},
        {"jsonrpc": "2.0", "id": 3, "method": "session/load", "params": {"cwd": str(tmp_path), "sessionId": "s"}},
    ]:
        assert await answers.answer(odd) is None, odd
    assert host.opened is None
    assert plain_new_session_workspace(_new_session(str(tmp_path), request_id="a", mcpServers=None)) == tmp_path


async def test_settings_the_agent_would_refuse_are_left_to_it(tmp_path):
    answers, host = _early(Settings(config_dir=tmp_path / "config", provider="openai"))  # no API key
    assert await answers.answer(_new_session(str(tmp_path))) is None
    assert host.opened is None


class QueueTransport:
    """Ends the connection once the request `last_id` is answered."""

    def __init__(self, last_id: int) -> None:
        self.incoming: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.sent: list[dict[str, Any]] = []
        self._last_id = last_id

    async def receive(self) -> dict[str, Any] | None:
        return await self.incoming.get()

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        if message.get("id") == self._last_id:
            self.incoming.put_nowait(None)

    async def close(self) -> None:
        pass


async def test_the_hand_over_opens_early_sessions_before_reading_what_waited(tmp_path: Path):
    answers, host = _early(Settings(config_dir=tmp_path / "config"))
    session_ids = [(await answers.answer(_new_session(str(tmp_path), n)))["result"]["sessionId"] for n in (1, 2)]  # type: ignore[index]
    transport = QueueTransport(last_id=9)
    waited: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
    waited.set_result(
        {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "session/set_mode",
            "params": {"sessionId": session_ids[1], "modeId": "read-only"},
        }
    )
    idle_after: list[int] = []  # how many messages were sent when on_idle ran
    handover = answers.handover(transport, [waited], on_idle=lambda: idle_after.append(len(transport.sent)))
    await asyncio.wait_for(serve(handover, host), 10)

    updates = [m["params"] for m in transport.sent if m.get("method") == "session/update"]
    announced = [u["sessionId"] for u in updates if u["update"]["sessionUpdate"] == "available_commands_update"]
    assert announced == session_ids  # each early session is opened, in order, before set_mode is read
    assert [m for m in transport.sent if "id" in m] == [{"jsonrpc": "2.0", "id": 9, "result": {}}]
    assert idle_after == [len(transport.sent)]  # once, when nothing was left to answer: after set_mode's answer
    assert (await (await host.store()).get(session_ids[1])).mode == "read-only"
    await host.close()


async def test_the_hand_over_is_idle_once_early_sessions_are_open_though_a_receive_still_waits(tmp_path: Path):
    # The usual start: session/new answered early, then nothing until the user has typed a prompt. The
    # receive pending when the SDK loaded is handed over; it must not count as a request being served.
    answers, host = _early(Settings(config_dir=tmp_path / "config"))
    session_id = (await answers.answer(_new_session(str(tmp_path), 1)))["result"]["sessionId"]  # type: ignore[index]
    transport = QueueTransport(last_id=9)
    typing: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
    idle = asyncio.Event()
    handover = answers.handover(transport, [typing], on_idle=idle.set)
    serving = asyncio.ensure_future(serve(handover, host))
    await asyncio.wait_for(idle.wait(), 10)  # before anything more came
    assert [m for m in transport.sent if "id" in m] == []
    set_mode = {"sessionId": session_id, "modeId": "read-only"}
    typing.set_result({"jsonrpc": "2.0", "id": 9, "method": "session/set_mode", "params": set_mode})
    await asyncio.wait_for(serving, 10)
    assert [m for m in transport.sent if "id" in m] == [{"jsonrpc": "2.0", "id": 9, "result": {}}]
    await host.close()
