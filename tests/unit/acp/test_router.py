"""The method router in-process: aliases, defaults and JSON-RPC error codes."""

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from iac_code.acp.agent import IacAgent
from iac_code.acp.cancellation import InFlight
from iac_code.acp.router import build_handler
from iac_code.config import Settings
from iac_code.host.host import SessionHost
from iac_code.principals import Principal
from iac_code.stored_credentials import store_api_key, stored_api_key


class RecordingPeer:
    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def update(self, session_id: str, update: Any) -> None:
        self.updates.append(update)

    async def request_permission(self, request: Any) -> Any:
        raise AssertionError("no permission expected")


class NoOutbox:
    def hold(self, session_id: str) -> None:
        pass


def wire(result: Any) -> Any:
    """A handler's result as it goes on the wire (some are models, some already dicts)."""
    dump = getattr(result, "model_dump", None)
    return dump(mode="json", by_alias=True, exclude_none=True) if dump else result


def make_agent(tmp_path: Path) -> IacAgent:
    agent = IacAgent(SessionHost(Settings(config_dir=tmp_path / "config")), NoOutbox())  # type: ignore[arg-type]
    agent._front.peer = RecordingPeer()  # type: ignore[assignment]
    return agent


def handler_of(agent: IacAgent) -> Any:
    return build_handler(agent, InFlight(agent, NoOutbox()))  # type: ignore[arg-type]


@pytest.fixture
async def handle(tmp_path: Path):
    agent = make_agent(tmp_path)
    yield handler_of(agent)
    await agent.shutdown()


async def test_new_session_without_mcp_servers_gets_the_default(handle, tmp_path):
    result = wire(await handle("session/new", {"cwd": str(tmp_path)}, False))
    assert result["sessionId"].startswith("sess_")
    assert [m["id"] for m in result["modes"]["availableModes"]][:3] == ["default", "accept-edits", "read-only"]


async def test_the_seed_aliases_reach_their_methods(handle, tmp_path):
    session_id = wire(await handle("session/new", {"cwd": str(tmp_path)}, False))["sessionId"]
    listed = await handle("sessions/list", {}, False)
    assert [s["sessionId"] for s in wire(listed)["sessions"]] == [session_id]
    params = {"sessionId": session_id, "configId": "mode", "value": "plan"}
    options = await handle("config/set", params, False)
    assert wire(options)["configOptions"][0]["currentValue"] == "plan"


async def test_bad_params_name_the_field(handle):
    with pytest.raises(RequestError) as error:
        await handle("session/new", {}, False)
    assert error.value.code == -32602 and "cwd" in error.value.data


async def test_unknown_method_and_unknown_session(handle):
    with pytest.raises(RequestError) as unknown:
        await handle("session/fly", {}, False)
    assert unknown.value.code == -32601
    with pytest.raises(RequestError) as missing:
        await handle("session/set_mode", {"sessionId": "sess_nope", "modeId": "plan"}, False)
    assert missing.value.code == -32602 and missing.value.data == {"sessionId": "Session not found"}


async def test_an_unexpected_error_is_an_internal_error(tmp_path):
    async def broken(**_: Any) -> None:
        raise RuntimeError("bug")

    agent = make_agent(tmp_path)
    agent.list_sessions = broken  # type: ignore[method-assign,assignment]
    handle = handler_of(agent)
    with pytest.raises(RequestError) as error:
        await handle("session/list", {}, False)
    assert error.value.code == -32603


async def test_one_router_serves_each_connection_its_own_agent(tmp_path):
    # The router is shared by the process; which agent a message reaches is the handler's, even when the
    # connections' messages are handled at the same time.
    agents = [make_agent(tmp_path / name) for name in ("a", "b")]
    handles = [handler_of(agent) for agent in agents]

    async def create_then_list(handle, cwd: Path) -> tuple[str, list[str]]:
        created = wire(await handle("session/new", {"cwd": str(cwd)}, False))["sessionId"]
        await asyncio.sleep(0)  # let the other connection's message run in between
        listed = wire(await handle("session/list", {}, False))["sessions"]
        return created, [s["sessionId"] for s in listed]

    try:
        results = await asyncio.gather(*(create_then_list(h, tmp_path) for h in handles))
    finally:
        for agent in agents:
            await agent.shutdown()
    assert [listed for _, listed in results] == [[created] for created, _ in results]
    assert results[0][0] != results[1][0]


async def test_only_an_administrator_signs_a_shared_server_out(tmp_path):
    settings = Settings(config_dir=tmp_path / "config")
    store_api_key(settings.config_dir, "sk-stored")
    user = IacAgent(SessionHost(settings), NoOutbox(), principal=Principal("alice"))  # type: ignore[arg-type]
    with pytest.raises(RequestError) as error:
        await handler_of(user)("logout", {}, False)
    assert error.value.code == -32602 and stored_api_key(settings.config_dir) == "sk-stored"
    admin = IacAgent(SessionHost(settings), NoOutbox(), principal=Principal("root", admin=True))  # type: ignore[arg-type]
    assert await handler_of(admin)("logout", None, False) == {}
    assert stored_api_key(settings.config_dir) == "" and settings.signed_out
