"""Issue 11, item 22: how the answers a client may give end the call they were about, over stdio."""

from __future__ import annotations

import time

from tests.e2e.acp.wire import select, updates

WRITE = {"tool_calls": [{"name": "write_file", "arguments": {"path": "main.tf", "content": "x"}}]}


def test_an_option_id_that_was_not_offered_is_a_denial_logged_at_warning(agent, model, workspace):
    model.add(WRITE, {"text": "Not written."})
    session_id = agent.new_session(workspace)
    response, seen = agent.prompt(session_id, "write", select("yes-please"))
    assert response["result"]["stopReason"] == "end_turn" and not (workspace / "main.tf").exists()
    (final,) = updates(seen, "tool_call_update")
    assert final["status"] == "failed" and final["rawOutput"] == "Permission denied."
    deadline = time.monotonic() + 5
    while not any("yes-please" in line for line in agent.stderr_lines) and time.monotonic() < deadline:
        time.sleep(0.05)
    (warning,) = [line for line in agent.stderr_lines if "yes-please" in line]
    assert "WARNING" in warning and "not offered" in warning


def test_a_cancelled_answer_ends_the_call_failed_then_the_turn(agent, model, workspace):
    model.add(WRITE)
    session_id = agent.new_session(workspace)
    response, seen = agent.prompt(session_id, "write", lambda request: {"outcome": {"outcome": "cancelled"}})
    assert response["result"]["stopReason"] == "cancelled"
    (call,) = updates(seen, "tool_call")
    (final,) = updates(seen, "tool_call_update")
    assert final["toolCallId"] == call["toolCallId"]
    assert final["status"] == "failed" and final["rawOutput"] == {"reason": "cancelled"}
