"""The third-party reference server `@modelcontextprotocol/server-everything` from session/new, through the
real agent over stdio: the model calls its tools, and closing the session stops it."""

from __future__ import annotations

import pytest
from tests.e2e.mcp.servers import acp_form, everything_server, marker, processes_with, wait_until_gone
from tests.e2e.mcp.through_agent import allow, call, open_session, tool_updates

pytestmark = pytest.mark.timeout(600)  # the first test of a fresh checkout also installs the server from npm


def test_the_model_calls_its_tools_through_the_agent(everything, spawn, model, workspace):
    agent, word = spawn(), marker()
    session_id, _ = open_session(
        agent, workspace, [acp_form(everything_server(everything, word))], ready=["everything"]
    )
    model.add(
        call("mcp__everything__echo", message="terraform plan"),  # marked read-only: runs without asking
        call("mcp__everything__get-tiny-image"),
        call("mcp__everything__toggle-simulated-logging"),  # not read-only: asks
        {"text": "done"},
    )
    asked: list = []
    response, seen = agent.prompt(session_id, "go", allow("allow_once", asked))
    assert response["result"]["stopReason"] == "end_turn"
    results = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert results[0] == "Echo: terraform plan" and "[image: image/png" in results[1]
    assert results[2].startswith("Started simulated, random-leveled logging")
    assert [r["params"]["toolCall"]["title"] for r in asked] == ["Toggle Simulated Logging (MCP server everything)"]
    finals = [u for u in tool_updates(seen) if u.get("status") in ("completed", "failed")]
    assert [u["status"] for u in finals] == ["completed"] * 3
    assert any(block["content"]["type"] == "image" for block in finals[1]["content"])
    pids = processes_with(word)
    assert pids
    assert agent.result("session/close", {"sessionId": session_id}) == {}
    assert wait_until_gone(pids, 3) == []
