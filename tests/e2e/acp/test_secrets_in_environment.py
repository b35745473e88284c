"""The model keys are not readable by the commands the agent runs, not even in the agent's own environment."""

from __future__ import annotations

from tests.e2e.acp.wire import AgentProcess, model_env, select

SECRETS = {
    "IAC_CODE_API_KEY": "sk-iac-code-secret",
    "OPENAI_API_KEY": "sk-openai-secret",
    "ANTHROPIC_API_KEY": "sk-ant-secret",
    "ANTHROPIC_AUTH_TOKEN": "ant-auth-token-secret",
    "DASHSCOPE_API_KEY": "sk-dashscope-secret",
    "IACCODE_ACP_HTTP_TOKEN": "http-bearer-secret",
}


def test_bash_cannot_read_the_keys_from_the_agent_or_its_own_environment(model, tmp_path, workspace):
    agent = AgentProcess(model_env(model.url, tmp_path / "config", **SECRETS))
    try:
        agent.initialize()
        session_id = agent.new_session(workspace)
        command = f"tr '\\0' '\\n' < /proc/{agent.proc.pid}/environ; echo ---; env"
        model.add({"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, {"text": "done"})
        response, _ = agent.prompt(session_id, "show the environment", select("allow_once"))
        assert response["result"]["stopReason"] == "end_turn"
        output = model.requests[1]["messages"][-1]["content"]
        assert "IAC_CODE_CONFIG_DIR=" in output.split("---")[0], "the agent's environment was read"
        assert "IAC_CODE_CONFIG_DIR=" in output.split("---")[1], "and the command's own"
        leaked = [name for name, value in SECRETS.items() if value in output or f"{name}=" in output]
        assert leaked == []
    finally:
        assert agent.close() == 0
