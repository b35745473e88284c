"""session/cancel mid-stream and mid-permission: `cancelled` quickly, and the next prompt works."""

from __future__ import annotations

import time

from tests.e2e.acp.wire import updates


def _is_update(kind):
    return lambda m: m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == kind


def test_cancel_mid_stream_then_prompt_again(agent, model, workspace):
    model.add({"text": "partial answer that never ends", "chunk_chars": 1, "delay": 0.5}, {"text": "second answer"})
    session_id = agent.new_session(workspace)
    prompt_id = agent.start_request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    )
    agent.until(_is_update("agent_message_chunk"))
    cancelled_at = time.monotonic()
    agent.notify("session/cancel", {"sessionId": session_id})
    response, _ = agent.response(prompt_id, timeout=5)
    assert response["result"]["stopReason"] == "cancelled"
    assert time.monotonic() - cancelled_at < 3  # generous: the goal is "within a second"
    response, _ = agent.prompt(session_id, "again")
    assert response["result"]["stopReason"] == "end_turn"


def test_cancel_while_a_permission_is_pending(agent, model, workspace):
    write = {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.tf", "content": "x"}}]}
    model.add(write, {"text": "after cancel"})
    session_id = agent.new_session(workspace)
    prompt_id = agent.start_request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    )
    request, _ = agent.until(lambda m: m.get("method") == "session/request_permission")
    agent.notify("session/cancel", {"sessionId": session_id})
    response, seen = agent.response(prompt_id, timeout=5)
    assert response["result"]["stopReason"] == "cancelled"
    agent.answer(request, {"outcome": {"outcome": "cancelled"}})  # the client's late, compliant answer
    assert not (workspace / "a.tf").exists()
    # the dangling tool call got a result: the fake model answers 400 otherwise
    response, seen = agent.prompt(session_id, "next")
    assert response["result"]["stopReason"] == "end_turn"
    assert "after cancel" in "".join(u["content"]["text"] for u in updates(seen, "agent_message_chunk"))


def test_a_cancelled_permission_answer_cancels_the_turn(agent, model, workspace):
    write = {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.tf", "content": "x"}}]}
    model.add(write, {"text": "fine"})
    session_id = agent.new_session(workspace)
    response, _ = agent.prompt(session_id, "go", lambda request: {"outcome": {"outcome": "cancelled"}})
    assert response["result"]["stopReason"] == "cancelled"
    assert not (workspace / "a.tf").exists()
    assert agent.prompt(session_id, "next")[0]["result"]["stopReason"] == "end_turn"


def test_close_cancels_a_running_prompt(agent, model, workspace):
    model.add({"text": "forever and ever", "chunk_chars": 1, "delay": 0.5})
    session_id = agent.new_session(workspace)
    prompt_id = agent.start_request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    )
    agent.until(_is_update("agent_message_chunk"))
    closed, before = agent.response(agent.start_request("session/close", {"sessionId": session_id}))
    assert closed["result"] == {}
    # close waits for the turn to stop, so the prompt has its answer first
    (response,) = [m for m in before if m.get("id") == prompt_id]
    assert response["result"]["stopReason"] == "cancelled"
