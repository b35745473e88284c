"""Boolean config options (`session.configOptions.boolean`): offered, set, announced and kept with the session."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.acp.wire import AgentProcess, model_env, select, updates

BOOLEANS = {"session": {"configOptions": {"boolean": {}}}}
WRITE = {"tool_calls": [{"name": "write_file", "arguments": {"path": "main.tf", "content": "terraform {}\n"}}]}


def _started(model, config_dir: Path, capabilities: dict) -> AgentProcess:
    agent = AgentProcess(model_env(model.url, config_dir))
    agent.result("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})  # first: may be early
    return agent


def _booleans(options: list[dict]) -> dict[str, bool]:
    return {option["id"]: option["currentValue"] for option in options if option["type"] == "boolean"}


def _set(agent: AgentProcess, session_id: str, value: object) -> dict:
    params = {"sessionId": session_id, "configId": "check_after_edit", "type": "boolean", "value": value}
    return agent.call("session/set_config_option", params)


def _reopen(agent: AgentProcess, method: str, session_id: str, workspace: Path) -> dict:
    params = {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []}
    response, _ = agent.response(agent.start_request(method, params))
    return response["result"]


def test_a_boolean_option_is_set_announced_and_kept_across_a_restart(model, workspace, tmp_path):
    agent = _started(model, tmp_path / "config", BOOLEANS)
    try:
        created = agent.result("session/new", {"cwd": str(workspace), "mcpServers": []})
        session_id = created["sessionId"]
        (option,) = [o for o in created["configOptions"] if o["type"] == "boolean"]
        assert option["id"] == "check_after_edit" and option["currentValue"] is False
        assert option["name"] == "Check IaC files after each edit"
        agent.until(lambda m: updates([m], "available_commands_update") != [])
        response, seen = agent.response(
            agent.start_request(
                "session/set_config_option",
                {"sessionId": session_id, "configId": "check_after_edit", "type": "boolean", "value": True},
            )
        )
        assert _booleans(response["result"]["configOptions"]) == {"check_after_edit": True}
        assert [o["id"] for o in response["result"]["configOptions"]] == ["mode", "model", "check_after_edit"]
        (announced,) = updates(seen, "config_option_update")
        assert announced["configOptions"] == response["result"]["configOptions"]
        assert _set(agent, session_id, "maybe")["error"]["code"] == -32602  # the SDK checks the boolean
    finally:
        assert agent.close() == 0

    again = _started(model, tmp_path / "config", BOOLEANS)
    try:
        assert _booleans(_reopen(again, "session/load", session_id, workspace)["configOptions"]) == {
            "check_after_edit": True
        }
        assert _booleans(_reopen(again, "session/resume", session_id, workspace)["configOptions"]) == {
            "check_after_edit": True
        }
    finally:
        assert again.close() == 0


def test_a_client_without_boolean_support_never_sees_them(model, workspace, tmp_path):
    agent = _started(model, tmp_path / "config", {"session": {"configOptions": {}}})
    try:
        created = agent.result("session/new", {"cwd": str(workspace), "mcpServers": []})
        session_id = created["sessionId"]
        assert _booleans(created["configOptions"]) == {}
        error = _set(agent, session_id, True)["error"]
        assert error["code"] == -32602 and "check_after_edit" in error["data"]["configId"]
        mode = {"sessionId": session_id, "configId": "mode", "value": "plan"}
        response, seen = agent.response(agent.start_request("session/set_config_option", mode))
        assert _booleans(response["result"]["configOptions"]) == {}
        assert all(_booleans(u["configOptions"]) == {} for u in updates(seen, "config_option_update"))
        assert _booleans(_reopen(agent, "session/load", session_id, workspace)["configOptions"]) == {}
        assert _booleans(_reopen(agent, "session/resume", session_id, workspace)["configOptions"]) == {}
    finally:
        assert agent.close() == 0


def _iac_checks_after_a_write(agent: AgentProcess, model, workspace: Path, session_id: str) -> list[dict]:
    model.add(WRITE, {"text": "written"})
    response, _ = agent.prompt(session_id, "write main.tf", on_permission=select("allow_once"))
    assert response["result"]["stopReason"] == "end_turn"
    assert (workspace / "main.tf").read_text() == "terraform {}\n"
    calls = [m["function"] for message in model.requests[-1]["messages"] for m in message.get("tool_calls") or []]
    return [call for call in calls if call["name"] == "iac_check"]


def test_checking_after_each_edit_runs_iac_check_on_what_was_written(model, workspace, tmp_path):
    agent = _started(model, tmp_path / "config", BOOLEANS)
    try:
        session_id = agent.new_session(workspace)
        assert _iac_checks_after_a_write(agent, model, workspace, session_id) == []  # off by default
        assert "result" in _set(agent, session_id, True)
        (check,) = _iac_checks_after_a_write(agent, model, workspace, session_id)
        assert check["arguments"] == '{"path": "main.tf"}'
        results = [m for m in model.requests[-1]["messages"] if m["role"] == "tool"]
        assert results[-1]["tool_call_id"].startswith("check_")  # its result reached the model
    finally:
        assert agent.close() == 0
