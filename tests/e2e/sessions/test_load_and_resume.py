"""session/load and session/resume after a restart of the server, and for a session live in it."""

from __future__ import annotations

from tests.e2e.acp.wire import updates
from tests.e2e.sessions.flows import load, model_saw, replayed, summary

READ_MAIN = {"tool_calls": [{"id": "call_read", "name": "read_file", "arguments": {"path": "main.tf"}}]}


def _first_turn(agent, model, workspace) -> str:
    """One turn with thinking, a tool call and an answer; then mode accept-edits."""
    session_id = agent.new_session(workspace)
    model.add({"thinking": "Look at the file first.", **READ_MAIN}, {"text": "It defines one VPC."})
    response, _ = agent.prompt(session_id, "What does main.tf define?")
    assert response["result"]["stopReason"] == "end_turn"
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": "accept-edits"})
    return session_id


def test_load_after_restart_replays_the_history_before_answering(spawn, model, workspace):
    first = spawn()
    session_id = _first_turn(first, model, workspace)
    assert first.close() == 0

    second = spawn()
    response, before = load(second, session_id, workspace)
    assert [summary(u) for u in replayed(before, session_id)] == [
        ("user_message_chunk", "What does main.tf define?"),
        ("agent_thought_chunk", "Look at the file first."),
        ("tool_call", "call_read", "pending"),
        ("tool_call_update", "call_read", "completed"),
        ("agent_message_chunk", "It defines one VPC."),
    ]
    call, result = replayed(before, session_id)[2:4]
    assert call["kind"] == "read" and call["rawInput"] == {"path": "main.tf"} and "main.tf" in call["title"]
    assert call["locations"] == [{"path": str(workspace / "main.tf")}]
    assert "alicloud_vpc" in result["content"][0]["content"]["text"]
    assert "alicloud_vpc" in result["rawOutput"]

    state = response["result"]
    assert "sessionId" not in state
    assert state["modes"]["currentModeId"] == "accept-edits"  # restored from the record
    assert state["models"]["currentModelId"] == "scripted-model"
    assert [o["currentValue"] for o in state["configOptions"]] == ["accept-edits", "scripted-model"]

    model.add({"text": "Yes."})
    response, _ = second.prompt(session_id, "Is that all?")
    assert response["result"]["stopReason"] == "end_turn"
    roles = [m["role"] for m in model.requests[-1]["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert model_saw(model, "What does main.tf define?") and model_saw(model, "alicloud_vpc")


def test_resume_after_restart_restores_without_replay(spawn, model, workspace):
    first = spawn()
    session_id = _first_turn(first, model, workspace)
    assert first.close() == 0

    second = spawn()
    params = {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []}
    response, before = second.response(second.start_request("session/resume", params))
    assert replayed(before, session_id) == []
    state = response["result"]
    assert "sessionId" not in state
    assert state["modes"]["currentModeId"] == "accept-edits"

    model.add({"text": "Still one VPC."})
    response, _ = second.prompt(session_id, "And now?")
    assert response["result"]["stopReason"] == "end_turn"
    assert model_saw(model, "What does main.tf define?") and model_saw(model, "It defines one VPC.")


def test_load_of_a_live_session_replays_it_from_memory(agent, model, workspace):
    session_id = _first_turn(agent, model, workspace)
    response, before = load(agent, session_id, workspace)
    assert "result" in response
    assert [summary(u)[0] for u in replayed(before, session_id)] == [
        "user_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "agent_message_chunk",
    ]
    resumed = agent.result("session/resume", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
    assert resumed["modes"]["currentModeId"] == "accept-edits"


def test_load_and_resume_refuse_an_unknown_id_or_another_cwd(agent, model, workspace, tmp_path):
    session_id = agent.new_session(workspace)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for method in ("session/load", "session/resume", "session/fork"):
        unknown = agent.call(method, {"sessionId": "sess_nope", "cwd": str(workspace), "mcpServers": []})
        assert unknown["error"]["code"] == -32602
        assert unknown["error"]["data"] == {"sessionId": "Session not found"}
        other = agent.call(method, {"sessionId": session_id, "cwd": str(elsewhere), "mcpServers": []})
        assert other["error"]["code"] == -32602
        assert other["error"]["data"] == {"cwd": f"session {session_id} belongs to {workspace}"}


def test_a_prompt_can_follow_load_at_once_and_updates_name_the_session(spawn, model, workspace):
    first = spawn()
    session_id = first.new_session(workspace)
    model.add({"text": "Hello."})
    first.prompt(session_id, "hi")
    assert first.close() == 0

    second = spawn()
    _, before = load(second, session_id, workspace)
    assert [summary(u) for u in replayed(before, session_id)] == [
        ("user_message_chunk", "hi"),
        ("agent_message_chunk", "Hello."),
    ]
    assert [u["sessionUpdate"] for u in updates(before)][-1] == "available_commands_update"
    model.add({"text": "Again."})
    response, seen = second.prompt(session_id, "again")
    assert response["result"]["stopReason"] == "end_turn"
    assert "user_message_chunk" not in [u["sessionUpdate"] for u in updates(seen)]  # live prompts are not echoed
