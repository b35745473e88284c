"""On stdio too, a session's cwd is never inside the agent's own state (the config dir: its database, tokens,
plans): the early answer leaves such a session/new to the agent, which refuses it with -32602; the editor's
ordinary workspace is served as before."""

from __future__ import annotations

from tests.e2e.acp.wire import AgentProcess, model_env


def test_the_config_dir_is_no_workspace_on_stdio(tmp_path):
    config, workspace = tmp_path / "config", tmp_path / "workspace"
    (config / "sessions").mkdir(parents=True)
    workspace.mkdir()
    agent = AgentProcess(model_env("http://127.0.0.1:9/v1", config))
    try:
        agent.initialize()
        for cwd in (config, config / "sessions"):  # the first is what the early answer sees, before the SDK
            error = agent.call("session/new", {"cwd": str(cwd), "mcpServers": []})["error"]
            assert error["code"] == -32602, error
            assert "inside the agent's own state" in error["data"]["cwd"]
        assert agent.new_session(workspace).startswith("sess_")
        assert [s["cwd"] for s in agent.result("session/list", {})["sessions"]] == [str(workspace.resolve())]
    finally:
        assert agent.close() == 0
