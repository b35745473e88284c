"""`$/cancel_request` over stdio: a prompt cancelled by its request id ends `cancelled` as with session/cancel;
a session/new cancelled in flight is undone and answers -32800; unknown ids and bad params change nothing.
The tracking itself, each kind of request at each moment, is tests/unit/acp/test_cancellation.py's."""

from __future__ import annotations

import json
import time

from tests.e2e.acp.wire import AgentProcess, model_env, updates

SLOW_TEXT = {"text": "partial answer that never ends", "chunk_chars": 1, "delay": 0.5}  # 15 s unless stopped


def _is_update(kind):
    return lambda m: m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == kind


def _cancel(agent: AgentProcess, request_id: object) -> None:
    agent.notify("$/cancel_request", {"requestId": request_id})


def _start_prompt(agent: AgentProcess, session_id: str, text: str = "go") -> int:
    return agent.start_request("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]})


def test_a_streaming_prompt_cancelled_by_its_id_ends_cancelled(agent, model, workspace):
    model.add(SLOW_TEXT, {"text": "second answer"})
    session_id = agent.new_session(workspace)
    prompt_id = _start_prompt(agent, session_id)
    agent.until(_is_update("agent_message_chunk"))
    cancelled_at = time.monotonic()
    _cancel(agent, prompt_id)
    response, _ = agent.response(prompt_id, timeout=5)
    assert response["result"]["stopReason"] == "cancelled"
    assert time.monotonic() - cancelled_at < 3  # generous: the goal is "within a second"
    response, _ = agent.prompt(session_id, "again")
    assert response["result"]["stopReason"] == "end_turn"


def test_a_prompt_waiting_on_a_permission_question_cancelled_by_its_id(agent, model, workspace):
    write = {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.tf", "content": "x"}}]}
    model.add(write, {"text": "after cancel"})
    session_id = agent.new_session(workspace)
    prompt_id = _start_prompt(agent, session_id)
    question, _ = agent.until(lambda m: m.get("method") == "session/request_permission")
    _cancel(agent, prompt_id)
    response, seen = agent.response(prompt_id, timeout=5)
    assert response["result"]["stopReason"] == "cancelled"
    finals = [u for u in updates(seen, "tool_call_update") if u.get("status") == "failed"]
    assert finals and finals[-1]["rawOutput"] == {"reason": "cancelled"}  # the question's call ended
    agent.answer(question, {"outcome": {"outcome": "cancelled"}})  # the client's late, compliant answer
    assert not (workspace / "a.tf").exists()
    response, seen = agent.prompt(session_id, "next")
    assert response["result"]["stopReason"] == "end_turn"
    assert "after cancel" in "".join(u["content"]["text"] for u in updates(seen, "agent_message_chunk"))


def test_a_prompt_cancelled_as_it_arrives_ends_cancelled(agent, model, workspace):
    """The cancel follows the prompt in the same read: it meets the prompt before or as its turn starts."""
    model.add(SLOW_TEXT)
    session_id = agent.new_session(workspace)
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    both = [
        {"jsonrpc": "2.0", "id": 900, "method": "session/prompt", "params": prompt},
        {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 900}},
    ]
    agent.send_line("\n".join(json.dumps(m) for m in both))
    response, _ = agent.response(900, timeout=5)
    assert response["result"]["stopReason"] == "cancelled"
    assert agent.result("session/list", {})["sessions"]  # and the connection serves on


def test_a_string_request_id_is_cancelled_too(agent, model, workspace):
    model.add(SLOW_TEXT)
    session_id = agent.new_session(workspace)
    params = {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    agent.send({"jsonrpc": "2.0", "id": "prompt-a", "method": "session/prompt", "params": params})
    agent.until(_is_update("agent_message_chunk"))
    _cancel(agent, 1_000_000)  # an int id that is not in flight: not confused with anything
    _cancel(agent, "prompt-a")
    response, _ = agent.until(lambda m: m.get("id") == "prompt-a" and "method" not in m, timeout=5)
    assert response["result"]["stopReason"] == "cancelled"


def test_unknown_answered_and_malformed_ids_change_nothing(agent, model, workspace):
    model.add({"text": "first"}, {"text": "second"})
    session_id = agent.new_session(workspace)
    answered_id = _start_prompt(agent, session_id)
    assert agent.response(answered_id)[0]["result"]["stopReason"] == "end_turn"
    _cancel(agent, answered_id)
    _cancel(agent, 987_654)
    _cancel(agent, "no-such-request")
    agent.notify("$/cancel_request", {"requestId": {"not": "an id"}})
    agent.notify("$/cancel_request", {})
    # nothing was answered to any of them: the next message is this call's response
    list_id = agent.start_request("session/list", {})
    assert agent.next()["id"] == list_id
    response, _ = agent.prompt(session_id, "still here")
    assert response["result"]["stopReason"] == "end_turn"
    assert any("ignored $/cancel_request notification" in line for line in agent.stderr_lines)


def test_cancel_requests_while_the_sdk_loads_are_harmless(model, tmp_path, workspace):
    """Sent in one write with initialize and session/new, which are answered before the SDK has loaded."""
    agent = AgentProcess(model_env(model.url, tmp_path / "config"))
    try:
        lines = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 1}},
            {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(workspace), "mcpServers": []}},
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 2}},
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {}},
        ]
        agent.send_line("\n".join(json.dumps(line) for line in lines))
        answers = {}
        while len(answers) < 2:
            message = agent.next()
            if "method" not in message:
                answers[message["id"]] = message
        assert "result" in answers[1], answers
        listed = [s["sessionId"] for s in agent.result("session/list", {})["sessions"]]
        if "result" in answers[2]:  # answered early, or before the cancel was read: nothing to cancel
            assert listed == [answers[2]["result"]["sessionId"]]
        else:  # the SDK had loaded and the cancel found it in flight: opened, then undone
            assert answers[2]["error"]["code"] == -32800, answers[2]
            assert listed == []
    finally:
        assert agent.close() == 0, "".join(agent.stderr_lines)
