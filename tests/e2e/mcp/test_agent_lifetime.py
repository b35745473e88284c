"""No orphans through the real agent: a session's stdio servers stop on session/close, when the client
goes (stdin closed, HTTP connection deleted), when the agent is killed with SIGKILL, and when the
session is evicted for idleness (and start again when it comes back)."""

from __future__ import annotations

import time

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
    wait_until_gone,
)
from tests.e2e.mcp.through_agent import announced, call, open_session

pytestmark = pytest.mark.timeout(120)


def _servers(word: str) -> list[dict]:
    return [acp_form(fixture_server("one", word)), acp_form(fixture_server("two", word))]


def _running(word: str) -> list[int]:
    """The two servers' processes, their supervisors included."""
    assert len(servers_with(word)) == 2, processes_with(word)
    return processes_with(word)


@pytest.mark.parametrize("method", ["session/close", "session/delete"])
def test_closing_or_deleting_the_session_stops_its_servers(spawn, workspace, method):
    agent, word = spawn(), marker()
    session_id, _ = open_session(agent, workspace, _servers(word), ready=["one", "two"])
    pids = _running(word)
    assert agent.result(method, {"sessionId": session_id}) in ({}, None)
    assert wait_until_gone(pids, 2) == []


def test_the_client_closing_stdin_stops_every_server(spawn, workspace):
    agent, word = spawn(), marker()
    open_session(agent, workspace, _servers(word), ready=["one", "two"])
    pids = _running(word)
    assert agent.close() == 0
    assert wait_until_gone(pids, 2) == []


def test_servers_die_with_an_agent_killed_by_sigkill(model, tmp_path, workspace):
    agents = Agents(model.url, tmp_path / "config")
    agent, word = agents.start(), marker()
    open_session(agent, workspace, _servers(word), ready=["one", "two"])
    pids = _running(word)
    agent.proc.kill()
    agent.proc.wait(10)
    assert wait_until_gone(pids, 3) == []  # PR_SET_PDEATHSIG: the kernel kills them with the agent
    agents.close_all(killed_ok=True)


def test_an_evicted_session_stops_its_servers_and_starts_them_again_when_used(spawn, model, workspace):
    agent, word = spawn(IAC_CODE_SESSION_IDLE_SECONDS="2"), marker()
    session_id, _ = open_session(agent, workspace, _servers(word))
    deadline = time.monotonic() + 30
    while len(servers_with(word)) < 2:  # calls keep the session in memory while its servers start
        assert time.monotonic() < deadline, "the servers never started"
        agent.result("session/set_mode", {"sessionId": session_id, "modeId": "default"})
        time.sleep(0.2)
    pids = _running(word)
    assert wait_until_gone(pids, 10) == []  # evicted after two seconds without a call
    model.add(call("mcp__one__describe_region", region="ap-southeast-1"), {"text": "done"})
    response, _ = agent.prompt(session_id, "go")  # reloaded: the client's servers start again
    assert response["result"]["stopReason"] == "end_turn"
    assert [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"] == ["ap-southeast-1: 3 zones"]
    assert set(_running(word)).isdisjoint(pids)


def test_over_http_a_tool_call_then_deleting_the_connection_stops_the_servers(model):
    word = marker()
    with http_server(model.url) as live:
        client = AcpHttp(live.url)
        stream = client.stream()
        params = {"cwd": str(live.workspace), "mcpServers": _servers(word)}
        assert client.post({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": params}).status_code == 202
        session_id = stream.until(is_response(2))[-1]["data"]["result"]["sessionId"]
        # One announcement may already list both servers' prompts: wait for one that does.
        servers_listed = lambda data: {n.split("__")[1] for n in announced(data) if n.startswith("mcp__")}  # noqa: E731
        stream.until(lambda data: {"one", "two"} <= servers_listed(data), timeout=60)
        pids = _running(word)
        model.add(call("mcp__two__describe_region", region="cn-beijing"), {"text": "done"})
        assert client.prompt(session_id, "go").status_code == 202
        assert stream.until(is_response(3))[-1]["data"]["result"]["stopReason"] == "end_turn"
        assert [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"] == ["cn-beijing: 3 zones"]
        assert client.delete().status_code in (200, 202, 204)
        assert wait_until_gone(pids, 5) == []
        stream.close()
        client.close()
