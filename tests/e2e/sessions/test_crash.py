"""kill -9 of the server at awkward moments: nothing acknowledged is lost, and the session still works
with a model that rejects unanswered tool calls (the fake answers HTTP 400, like the real APIs)."""

from __future__ import annotations

from tests.e2e.acp.wire import updates
from tests.e2e.sessions.conftest import kill
from tests.e2e.sessions.flows import edit_database, load, model_saw, replayed, stored_messages, summary

READ_MAIN = {"tool_calls": [{"id": "call_read", "name": "read_file", "arguments": {"path": "main.tf"}}]}
WRITE_A = {"tool_calls": [{"id": "call_write", "name": "write_file", "arguments": {"path": "a.tf", "content": "x"}}]}


def _is_permission_request(message) -> bool:
    return message.get("method") == "session/request_permission"


def _streamed(text: str):
    return lambda m: any(
        u["sessionUpdate"] == "agent_message_chunk" and text in u["content"]["text"] for u in updates([m])
    )


def test_kill_during_a_streamed_answer_keeps_every_finished_message(spawn, model, workspace):
    first = spawn()
    session_id = first.new_session(workspace)
    model.add({"text": "Answer one."})
    first.prompt(session_id, "first question")
    model.add(READ_MAIN, {"text": "Half an answ", "hang": True})
    first.start_request("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "second"}]})
    first.until(_streamed("Half an answ"))
    kill(first)

    second = spawn()
    response, before = load(second, session_id, workspace)
    assert "result" in response
    assert [summary(u) for u in replayed(before, session_id)] == [
        ("user_message_chunk", "first question"),
        ("agent_message_chunk", "Answer one."),
        ("user_message_chunk", "second"),
        ("tool_call", "call_read", "pending"),
        ("tool_call_update", "call_read", "completed"),
    ]
    model.add({"text": "Recovered."})
    response, _ = second.prompt(session_id, "third")
    assert response["result"]["stopReason"] == "end_turn"  # the fake would have answered 400
    assert model_saw(model, "second") and model_saw(model, "alicloud_vpc")


def test_kill_while_a_permission_request_is_pending(spawn, model, workspace, config_dir):
    first = spawn()
    session_id = first.new_session(workspace)
    model.add(WRITE_A)
    first.start_request("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "write it"}]})
    first.until(_is_permission_request)
    kill(first)

    second = spawn()
    _, before = load(second, session_id, workspace)
    replay = replayed(before, session_id)
    assert [summary(u) for u in replay] == [
        ("user_message_chunk", "write it"),
        ("tool_call", "call_write", "pending"),
        ("tool_call_update", "call_write", "failed"),
    ]
    assert "interrupted" in replay[-1]["content"][0]["content"]["text"]
    assert not (workspace / "a.tf").exists()
    log = stored_messages(config_dir, session_id)
    assert sum("interrupted" in message.get("text", "") for message in log) == 1  # the repair was written back, once

    model.add({"text": "Understood, it was not written."})
    response, _ = second.prompt(session_id, "what happened?")
    assert response["result"]["stopReason"] == "end_turn"
    tool_messages = [m for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 1 and "interrupted" in tool_messages[0]["content"]


def test_a_torn_last_record_is_dropped(spawn, model, workspace, config_dir):
    first = spawn()
    session_id = first.new_session(workspace)
    model.add({"text": "Kept."})
    first.prompt(session_id, "kept question")
    assert first.close() == 0
    # SQLite never leaves half a row; a torn record can still come from elsewhere (a hand edit, a bad copy).
    edit_database(
        config_dir,
        "INSERT INTO iac_messages (session_id, seq, body) SELECT ?, last_seq + 1, ? FROM iac_sessions WHERE session_id = ?",
        session_id,
        '{"role":"assistant","text":"torn in the midd',
        session_id,
    )
    edit_database(config_dir, "UPDATE iac_sessions SET last_seq = last_seq + 1 WHERE session_id = ?", session_id)

    second = spawn()
    _, before = load(second, session_id, workspace)
    assert [summary(u) for u in replayed(before, session_id)] == [
        ("user_message_chunk", "kept question"),
        ("agent_message_chunk", "Kept."),
    ]
    model.add({"text": "Fine."})
    response, _ = second.prompt(session_id, "next")
    assert response["result"]["stopReason"] == "end_turn"
    assert not model_saw(model, "torn in the midd")
