"""No orphans through the real agent: a session's stdio servers, and everything they started (even in
another session, or double-forked out of their process group), stop on session/close and
session/delete, when the client goes (stdin closed, HTTP connection deleted), when the agent is killed
with SIGKILL, and when the session is evicted for idleness (and start again when it comes back).
Server "one" starts such processes (tree_server); both answer tool calls meanwhile."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests.e2e.acp.wire import Agents
from tests.e2e.http.client import AcpHttp, is_response
from tests.e2e.http.server_process import http_server
from tests.e2e.mcp.servers import (
    acp_form,
    fixture_server,
    marker,
    processes_with,
    servers_with,
    tree_pids,
    tree_server,
    wait_until_gone,
)
from tests.e2e.mcp.through_agent import announced, call, open_session

pytestmark = pytest.mark.timeout(120)

GONE_WITHIN = 5  # seconds: the stdin-close grace, then the supervisor's SIGTERM-then-SIGKILL sweep


def _servers(word: str, pid_file: Path) -> list[dict]:
    return [acp_form(tree_server("one", pid_file, word)), acp_form(fixture_server("two", word))]


def _running(word: str) -> list[int]:
    """The two servers' processes, their supervisors included."""
    assert len(servers_with(word)) == 2, processes_with(word)
    return processes_with(word)


def _tool_results(model) -> list[str]:
    return [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("method", ["session/close", "session/delete"])
def test_closing_or_deleting_the_session_stops_its_servers_whole_trees(spawn, model, workspace, tmp_path, method):
    agent, word, pid_file = spawn(), marker(), tmp_path / "one.pids"
    session_id, _ = open_session(agent, workspace, _servers(word, pid_file), ready=["one", "two"])
    with tree_pids(pid_file) as escapees:
        model.add(call("mcp__one__describe_region", region="cn-shanghai"), {"text": "done"})
        response, _ = agent.prompt(session_id, "go")  # the supervised server works as any other
        assert response["result"]["stopReason"] == "end_turn"
        assert _tool_results(model) == ["cn-shanghai: 3 zones"]
        pids = [*_running(word), *escapees]
        assert agent.result(method, {"sessionId": session_id}) in ({}, None)
        assert wait_until_gone(pids, GONE_WITHIN) == []


def test_the_client_closing_stdin_stops_every_servers_tree(spawn, workspace, tmp_path):
    agent, word, pid_file = spawn(), marker(), tmp_path / "one.pids"
    open_session(agent, workspace, _servers(word, pid_file), ready=["one", "two"])
    with tree_pids(pid_file) as escapees:
        pids = [*_running(word), *escapees]
        assert agent.close() == 0
        assert wait_until_gone(pids, GONE_WITHIN) == []


def test_servers_trees_die_with_an_agent_killed_by_sigkill(model, tmp_path, workspace):
    agents = Agents(model.url, tmp_path / "config")
    agent, word, pid_file = agents.start(), marker(), tmp_path / "one.pids"
    open_session(agent, workspace, _servers(word, pid_file), ready=["one", "two"])
    with tree_pids(pid_file) as escapees:
        pids = [*_running(word), *escapees]
        agent.proc.kill()
        agent.proc.wait(10)
        # PR_SET_PDEATHSIG: the kernel tells each server's supervisor, which ends its tree
        assert wait_until_gone(pids, GONE_WITHIN) == []
    agents.close_all(killed_ok=True)


def test_an_evicted_session_stops_its_servers_and_starts_them_again_when_used(spawn, model, workspace, tmp_path):
    agent, word, pid_file = spawn(IAC_CODE_SESSION_IDLE_SECONDS="2"), marker(), tmp_path / "one.pids"
    session_id, _ = open_session(agent, workspace, _servers(word, pid_file))
    deadline = time.monotonic() + 30
    while len(servers_with(word)) < 2:  # calls keep the session in memory while its servers start
        assert time.monotonic() < deadline, "the servers never started"
        agent.result("session/set_mode", {"sessionId": session_id, "modeId": "default"})
        time.sleep(0.2)
    with tree_pids(pid_file) as escapees:
        pids = [*_running(word), *escapees]
        assert wait_until_gone(pids, 10) == []  # evicted after two seconds without a call
    model.add(call("mcp__one__describe_region", region="ap-southeast-1"), {"text": "done"})
    response, _ = agent.prompt(session_id, "go")  # reloaded: the client's servers start again
    assert response["result"]["stopReason"] == "end_turn"
    assert _tool_results(model) == ["ap-southeast-1: 3 zones"]
    assert set(_running(word)).isdisjoint(pids)


def test_over_http_a_tool_call_then_deleting_the_connection_stops_the_servers_trees(model, tmp_path):
    word, pid_file = marker(), tmp_path / "one.pids"
    with http_server(model.url) as live:
        client = AcpHttp(live.url)
        stream = client.stream()
        params = {"cwd": str(live.workspace), "mcpServers": _servers(word, pid_file)}
        assert client.post({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": params}).status_code == 202
        session_id = stream.until(is_response(2))[-1]["data"]["result"]["sessionId"]
        # One announcement may already list both servers' prompts: wait for one that does.
        servers_listed = lambda data: {n.split("__")[1] for n in announced(data) if n.startswith("mcp__")}  # noqa: E731
        stream.until(lambda data: {"one", "two"} <= servers_listed(data), timeout=60)
        with tree_pids(pid_file) as escapees:
            pids = [*_running(word), *escapees]
            model.add(call("mcp__two__describe_region", region="cn-beijing"), {"text": "done"})
            assert client.prompt(session_id, "go").status_code == 202
            assert stream.until(is_response(3))[-1]["data"]["result"]["stopReason"] == "end_turn"
            assert _tool_results(model) == ["cn-beijing: 3 zones"]
            assert client.delete().status_code in (200, 202, 204)
            assert wait_until_gone(pids, GONE_WITHIN) == []
        stream.close()
        client.close()
