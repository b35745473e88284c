"""Requests sent at launch, while the SDK loads: a plain session/new is answered at once (acp/early.py),
exactly as the SDK-served agent answers one later, and the session then behaves like any other."""

from __future__ import annotations

from tests.e2e.acp.wire import AgentProcess, answer_text, model_env, updates

EARLY_NEW = "answered session/new"  # the --debug line of an early answer


def test_a_session_new_sent_at_launch_is_answered_early_then_served_like_any(model, tmp_path):
    model.add({"text": "early bird"})
    agent = AgentProcess(model_env(model.url, tmp_path / "config"), "--debug")
    try:
        agent.start_request("initialize", {"protocolVersion": 1})
        first_id = agent.start_request("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        response, before = agent.response(first_id)
        first = response["result"]
        assert not updates(before)  # nothing about the session before the client has its id

        prompt, seen = agent.prompt(first["sessionId"], "hi")
        assert prompt["result"]["stopReason"] == "end_turn"
        assert answer_text(seen) == "early bird"
        assert updates(seen)[0]["sessionUpdate"] == "available_commands_update"

        second = agent.result("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        assert {**first, "sessionId": ""} == {**second, "sessionId": ""}
        assert first["sessionId"] != second["sessionId"]
    finally:
        assert agent.close() == 0
    assert sum(EARLY_NEW in line for line in agent.stderr_lines) == 1, "only the first one came before the SDK"

    again = AgentProcess(model_env(model.url, tmp_path / "config"))
    try:
        again.initialize()
        load = again.start_request(
            "session/load", {"sessionId": first["sessionId"], "cwd": str(tmp_path), "mcpServers": []}
        )
        _, replayed = again.response(load)
        assert answer_text(replayed) == "early bird"
    finally:
        assert again.close() == 0


def test_what_follows_a_request_left_to_the_sdk_keeps_its_order(model, tmp_path):
    agent = AgentProcess(model_env(model.url, tmp_path / "config"), "--debug")
    try:
        agent.start_request("initialize", {"protocolVersion": 1})
        bad = agent.start_request("session/new", {"cwd": "relative", "mcpServers": []})
        good = agent.start_request("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        first, _ = agent.until(lambda m: m.get("id") in (bad, good))
        assert first["id"] == bad and first["error"]["code"] == -32602
        second, _ = agent.response(good)
        assert second["result"]["sessionId"]
    finally:
        assert agent.close() == 0
    assert not any(EARLY_NEW in line for line in agent.stderr_lines)
