"""InFlight (acp/cancellation.py): which request a `$/cancel_request` reaches, and what it does to each kind.

Requests are read and started as the SDK's Connection does: the message comes out of the transport
`InFlight.reading` wraps, then the request's task is created (and inherits the id read)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acp import RequestError
from pydantic import ValidationError

from iac_code.acp.cancellation import InFlight


class Core:
    busy = True  # a live session's turn is running: what a prompt's cancel meets once its turn started


class Sessions:
    def __init__(self, *live: str) -> None:
        self.live: dict[str, object] = {session_id: Core() for session_id in live}
        self.deleted: list[str] = []
        self.closed: list[str] = []

    async def delete(self, session_id: str) -> None:
        self.live.pop(session_id, None)
        self.deleted.append(session_id)

    async def close(self, session_id: str) -> None:
        self.live.pop(session_id)
        self.closed.append(session_id)


class Agent:
    def __init__(self, sessions: Sessions) -> None:
        self.sessions = sessions
        self.cancelled: list[str] = []

    async def cancel(self, session_id: str) -> None:
        self.cancelled.append(session_id)


class Outbox:
    def __init__(self) -> None:
        self.discarded: list[str] = []

    def discard(self, session_id: str) -> None:
        self.discarded.append(session_id)


class Inbound:
    """A transport the test feeds one message at a time."""

    def __init__(self) -> None:
        self.next: dict[str, Any] | None = None

    async def receive(self) -> dict[str, Any] | None:
        return self.next

    async def send(self, message: dict[str, Any]) -> None:
        raise AssertionError("nothing is sent through it here")

    async def close(self) -> None:
        pass


class Connection:
    """One connection's InFlight, its requests started as the SDK's Connection starts them."""

    def __init__(self, *live: str) -> None:
        self.agent = Agent(Sessions(*live))
        self.outbox = Outbox()
        self.in_flight = InFlight(self.agent, self.outbox)  # type: ignore[arg-type]
        self._inbound = Inbound()
        self._reading = self.in_flight.reading(self._inbound)  # type: ignore[arg-type]

    async def start(self, request_id: Any, method: str, params: Any, work) -> asyncio.Task[Any]:
        self._inbound.next = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        message = await self._reading.receive()
        assert message is not None
        task = asyncio.create_task(self.in_flight.run(method, params, work))
        await asyncio.sleep(0)  # its first step: registered
        return task

    async def notification_read(self) -> None:
        self._inbound.next = {"jsonrpc": "2.0", "method": "session/cancel", "params": {}}
        await self._reading.receive()

    async def cancel(self, request_id: Any) -> None:
        await self.in_flight.cancel({"requestId": request_id})


def gate() -> tuple[asyncio.Event, Any]:
    """Work that finishes (with `result`) when the event is set."""
    opened = asyncio.Event()

    def work(result: Any = None):
        async def run() -> Any:
            await opened.wait()
            return result

        return run

    return opened, work


async def answer_of(task: asyncio.Task[Any]) -> Any:
    try:
        return await task
    except RequestError as exc:
        return exc.to_error_obj()


async def test_a_prompt_is_cancelled_as_session_cancel_does_and_answers_itself():
    connection = Connection("s1")
    finish, work = gate()
    task = await connection.start(7, "session/prompt", {"sessionId": "s1", "prompt": []}, work({"stopReason": "x"}))
    await connection.cancel(7)
    assert connection.agent.cancelled == ["s1"]
    assert not task.done()  # the turn ends by itself, with its own answer
    finish.set()
    assert await task == {"stopReason": "x"}
    assert len(connection.in_flight) == 0


async def test_a_prompt_whose_turn_has_not_started_is_stopped_and_answers_cancelled():
    connection = Connection()  # its session is still loading: no turn runs yet
    _never, work = gate()
    task = await connection.start(8, "session/prompt", {"sessionId": "s1", "prompt": []}, work({"stopReason": "x"}))
    await connection.cancel(8)
    answer = await task
    assert answer.model_dump(by_alias=True, exclude_none=True) == {"stopReason": "cancelled"}
    assert connection.agent.cancelled == []  # nothing else of the session was touched
    assert len(connection.in_flight) == 0


async def test_cancelling_a_second_prompt_leaves_the_running_turn_alone():
    connection = Connection("s1")
    finish, work = gate()
    first = await connection.start(1, "session/prompt", {"sessionId": "s1", "prompt": []}, work({"stopReason": "x"}))
    _never, never = gate()
    second = await connection.start(2, "session/prompt", {"sessionId": "s1", "prompt": []}, never())
    await connection.cancel(2)
    assert (await second).stop_reason == "cancelled"
    assert connection.agent.cancelled == []  # the first prompt's turn runs on
    finish.set()
    assert await first == {"stopReason": "x"}


async def test_a_reading_request_is_stopped_and_answers_request_cancelled():
    connection = Connection()
    _never, work = gate()
    task = await connection.start("list-1", "session/list", {}, work())
    await connection.cancel("list-1")
    answer = await answer_of(task)
    assert answer == {"code": -32800, "message": "Request cancelled", "data": {"requestId": "list-1"}}
    assert len(connection.in_flight) == 0


async def test_ids_are_matched_by_type_and_value():
    connection = Connection()
    _never, work = gate()
    int_task = await connection.start(3, "session/list", {}, work())
    str_task = await connection.start("3", "session/list", {}, work())
    await connection.cancel("3")
    assert (await answer_of(str_task))["code"] == -32800
    assert not int_task.done()
    int_task.cancel()


async def test_a_new_session_cancelled_midway_is_opened_then_deleted():
    connection = Connection()
    opened, work = gate()
    task = await connection.start(1, "session/new", {"cwd": "/w", "mcpServers": []}, work({"sessionId": "new-1"}))
    await connection.cancel(1)
    assert not task.done()  # the opening is not torn
    connection.agent.sessions.live["new-1"] = object()
    opened.set()
    assert (await answer_of(task))["code"] == -32800
    assert connection.agent.sessions.deleted == ["new-1"]
    assert connection.outbox.discarded == ["new-1"]
    assert "new-1" not in connection.agent.sessions.live


async def test_a_cancelled_fork_deletes_the_fork_not_its_source():
    connection = Connection("source")
    opened, work = gate()
    task = await connection.start(1, "session/fork", {"sessionId": "source", "cwd": "/w"}, work({"sessionId": "fork"}))
    await connection.cancel(1)
    opened.set()
    assert (await answer_of(task))["code"] == -32800
    assert connection.agent.sessions.deleted == ["fork"]
    assert "source" in connection.agent.sessions.live


async def test_a_cancelled_load_closes_the_session_it_opened_only():
    connection = Connection("open-before")
    for session_id, closed in (("open-before", []), ("stored", ["stored"])):
        opened, work = gate()
        task = await connection.start(session_id, "session/load", {"sessionId": session_id, "cwd": "/w"}, work())
        await connection.cancel(session_id)
        connection.agent.sessions.live[session_id] = object()
        opened.set()
        assert (await answer_of(task))["code"] == -32800
        assert connection.agent.sessions.closed == closed
    assert connection.agent.sessions.deleted == []


async def test_a_change_that_cannot_be_torn_is_made_and_answered():
    connection = Connection("s1")
    done, work = gate()
    task = await connection.start(5, "session/set_mode", {"sessionId": "s1", "modeId": "plan"}, work({}))
    await connection.cancel(5)
    done.set()
    assert await task == {}


async def test_unknown_answered_and_other_connections_ids_do_nothing():
    mine, other = Connection(), Connection()
    finish, work = gate()
    task = await other.start(1, "session/list", {}, work({"sessions": []}))
    await mine.cancel(1)  # the same id, sent by another connection
    await mine.cancel(2)
    finish.set()
    assert await task == {"sessions": []}
    await other.cancel(1)  # answered already
    assert len(other.in_flight) == 0


async def test_bad_params_are_a_validation_error():
    connection = Connection()
    for params in ({}, {"requestId": {"an": "object"}}, {"requestId": 1.5}, "1"):
        with pytest.raises(ValidationError):
            await connection.in_flight.cancel(params)


async def test_a_notification_read_last_is_not_taken_for_a_request():
    connection = Connection()
    await connection.start(9, "session/list", {}, gate()[1]())
    await connection.notification_read()

    async def untracked() -> str:
        return "ran"

    task = asyncio.create_task(connection.in_flight.run("session/list", {}, untracked))  # no id in its context
    assert await task == "ran"
    assert len(connection.in_flight) == 1  # only request 9


@pytest.mark.parametrize("method", ["session/list", "session/prompt", "session/new"])
async def test_the_connection_closing_is_not_a_cancelled_request(method):
    connection = Connection("s1")
    task = await connection.start(1, method, {"sessionId": "s1"}, gate()[1]())
    await connection.cancel(1)
    task.cancel()  # Connection.close() cancels its tasks, a cancel requested or not
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(connection.in_flight) == 0


# -- with the real agent and session host: what a cancelled opening leaves behind ---------------------------


class QuietPeer:
    async def update(self, session_id: str, update: Any) -> None:
        pass


class RealConnection:
    def __init__(self, tmp_path) -> None:
        from iac_code.acp.agent import IacAgent
        from iac_code.acp.outbox import Outbox as RealOutbox
        from iac_code.acp.router import build_handler
        from iac_code.config import Settings
        from iac_code.host.host import SessionHost

        self.sent: list[dict[str, Any]] = []
        self.outbox = RealOutbox(self)  # type: ignore[arg-type]
        self.agent = IacAgent(SessionHost(Settings(config_dir=tmp_path / "config")), self.outbox)
        self.agent._front.peer = QuietPeer()  # type: ignore[assignment]
        self.in_flight = InFlight(self.agent, self.outbox)
        self.handle = build_handler(self.agent, self.in_flight)
        self._inbound = Inbound()
        self._reading = self.in_flight.reading(self._inbound)  # type: ignore[arg-type]

    async def send(self, message: dict[str, Any]) -> None:  # the outbox's transport
        self.sent.append(message)

    async def start(self, request_id: int, method: str, params: dict[str, Any]) -> asyncio.Task[Any]:
        self._inbound.next = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        await self._reading.receive()
        task = asyncio.create_task(self.handle(method, params, False))
        await asyncio.sleep(0)
        return task

    def gate_after(self, name: str) -> asyncio.Event:
        """The sessions' `name` does its work, then waits for the event: the cancel comes half-way."""
        real = getattr(self.agent.sessions, name)
        opened = asyncio.Event()

        async def gated(*args: Any) -> Any:
            core = await real(*args)
            opened_before.set()
            await opened.wait()
            return core

        opened_before = asyncio.Event()
        self.opened_before = opened_before
        setattr(self.agent.sessions, name, gated)
        return opened


async def test_a_real_session_new_cancelled_after_it_opened_leaves_nothing(tmp_path):
    connection = RealConnection(tmp_path)
    (tmp_path / "work").mkdir()
    release = connection.gate_after("create")
    task = await connection.start(1, "session/new", {"cwd": str(tmp_path / "work"), "mcpServers": []})
    await connection.opened_before.wait()
    assert len(connection.agent.sessions.live) == 1  # stored, live, held in the outbox
    await connection.in_flight.cancel({"requestId": 1})
    release.set()
    assert (await answer_of(task))["code"] == -32800
    assert connection.agent.sessions.live == {}
    assert (await connection.agent.sessions.page(None, None))[0] == []
    await asyncio.gather(*connection.agent._background)  # the commands update session/new spawned: held, dropped
    assert [m for m in connection.sent if m.get("method") == "session/update"] == []
    await connection.agent.shutdown()


async def test_a_real_session_load_cancelled_closes_it_and_keeps_it_stored(tmp_path):
    connection = RealConnection(tmp_path)
    (tmp_path / "work").mkdir()
    core = await connection.agent.sessions.create(str(tmp_path / "work"), [])
    await connection.agent.sessions.close(core.id)
    release = connection.gate_after("restore")
    params = {"sessionId": core.id, "cwd": str(tmp_path / "work"), "mcpServers": []}
    task = await connection.start(2, "session/load", params)
    await connection.opened_before.wait()
    assert core.id in connection.agent.sessions.live
    await connection.in_flight.cancel({"requestId": 2})
    release.set()
    assert (await answer_of(task))["code"] == -32800
    assert connection.agent.sessions.live == {}
    assert [r.session_id for r in (await connection.agent.sessions.page(None, None))[0]] == [core.id]
    await connection.agent.shutdown()


async def test_a_cancelled_session_new_stops_the_mcp_servers_it_started(tmp_path):
    from tests.e2e.mcp.servers import acp_form, fixture_server, marker, processes_with, wait_until_gone

    connection = RealConnection(tmp_path)
    (tmp_path / "work").mkdir()
    word = marker()
    release = connection.gate_after("create")
    params = {"cwd": str(tmp_path / "work"), "mcpServers": [acp_form(fixture_server("two", word))]}
    task = await connection.start(1, "session/new", params)
    await connection.opened_before.wait()
    async with asyncio.timeout(30):  # the server starts in the background
        while not (started := processes_with(word)):
            await asyncio.sleep(0.05)
    await connection.in_flight.cancel({"requestId": 1})
    release.set()
    assert (await answer_of(task))["code"] == -32800
    assert await asyncio.to_thread(wait_until_gone, started, 5) == []
    await connection.agent.shutdown()
