"""/status, in both faces: the mode, the model, which protection guards the commands, the MCP servers."""

from __future__ import annotations

from tests.e2e.acp.wire import Agents, answer_text
from tests.e2e.test_headless import run
from tests.fakes.openai_server import ScriptedOpenAI


def _guard_line(namespaces_here: bool) -> str:
    if namespaces_here:
        return "Infrastructure guard: PATH shims + mount namespace"
    return "Infrastructure guard: PATH shims only: "


def test_headless_status_without_a_model_call(workspace, namespaces_here):
    with ScriptedOpenAI([]) as model:
        result = run(workspace, model, "-p", "/status")
    assert result.returncode == 0, result.stderr
    assert model.requests == []
    mode, model_line, guard, servers = result.stdout.splitlines()
    assert (mode, model_line, servers) == ("Mode: default", "Model: scripted-model", "MCP servers: none")
    assert guard.startswith(_guard_line(namespaces_here))


def test_acp_status_follows_the_mode(model, workspace, namespaces_here, tmp_path):
    agents = Agents(model.url, tmp_path / "config")
    agent = agents.start()
    session_id = agent.new_session(workspace)
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": "plan"})
    response, seen = agent.prompt(session_id, "/status")
    agents.close_all()
    assert response["result"]["stopReason"] == "end_turn"
    text = answer_text(seen)
    assert "Mode: plan\nModel: scripted-model\n" in text
    assert _guard_line(namespaces_here) in text
