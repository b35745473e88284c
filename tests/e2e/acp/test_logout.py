"""`logout` forgets the credentials stored for the user and signs the process out until `authenticate`."""

from __future__ import annotations

import stat
from pathlib import Path

from tests.e2e.acp.wire import AgentProcess, model_env

from iac_code.stored_credentials import credentials_path, store_api_key


def _agent(tmp_path: Path, **env: str) -> AgentProcess:
    # a provider that needs a key, and no key in the environment unless the test gives one
    base = {"IAC_CODE_PROVIDER": "openai", "IAC_CODE_API_KEY": "", "OPENAI_API_KEY": "", **env}
    full = model_env("http://127.0.0.1:9/v1", tmp_path / "config", **base)
    return AgentProcess({k: v for k, v in full.items() if v})


def _new_session(agent: AgentProcess, cwd: Path) -> dict:
    return agent.call("session/new", {"cwd": str(cwd), "mcpServers": []})


def test_initialize_offers_logout_and_keeps_fork_out_of_the_stable_capabilities(tmp_path):
    agent = _agent(tmp_path, IAC_CODE_API_KEY="sk-env")
    try:
        capabilities = agent.initialize()["agentCapabilities"]
        assert capabilities["auth"] == {"logout": {}}
        assert "fork" not in capabilities["sessionCapabilities"]
        assert capabilities["sessionCapabilities"]["_meta"] == {"iac-code/unstable": {"fork": {}}}
        source = _new_session(agent, tmp_path)["result"]["sessionId"]
        fork = agent.result("session/fork", {"sessionId": source, "cwd": str(tmp_path), "mcpServers": []})
        assert fork["sessionId"] != source  # the method still works
    finally:
        assert agent.close() == 0


def test_logout_deletes_the_stored_key_and_new_sessions_need_a_sign_in(tmp_path):
    store_api_key(tmp_path / "config", "sk-stored")
    stored = credentials_path(tmp_path / "config")
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    agent = _agent(tmp_path)
    try:
        agent.initialize()
        assert "result" in _new_session(agent, tmp_path)  # the stored key is a key source
        assert agent.result("logout", {}) == {}
        assert not stored.exists()
        error = _new_session(agent, tmp_path)["error"]
        assert error["code"] == -32000 and "signed out" in error["message"]
        assert agent.initialize()["authMethods"][0]["id"] == "env"  # what to sign in with now
        assert agent.call("authenticate", {"methodId": "oauth"})["error"]["code"] == -32602
        # nothing left to sign in with: the key was the stored one
        error = agent.call("authenticate", {"methodId": "env"})["error"]
        assert error["code"] == -32000 and "API key" in error["message"]
        assert _new_session(agent, tmp_path)["error"]["code"] == -32000
    finally:
        assert agent.close() == 0


def test_after_logout_an_environment_key_is_used_only_once_authenticate_is_called(tmp_path):
    agent = _agent(tmp_path, IAC_CODE_API_KEY="sk-env")
    try:
        agent.initialize()
        assert agent.result("logout") == {}
        assert _new_session(agent, tmp_path)["error"]["code"] == -32000
        assert agent.result("authenticate", {"methodId": "env"}) == {}
        assert "sessionId" in _new_session(agent, tmp_path)["result"]
    finally:
        assert agent.close() == 0
