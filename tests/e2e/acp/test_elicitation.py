"""ask_user over raw JSON-RPC on stdio: a client that advertises `elicitation.form` gets `elicitation/create`
(tied to the call) and its answer reaches the model; declined, dismissed and nonsense answers are said to the
model; a session/cancel while the form is open ends the turn cancelled; a client without the capability
gets the question as the call's text and the turn ends."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from tests.e2e.acp.elicitations import FORM_CLIENT, prompt_answering, started_agent, tool_result_sent
from tests.e2e.acp.wire import AgentProcess, updates

QUESTION = {
    "message": "Where should the bucket live?",
    "fields": [
        {"name": "region", "kind": "choice", "options": [{"value": "eu", "title": "Europe"}, {"value": "us"}]},
        {"name": "copies", "kind": "integer", "minimum": 1, "maximum": 5},
        {"name": "versioned", "kind": "boolean", "required": False},
    ],
}
ASK = {"tool_calls": [{"id": "call_ask", "name": "ask_user", "arguments": QUESTION}]}


@pytest.fixture(scope="module")
def form_agent(model, tmp_path_factory) -> Iterator[AgentProcess]:
    agent = started_agent(model, tmp_path_factory.mktemp("config"), FORM_CLIENT)
    yield agent
    assert agent.close() == 0 and not agent.stdout_problems


@pytest.fixture(scope="module")
def plain_agent(model, tmp_path_factory) -> Iterator[AgentProcess]:
    agent = started_agent(model, tmp_path_factory.mktemp("config"), {})
    yield agent
    assert agent.close() == 0 and not agent.stdout_problems


def test_an_answered_form_reaches_the_model(form_agent, model, workspace):
    model.add(ASK, {"text": "noted"})
    session_id = form_agent.new_session(workspace)
    answers = {"region": "eu", "copies": 3, "versioned": True}
    response, _, asked = prompt_answering(form_agent, session_id, lambda _: {"action": "accept", "content": answers})
    assert response["result"]["stopReason"] == "end_turn"
    (request,) = asked
    params = request["params"]
    assert params["sessionId"] == session_id and params["toolCallId"] == "call_ask" and params["mode"] == "form"
    assert params["message"] == QUESTION["message"]
    schema = params["requestedSchema"]
    assert schema["properties"]["region"]["oneOf"] == [
        {"const": "eu", "title": "Europe"},
        {"const": "us", "title": "us"},
    ]
    assert schema["properties"]["copies"] == {"type": "integer", "title": "copies", "minimum": 1, "maximum": 5}
    assert schema["properties"]["versioned"]["type"] == "boolean"
    assert schema["required"] == ["region", "copies"]
    assert json.dumps(answers) in tool_result_sent(model)


@pytest.mark.parametrize(
    ("action", "said"),
    [("decline", "The user declined to answer"), ("cancel", "The user dismissed the question")],
)
def test_a_declined_or_dismissed_form_is_said_plainly(form_agent, model, workspace, action, said):
    model.add(ASK, {"text": "ok"})
    session_id = form_agent.new_session(workspace)
    response, _, asked = prompt_answering(form_agent, session_id, lambda _: {"action": action})
    assert response["result"]["stopReason"] == "end_turn" and len(asked) == 1
    assert said in tool_result_sent(model)


def test_an_answer_that_does_not_fit_the_question_is_an_error_for_the_model(form_agent, model, workspace):
    model.add(ASK, {"text": "ok"})
    session_id = form_agent.new_session(workspace)
    nonsense = {"action": "accept", "content": {"region": "mars", "copies": 3}}
    response, seen, _ = prompt_answering(form_agent, session_id, lambda _: nonsense)
    assert response["result"]["stopReason"] == "end_turn"
    sent = tool_result_sent(model)
    assert "does not fit the question" in sent and "'region' must be one of the options" in sent
    assert updates(seen, "tool_call_update")[-1]["status"] == "failed"


def test_a_cancel_while_the_form_is_open_ends_the_turn_cancelled(form_agent, model, workspace):
    model.add(ASK, {"text": "after the cancel"})
    session_id = form_agent.new_session(workspace)
    prompt_id = form_agent.start_request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    )
    request, _ = form_agent.until(lambda m: m.get("method") == "elicitation/create")
    form_agent.notify("session/cancel", {"sessionId": session_id})
    response, _ = form_agent.response(prompt_id, timeout=5)
    assert response["result"]["stopReason"] == "cancelled"
    form_agent.answer(request, {"action": "cancel"})  # the client's late answer changes nothing
    response, _, asked = prompt_answering(form_agent, session_id, lambda _: {"action": "decline"})
    assert response["result"]["stopReason"] == "end_turn" and not asked
    assert "Cancelled" in tool_result_sent(model)


def test_without_the_capability_the_question_is_text_and_the_turn_ends(plain_agent, model, workspace):
    model.add(ASK, {"text": "thanks, Europe it is"})
    session_id = plain_agent.new_session(workspace)
    response, seen, asked = prompt_answering(plain_agent, session_id, lambda _: pytest.fail("asked a form"))
    assert response["result"]["stopReason"] == "end_turn" and not asked
    assert len(model.requests) == 1  # the turn ended after the call: no second model call
    shown = updates(seen, "tool_call_update")[-1]
    assert shown["status"] == "completed"
    text = shown["content"][0]["content"]["text"]
    assert QUESTION["message"] in text and "one of: Europe / us" in text and "1" in text
    response, _, _ = prompt_answering(plain_agent, session_id, lambda _: pytest.fail("asked a form"))
    assert "Asked in plain text" in tool_result_sent(model)  # the next turn's model sees the question it asked
