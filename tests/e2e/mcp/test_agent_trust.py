"""MCP tools through the real agent over ACP, in every mode, from a server the user trusts in config.json
and from one it does not: what runs unasked, what is asked (and with which options and title), what is
refused; an "always" answer where it holds; and a client's server that takes a trusted server's name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.e2e.acp.wire import AgentProcess, Agents, Message
from tests.e2e.mcp.servers import REPO
from tests.e2e.mcp.through_agent import allow, call, open_session
from tests.e2e.mcp.trust_table import MODES, TABLE, ran, server_entry, tool_name, write_config

pytestmark = pytest.mark.timeout(240)

EVERY_OPTION = ["allow_once", "allow_always", "reject_once", "reject_always"]
ONCE_OPTIONS = ["allow_once", "reject_once"]


@pytest.fixture(scope="module")
def calls(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("calls") / "calls"


@pytest.fixture(scope="module")
def trust_agent(model, tmp_path_factory, calls) -> Iterator[AgentProcess]:
    """An agent whose config.json holds the trusted and the untrusted annotated server."""
    config = tmp_path_factory.mktemp("config")
    write_config(config, calls)
    agents = Agents(model.url, config)
    yield agents.start()
    agents.close_all()


def _asked(requests: list[Message]) -> list[tuple[str, list[str], bool]]:
    """Each permission request as (title, option kinds, rawInput.infrastructureChange)."""
    shown = []
    for request in requests:
        params = request["params"]
        raw_input = params["toolCall"].get("rawInput") or {}
        kinds = [option["kind"] for option in params["options"]]
        shown.append((params["toolCall"]["title"], kinds, raw_input.get("infrastructureChange", False)))
    return shown


def _expected_ask(server: str, tool: str, cell: str) -> tuple[str, list[str], bool]:
    title = f"{tool} (MCP server {server})"
    if cell == "ask*":
        return "Infrastructure change: " + title, ONCE_OPTIONS, True
    return title, EVERY_OPTION, False


def _tool_results(model, count: int) -> list[str]:
    return [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"][-count:]


def test_each_mode_runs_asks_or_refuses_each_kind_of_mcp_tool(trust_agent, model, workspace, calls):
    session_id, _ = open_session(trust_agent, workspace, [], ready=["trusted", "untrusted"])
    rows = list(TABLE)
    for column, mode in enumerate(MODES):
        trust_agent.result("session/set_mode", {"sessionId": session_id, "modeId": mode})
        model.add(*(call(tool_name(server, tool)) for server, tool in rows), {"text": "done"})
        asked: list[Message] = []
        response, _ = trust_agent.prompt(session_id, f"every tool in {mode}", allow("allow_once", asked))
        assert response["result"]["stopReason"] == "end_turn"
        cells = {row: TABLE[row][column] for row in rows}
        expected_asks = [_expected_ask(*row, cell) for row, cell in cells.items() if cell.startswith("ask")]
        assert _asked(asked) == expected_asks, mode
        assert ran(calls) == [row for row, cell in cells.items() if cell != "refuse"], mode
        for (server, tool), result in zip(rows, _tool_results(model, len(rows)), strict=True):
            cell = cells[(server, tool)]
            if cell != "refuse":
                assert result == f"{server} {tool} ran", (mode, server, tool)
            elif (server, tool) == ("untrusted", "read_state"):
                assert f"Not run in {mode} mode" in result and "server is not trusted" in result
                assert '"trusted": true in config.json' in result
            elif tool == "annotate":
                assert f"Not run in {mode} mode" in result and "outside the workspace" in result, result
            else:  # an infrastructure change, refused as a command's would be
                assert ("plan mode" if mode == "plan" else "Permission denied.") in result, result


def _answer_always_when_offered(asked: list[Message]):
    def answer(request: Message):
        asked.append(request)
        kinds = [option["kind"] for option in request["params"]["options"]]
        option = "allow_always" if "allow_always" in kinds else "allow_once"
        return {"outcome": {"outcome": "selected", "optionId": option}}

    return answer


def test_allowed_always_an_untrusted_tool_runs_unasked_in_bypass_but_an_infrastructure_change_never(
    trust_agent, model, workspace, calls
):
    session_id, _ = open_session(trust_agent, workspace, [], ready=["untrusted"])
    trust_agent.result("session/set_mode", {"sessionId": session_id, "modeId": "bypass-permissions"})
    tools = ["read_state", "annotate", "terraform_apply"]
    model.add(*(call(tool_name("untrusted", tool)) for tool in tools for _ in range(2)), {"text": "done"})
    asked: list[Message] = []
    response, _ = trust_agent.prompt(session_id, "twice each", _answer_always_when_offered(asked))
    assert response["result"]["stopReason"] == "end_turn"
    assert [title for title, _, _ in _asked(asked)] == [
        "read_state (MCP server untrusted)",
        "annotate (MCP server untrusted)",
        "Infrastructure change: terraform_apply (MCP server untrusted)",
        "Infrastructure change: terraform_apply (MCP server untrusted)",
    ]
    assert ran(calls) == [("untrusted", tool) for tool in tools for _ in range(2)]


def test_a_client_server_named_like_a_trusted_one_replaces_it_untrusted(trust_agent, model, workspace, calls):
    entry = server_entry("trusted", calls)
    client = {
        "name": "trusted",
        "command": entry["command"],
        "args": entry["args"],
        "env": [{"name": "PYTHONPATH", "value": str(REPO)}, {"name": "ANNOTATED_CALLS", "value": str(calls)}],
    }
    session_id, _ = open_session(trust_agent, workspace, [client], ready=["trusted", "untrusted"])
    trust_agent.result("session/set_mode", {"sessionId": session_id, "modeId": "read-only"})
    model.add(call(tool_name("trusted", "read_state")), call(tool_name("untrusted", "read_state")), {"text": "done"})
    response, _ = trust_agent.prompt(session_id, "read")
    assert response["result"]["stopReason"] == "end_turn"
    assert ran(calls) == []
    assert all("server is not trusted" in result for result in _tool_results(model, 2))
