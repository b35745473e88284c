"""Outbox: updates of a session wait for the response that gives the client its id."""

from typing import Any

from iac_code.acp.outbox import Outbox


class RecordingTransport:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.closed = False

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    async def receive(self) -> dict[str, Any] | None:
        return {"jsonrpc": "2.0", "method": "ping"}

    async def close(self) -> None:
        self.closed = True


def update(session_id: str, n: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session_id, "n": n}}


def response(session_id: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": session_id}}


async def test_held_updates_follow_the_response_in_order():
    transport = RecordingTransport()
    outbox = Outbox(transport)  # type: ignore[arg-type]
    outbox.hold("s1")
    await outbox.send(update("s1", 1))
    await outbox.send(update("s1", 2))
    assert transport.sent == []
    await outbox.send(response("s1"))
    assert transport.sent == [response("s1"), update("s1", 1), update("s1", 2)]
    await outbox.send(update("s1", 3))
    assert transport.sent[-1] == update("s1", 3), "released for good"


async def test_other_sessions_and_messages_pass_through():
    transport = RecordingTransport()
    outbox = Outbox(transport)  # type: ignore[arg-type]
    outbox.hold("s1")
    request = {"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": {"sessionId": "s2"}}
    await outbox.send(update("s2", 1))
    await outbox.send(request)
    assert transport.sent == [update("s2", 1), request]


async def test_receive_and_close_reach_the_transport():
    transport = RecordingTransport()
    outbox = Outbox(transport)  # type: ignore[arg-type]
    assert await outbox.receive() == {"jsonrpc": "2.0", "method": "ping"}
    await outbox.close()
    assert transport.closed
