"""An MCP server's elicitation through the real agent: the fixture server (the official SDK's MCPServer) asks
with `ctx.elicit` / `ctx.elicit_url` during a tool call; a client that advertises elicitation gets ACP
`elicitation/create` tied to that call, and its answer reaches the server; without the capability the server
is declined and the client asked nothing."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from tests.e2e.acp.elicitations import started_agent, tool_result_sent
from tests.e2e.acp.wire import AgentProcess, Message
from tests.e2e.mcp.servers import acp_form, fixture_server
from tests.e2e.mcp.through_agent import call, open_session
from tests.processes import wait_for_text

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def asking_agent(model, tmp_path_factory) -> Iterator[AgentProcess]:
    agent = started_agent(model, tmp_path_factory.mktemp("config"), {"elicitation": {"form": {}, "url": {}}})
    yield agent
    assert agent.close() == 0 and not agent.stdout_problems


@pytest.fixture(scope="module")
def plain_agent(model, tmp_path_factory) -> Iterator[AgentProcess]:
    agent = started_agent(model, tmp_path_factory.mktemp("config"), {})
    yield agent
    assert agent.close() == 0 and not agent.stdout_problems


def _run(
    agent: AgentProcess, workspace, events, answer: Callable[[Message], Any], *server_args: str
) -> tuple[Message, list[Message], str]:
    """A session with the fixture server (`server_args`; by default --legacy: ctx.elicit needs a protocol
    before 2026-07-28) whose turn calls the tool the model was scripted to call; each elicitation/create
    answered with `answer`: (the prompt's response, the elicitation requests, the call's id)."""
    server = fixture_server("fixture", *(server_args or ("--legacy",)), events=events)
    session_id, _ = open_session(agent, workspace, [acp_form(server)], ready=["fixture"])
    prompt_id = agent.start_request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    )
    asked: list[Message] = []
    call_id = ""
    while True:
        message = agent.next(60)
        update = message.get("params", {}).get("update", {}) if message.get("method") == "session/update" else {}
        if update.get("sessionUpdate") == "tool_call":
            call_id = update["toolCallId"]
        if message.get("method") == "elicitation/create":
            asked.append(message)
            agent.answer(message, answer(message))
        elif message.get("id") == prompt_id and "method" not in message:
            assert message["result"]["stopReason"] == "end_turn", message
            return message, asked, call_id


def test_a_servers_form_is_asked_of_the_client_and_the_answer_reaches_the_server(
    asking_agent, model, workspace, tmp_path
):
    events = tmp_path / "events"
    model.add(call("mcp__fixture__place_bucket"), {"text": "placed"})
    answer = {"action": "accept", "content": {"region": "eu-west", "copies": 2}}
    _, asked, call_id = _run(asking_agent, workspace, events, lambda _: answer)
    (request,) = asked
    params = request["params"]
    assert params["mode"] == "form" and params["toolCallId"] == call_id and call_id
    assert params["message"] == "Where should the bucket live?"
    properties = params["requestedSchema"]["properties"]
    assert properties["region"]["type"] == "string" and properties["copies"]["type"] == "integer"
    assert params["requestedSchema"]["required"] == ["region"]
    placed = json.dumps({"region": "eu-west", "copies": 2}, separators=(",", ":"))
    assert f"elicited accept {placed}" in wait_for_text(events, 10)
    assert f"accept {placed}" in tool_result_sent(model)


def test_a_2026_server_asks_through_input_required_and_gets_the_answer(asking_agent, model, workspace, tmp_path):
    events = tmp_path / "events"
    model.add(call("mcp__fixture__place_bucket_resolved"), {"text": "placed"})
    answer = {"action": "accept", "content": {"region": "ap-south", "copies": 1}}
    _, asked, call_id = _run(asking_agent, workspace, events, lambda _: answer, "--modern")
    assert [request["params"]["toolCallId"] for request in asked] == [call_id]
    placed = json.dumps({"region": "ap-south", "copies": 1}, separators=(",", ":"))
    assert f"elicited accept {placed}" in wait_for_text(events, 10)


def test_a_servers_url_question_is_asked_in_url_mode(asking_agent, model, workspace, tmp_path):
    events = tmp_path / "events"
    model.add(call("mcp__fixture__sign_in"), {"text": "signed in"})
    _, asked, call_id = _run(asking_agent, workspace, events, lambda _: {"action": "accept"})
    (request,) = asked
    params = request["params"]
    assert params["mode"] == "url" and params["toolCallId"] == call_id
    assert params["url"] == "https://registry.example/login" and params["elicitationId"] == "login-1"
    assert "signed in accept" in wait_for_text(events, 10)


def test_a_nonsense_answer_reaches_the_server_as_cancel(asking_agent, model, workspace, tmp_path):
    events = tmp_path / "events"
    model.add(call("mcp__fixture__place_bucket"), {"text": "no"})
    answer = {"action": "accept", "content": {"region": "eu-west", "copies": "two"}}
    _run(asking_agent, workspace, events, lambda _: answer)
    assert "elicited cancel" in wait_for_text(events, 10)


def test_without_the_capability_the_server_is_declined(plain_agent, model, workspace, tmp_path):
    events = tmp_path / "events"
    model.add(call("mcp__fixture__place_bucket"), {"text": "declined"})
    _, asked, _ = _run(plain_agent, workspace, events, lambda _: pytest.fail("asked the client"))
    assert not asked
    assert "elicited decline" in wait_for_text(events, 10)
    assert "decline" in tool_result_sent(model)
