"""A stdio server's whole process tree ends with it, through the real agent: what the server started in
its own session (`setsid`) or double-forked out of its process group is gone after session/close,
session/delete, the client closing stdin, and a `kill -9` of the agent; and a server run that way
still answers tool calls."""

from __future__ import annotations

import pytest
from tests.e2e.acp.wire import Agents
from tests.e2e.mcp.servers import acp_form, tree_pids, tree_server, wait_until_gone
from tests.e2e.mcp.through_agent import call, open_session

pytestmark = pytest.mark.timeout(120)

GONE_WITHIN = 5  # seconds: the stdin-close grace, then the supervisor's SIGTERM-then-SIGKILL sweep


def _tool_results(model) -> list[str]:
    return [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("method", ["session/close", "session/delete"])
def test_closing_the_session_ends_the_servers_whole_tree_which_answered_meanwhile(
    spawn, model, workspace, tmp_path, method
):
    agent, pid_file = spawn(), tmp_path / "tree.pids"
    session_id, _ = open_session(agent, workspace, [acp_form(tree_server("tree", pid_file))], ready=["tree"])
    with tree_pids(pid_file) as pids:
        model.add(call("mcp__tree__describe_region", region="cn-shanghai"), {"text": "done"})
        response, _ = agent.prompt(session_id, "go")
        assert response["result"]["stopReason"] == "end_turn"
        assert _tool_results(model) == ["cn-shanghai: 3 zones"]
        assert wait_until_gone(pids, 0) == pids  # all running before the session ends
        assert agent.result(method, {"sessionId": session_id}) in ({}, None)
        assert wait_until_gone(pids, GONE_WITHIN) == []


def test_the_client_going_away_ends_the_servers_whole_tree(spawn, workspace, tmp_path):
    agent, pid_file = spawn(), tmp_path / "tree.pids"
    open_session(agent, workspace, [acp_form(tree_server("tree", pid_file))], ready=["tree"])
    with tree_pids(pid_file) as pids:
        assert agent.close() == 0
        assert wait_until_gone(pids, GONE_WITHIN) == []


def test_a_sigkilled_agent_leaves_nothing_of_its_servers_trees(model, tmp_path, workspace):
    agents = Agents(model.url, tmp_path / "config")
    agent, files = agents.start(), [tmp_path / "one.pids", tmp_path / "two.pids"]
    servers = [acp_form(tree_server(name, file)) for name, file in zip(("one", "two"), files, strict=True)]
    open_session(agent, workspace, servers, ready=["one", "two"])
    with tree_pids(files[0]) as first, tree_pids(files[1]) as second:
        agent.proc.kill()
        agent.proc.wait(10)
        assert wait_until_gone(first + second, GONE_WITHIN) == []
    agents.close_all(killed_ok=True)
