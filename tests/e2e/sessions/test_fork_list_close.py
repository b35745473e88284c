"""fork, list, close, delete and /clear, on the wire."""

from __future__ import annotations

import time

from tests.e2e.sessions.flows import load, model_saw, replayed, summary


def _texts(before, session_id) -> list[str]:
    return [summary(u)[1] for u in replayed(before, session_id) if u["sessionUpdate"] == "user_message_chunk"]


def test_fork_copies_the_history_and_then_both_go_their_own_way(spawn, model, workspace):
    agent = spawn()
    original = agent.new_session(workspace)
    model.add({"text": "Noted."})
    agent.prompt(original, "shared start")

    params = {"sessionId": original, "cwd": str(workspace), "mcpServers": []}
    response, before = agent.response(agent.start_request("session/fork", params))
    fork = response["result"]["sessionId"]
    assert fork != original and fork.startswith("sess_")
    assert response["result"]["modes"]["currentModeId"] == "default"
    assert before == []  # nothing about the fork before the client has its id

    model.add({"text": "Fork answer."}, {"text": "Original answer."})
    agent.prompt(fork, "only in the fork")
    assert model_saw(model, "shared start") and model_saw(model, "only in the fork")
    agent.prompt(original, "only in the original")
    assert model_saw(model, "shared start") and not model_saw(model, "only in the fork")
    assert agent.close() == 0

    restarted = spawn()
    _, before = load(restarted, fork, workspace)
    assert _texts(before, fork) == ["shared start", "only in the fork"]
    _, before = load(restarted, original, workspace)
    assert _texts(before, original) == ["shared start", "only in the original"]
    listed = restarted.result("session/list", {"cwd": str(workspace)})["sessions"]
    assert {s["sessionId"] for s in listed} == {original, fork}


def test_fork_is_persisted_at_once(spawn, model, workspace):
    agent = spawn()
    original = agent.new_session(workspace)
    model.add({"text": "Ok."})
    agent.prompt(original, "before the fork")
    fork = agent.result("session/fork", {"sessionId": original, "cwd": str(workspace), "mcpServers": []})["sessionId"]
    assert agent.close() == 0  # no prompt in the fork: the copy alone must be on disk

    _, before = load(spawn(), fork, workspace)
    assert _texts(before, fork) == ["before the fork"]


def test_list_filters_by_cwd_orders_newest_first_and_pages(agent, model, workspace, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    elsewhere = agent.new_session(other)
    ids = [agent.new_session(workspace) for _ in range(52)]
    model.add({"text": "Ok."})
    agent.prompt(ids[0], "Bump me to the top\nsecond line")

    first = agent.result("session/list", {"cwd": str(workspace)})
    assert len(first["sessions"]) == 50 and first["nextCursor"]
    second = agent.result("session/list", {"cwd": str(workspace), "cursor": first["nextCursor"]})
    assert "nextCursor" not in second
    listed = [s["sessionId"] for s in first["sessions"] + second["sessions"]]
    assert listed == [ids[0], *reversed(ids[1:])]
    top = first["sessions"][0]
    assert top["title"] == "Bump me to the top" and top["cwd"] == str(workspace) and top["updatedAt"]
    assert elsewhere not in listed
    stamps = [s["updatedAt"] for s in first["sessions"]]
    assert stamps == sorted(stamps, reverse=True)

    bad = agent.call("session/list", {"cwd": str(workspace), "cursor": "not-a-cursor"})
    assert bad["error"]["code"] == -32602 and "cursor" in bad["error"]["data"]


def test_close_then_prompt_fails_and_load_brings_it_back(agent, model, workspace):
    session_id = agent.new_session(workspace)
    model.add({"text": "First."})
    agent.prompt(session_id, "remember me")
    assert agent.result("session/close", {"sessionId": session_id}) == {}
    closed = agent.call("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]})
    assert closed["error"]["code"] == -32602 and closed["error"]["data"] == {"sessionId": "Session not found"}

    _, before = load(agent, session_id, workspace)
    assert _texts(before, session_id) == ["remember me"]
    model.add({"text": "Back."})
    response, _ = agent.prompt(session_id, "are you back?")
    assert response["result"]["stopReason"] == "end_turn"
    assert model_saw(model, "remember me")


def test_delete_removes_it_for_good(agent, model, workspace):
    session_id = agent.new_session(workspace)
    assert agent.result("session/delete", {"sessionId": session_id}) == {}
    assert agent.result("session/list", {"cwd": str(workspace)})["sessions"] == []
    gone = agent.call("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
    assert gone["error"]["data"] == {"sessionId": "Session not found"}
    assert agent.result("session/delete", {"sessionId": session_id}) == {}


def test_clear_starts_a_fresh_history_that_load_keeps(spawn, model, workspace):
    agent = spawn()
    session_id = agent.new_session(workspace)
    model.add({"text": "Ok."})
    agent.prompt(session_id, "forget this")
    agent.prompt(session_id, "/clear")
    model.add({"text": "Fresh."})
    agent.prompt(session_id, "after the clear")
    assert not model_saw(model, "forget this")
    assert agent.close() == 0

    _, before = load(spawn(), session_id, workspace)
    assert [summary(u) for u in replayed(before, session_id)] == [
        ("user_message_chunk", "after the clear"),
        ("agent_message_chunk", "Fresh."),
    ]


def test_an_idle_session_leaves_memory_and_comes_back_on_the_next_call(spawn, model, workspace):
    agent = spawn(IAC_CODE_SESSION_IDLE_SECONDS="0.2")
    session_id = agent.new_session(workspace)
    model.add({"text": "Ok."})
    agent.prompt(session_id, "before idling")
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": "read-only"})
    # That it is evicted is checked in tests/unit/acp/test_idle_sessions.py; here, that nobody notices.
    time.sleep(0.5)
    params = {"sessionId": session_id, "configId": "model", "value": "scripted-model"}
    assert agent.result("session/set_config_option", params)["configOptions"][0]["currentValue"] == "read-only"
    time.sleep(0.5)
    model.add({"text": "Still here."})
    response, _ = agent.prompt(session_id, "after idling")
    assert response["result"]["stopReason"] == "end_turn"
    assert model_saw(model, "before idling")
