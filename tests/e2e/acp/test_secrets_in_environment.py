"""The model keys and the cloud credentials are not readable by the commands the agent runs, not even in the
agent's own environment (which a command in a PID namespace of its own cannot even reach)."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.acp.wire import AgentProcess, model_env, select

SECRETS = {
    "IAC_CODE_API_KEY": "sk-iac-code-secret",
    "OPENAI_API_KEY": "sk-openai-secret",
    "ANTHROPIC_API_KEY": "sk-ant-secret",
    "ANTHROPIC_AUTH_TOKEN": "ant-auth-token-secret",
    "DASHSCOPE_API_KEY": "sk-dashscope-secret",
    "IACCODE_ACP_HTTP_TOKEN": "http-bearer-secret",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-in-the-agent",
    "ALICLOUD_ACCESS_KEY_SECRET": "alicloud-secret-in-the-agent",
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
        agent_environment, own_environment = output.split("---")
        # Read, or out of its reach (a PID namespace of its own): never with a secret in it.
        assert "IAC_CODE_CONFIG_DIR=" in agent_environment or "No such file" in agent_environment, output
        assert "IAC_CODE_CONFIG_DIR=" in own_environment, "the command's own environment was read"
        leaked = [name for name, value in SECRETS.items() if value in output or f"{name}=" in output]
        assert leaked == []
        # What any process of the user could read of the agent's environment while it serves.
        seen_from_outside = Path(f"/proc/{agent.proc.pid}/environ").read_bytes().decode(errors="replace")
        assert "IAC_CODE_CONFIG_DIR=" in seen_from_outside
        assert [name for name, value in SECRETS.items() if value in seen_from_outside] == []
    finally:
        assert agent.close() == 0
