"""The model provider is built on the first model call, yet a misconfiguration still reaches the client."""

from __future__ import annotations

from tests.e2e.acp.wire import AgentProcess, model_env


def _agent(tmp_path, **env: str) -> AgentProcess:
    full = model_env("http://127.0.0.1:9/v1", tmp_path / "config", **env)
    agent = AgentProcess({k: v for k, v in full.items() if v})
    agent.initialize()
    return agent


def test_a_setting_missing_is_reported_at_session_new(tmp_path):
    agent = _agent(tmp_path, IAC_CODE_MODEL="")
    try:
        error = agent.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})["error"]
        assert error["code"] == -32000
        assert "IAC_CODE_MODEL" in error["data"]["config"]
    finally:
        assert agent.close() == 0


def test_a_problem_found_when_building_is_reported_on_the_first_prompt(tmp_path):
    agent = _agent(tmp_path, IAC_CODE_PROVIDER="scripted", IAC_CODE_SCRIPT=str(tmp_path / "missing.json"))
    try:
        session_id = agent.new_session(tmp_path)
        response, _ = agent.prompt(session_id, "hello")
        assert response["error"]["code"] == -32603 and "IAC_CODE_SCRIPT" in response["error"]["message"]
    finally:
        assert agent.close() == 0


def test_a_missing_key_is_advertised_as_the_env_var_auth_method_and_named_by_session_new(tmp_path):
    agent = _agent(tmp_path, IAC_CODE_PROVIDER="openai", IAC_CODE_API_KEY="", OPENAI_API_KEY="")
    try:
        [method] = agent.initialize()["authMethods"]
        assert method["type"] == "env_var" and "OPENAI_API_KEY" in method["description"]
        assert "IAC_CODE_API_KEY" in {v["name"] for v in method["vars"]}
        error = agent.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})["error"]
        assert error["code"] == -32000
        assert "OPENAI_API_KEY" in error["message"] and "OPENAI_API_KEY" in error["data"]["config"]
    finally:
        assert agent.close() == 0


def test_a_complete_configuration_advertises_no_auth_method(tmp_path):
    agent = _agent(tmp_path)
    try:
        assert agent.initialize()["authMethods"] == []
    finally:
        assert agent.close() == 0
