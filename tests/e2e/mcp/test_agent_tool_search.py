"""A server of 10,000 tools through the real agent over stdio: the requests carry the built-in tools and
`tool_search`, under the share of the context window; the model searches, the tool found is offered from
the next request on and runs behind the usual permission question; a tool called by its name without a
search runs too; a new process that loads the session offers what was found. A server of a few tools is
offered whole, without the search."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.e2e.acp.wire import AgentProcess
from tests.e2e.mcp.servers import acp_form, fixture_server
from tests.e2e.mcp.through_agent import READY_TIMEOUT, allow, announced, call, open_session, tool_updates
from tests.fakes.mcp_server import generated_name

from iac_code.agent.compaction import CHARS_PER_TOKEN
from iac_code.providers.presets import DEFAULT_CONTEXT_WINDOW

pytestmark = pytest.mark.timeout(240)

TOOLS = 10_000
SHARE = 0.10  # the default
WANTED = generated_name(4242)  # tag_cluster_4242
FOUND = f"mcp__big__{WANTED}"
BUILT_IN = ["read_file", "write_file", "bash", "update_plan"]  # some of them


@pytest.fixture
def big() -> dict[str, Any]:
    return acp_form(fixture_server("big", f"--tools={TOOLS}"))


def tool_names(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools", [])]


def tools_tokens(request: dict[str, Any]) -> int:
    """The request's tools as compaction counts them (~4 characters a token), whatever their JSON shape."""
    return len(json.dumps(request["tools"], ensure_ascii=False)) // CHARS_PER_TOKEN


def test_the_model_searches_ten_thousand_tools_and_calls_the_one_it_found(spawn, model, workspace, big):
    first = spawn()
    session_id, _ = open_session(first, workspace, [big], ready=["big"])
    model.add(
        call("tool_search", query="tag cluster 4242", limit=3),
        call(FOUND, resource="cl-7"),
        {"text": "tagged"},
    )
    asked: list[Any] = []
    response, seen = first.prompt(session_id, "tag cluster 4242", allow(asked=asked))
    assert response["result"]["stopReason"] == "end_turn"

    searched, called, answered = model.requests
    for request in model.requests:
        assert tools_tokens(request) <= SHARE * DEFAULT_CONTEXT_WINDOW, tools_tokens(request)
    offered = tool_names(searched)
    assert offered[-1] == "tool_search" and set(BUILT_IN) <= set(offered)
    assert not [name for name in offered if name.startswith("mcp__")]
    search = next(tool["function"] for tool in searched["tools"] if tool["function"]["name"] == "tool_search")
    assert "They have 10,016 tools (servers: big (10,016))" in search["description"]
    # the tools found are appended, best first, and the list then stays as it is (a provider's cached prefix holds)
    found = tool_names(called)[len(offered) :]
    assert tool_names(called)[: len(offered)] == offered
    assert found == [FOUND, f"mcp__big__{generated_name(42)}", f"mcp__big__{generated_name(142)}"]
    assert called["tools"] == answered["tools"]
    schema = called["tools"][len(offered)]["function"]
    assert schema["parameters"]["required"] == ["resource"]
    results = [m["content"] for m in answered["messages"] if m["role"] == "tool"]
    assert results[0].startswith(f"Found 3 MCP tools, best first:\n- {FOUND}: Tag a cluster of the fixture cloud")
    assert results[1] == f"{WANTED} done for cl-7 in cn-hangzhou"
    # the search runs unasked (it reads); the server's tool is asked about like any other of its tools
    assert [r["params"]["toolCall"]["title"] for r in asked] == [f"{WANTED} (MCP server big)"]
    search_call = tool_updates(seen)[0]
    assert (search_call["title"], search_call["kind"]) == ("Search MCP tools: tag cluster 4242", "search")

    # a name the model knows without searching runs too, and leaves the list as it was
    guessed = generated_name(7)
    model.add(call(f"mcp__big__{guessed}", resource="vol-1"), {"text": "done"})
    response, _ = first.prompt(session_id, "again", allow())
    assert response["result"]["stopReason"] == "end_turn"
    assert [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"][-1] == (
        f"{guessed} done for vol-1 in cn-hangzhou"
    )
    assert model.requests[-1]["tools"] == answered["tools"]
    first.close()

    # a new process loads the session: what was found is offered again, in the same place
    second = spawn()
    load = second.start_request("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": [big]})
    response, _ = second.response(load)
    assert "result" in response, response
    wait_for_server(second, "big")
    model.add({"text": "still here"})
    second.prompt(session_id, "and now?")
    assert model.requests[-1]["tools"] == answered["tools"]


def test_a_few_mcp_tools_are_all_offered_without_a_search(agent, model, workspace):
    session_id, _ = open_session(agent, workspace, [acp_form(fixture_server())], ready=["fixture"])
    model.add({"text": "hello"})
    agent.prompt(session_id, "hi")
    offered = tool_names(model.requests[-1])
    assert "tool_search" not in offered
    assert "mcp__fixture__echo" in offered and "mcp__fixture__describe_region" in offered


def wait_for_server(agent: AgentProcess, server: str) -> None:
    """Until the agent announces the server's prompts (it is connected)."""
    while not any(name.startswith(f"mcp__{server}__") for name in announced(agent.next(READY_TIMEOUT))):
        pass
