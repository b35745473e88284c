"""MCP servers from session/new, through the real agent over stdio: tools offered to the model behind
permissions, results and images shown to the client, cancellation, prompts as slash commands, and a
server that crashes on start."""

from __future__ import annotations

import json
import time

import pytest
from tests.e2e.acp.wire import answer_text, updates
from tests.e2e.mcp.servers import acp_form, fixture_server, wait_for_event
from tests.e2e.mcp.through_agent import allow, announced, call, mcp_notes, open_session, tool_updates

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def fixture(tmp_path):
    events = tmp_path / "events"
    return acp_form(fixture_server(events=events)), events


def _tool_results(model) -> list[str]:
    return [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]


def test_the_model_gets_the_tools_and_only_tools_not_marked_read_only_ask(agent, model, workspace, fixture):
    session_id, _ = open_session(agent, workspace, [fixture[0]], ready=["fixture"])
    model.add(
        call("mcp__fixture__describe_region", region="cn-hangzhou"),
        call("mcp__fixture__echo", text="first"),
        call("mcp__fixture__echo", text="second"),
        {"text": "done"},
    )
    asked: list = []
    response, seen = agent.prompt(session_id, "go", allow("allow_always", asked))
    assert response["result"]["stopReason"] == "end_turn"
    offered = {tool["function"]["name"]: tool["function"] for tool in model.requests[0]["tools"]}
    assert offered["mcp__fixture__echo"]["description"] == "Echo the text back."
    assert offered["mcp__fixture__echo"]["parameters"]["required"] == ["text"]
    assert "read_file" in offered  # the built-in tools are still there
    # asked once, for echo; allow_always (per qualified name) answered its second call
    assert [r["params"]["toolCall"]["title"] for r in asked] == ["echo (MCP server fixture)"]
    assert _tool_results(model) == ["cn-hangzhou: 3 zones", "first", "second"]
    calls = tool_updates(seen)
    start = calls[0]
    assert (start["title"], start["kind"]) == ("Describe a region (MCP server fixture)", "read")
    assert start["rawInput"] == {"region": "cn-hangzhou"}
    (done,) = [u for u in calls if u["toolCallId"] == start["toolCallId"] and u.get("status") == "completed"]
    assert done["rawOutput"]["content"] == [{"type": "text", "text": "cn-hangzhou: 3 zones"}]
    assert done["content"] == [{"type": "content", "content": {"type": "text", "text": "cn-hangzhou: 3 zones"}}]


def test_an_image_reaches_the_client_and_an_error_fails_the_call(agent, model, workspace, fixture):
    session_id, _ = open_session(agent, workspace, [fixture[0]], ready=["fixture"])
    model.add(call("mcp__fixture__diagram"), call("mcp__fixture__fail"), {"text": "done"})
    response, seen = agent.prompt(session_id, "go", allow())
    assert response["result"]["stopReason"] == "end_turn"
    finals = [u for u in tool_updates(seen) if u.get("status") in ("completed", "failed")]
    diagram, failure = finals
    assert diagram["status"] == "completed"
    images = [block["content"] for block in diagram["content"] if block["content"]["type"] == "image"]
    assert len(images) == 1 and images[0]["mimeType"] == "image/png" and images[0]["data"]
    assert "[image: image/png" in _tool_results(model)[0]  # the model (text only) gets a marker
    assert "image_url" not in json.dumps(model.requests[-1])
    assert failure["status"] == "failed" and failure["rawOutput"]["isError"] is True
    assert "cannot do that: quota exceeded" in _tool_results(model)[1]


def test_session_cancel_cancels_the_running_mcp_request(agent, model, workspace, fixture):
    server, events = fixture
    session_id, _ = open_session(agent, workspace, [server], ready=["fixture"])
    model.add(call("mcp__fixture__slow", seconds=60), {"text": "after"})
    params = {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    prompt_id = agent.start_request("session/prompt", params)
    request, _ = agent.until(lambda m: m.get("method") == "session/request_permission")
    agent.answer(request, allow()(request))
    wait_for_event(events, "started slow", timeout=15)
    cancelled_at = time.monotonic()
    agent.notify("session/cancel", {"sessionId": session_id})
    response, _ = agent.response(prompt_id)
    assert response["result"]["stopReason"] == "cancelled"
    assert time.monotonic() - cancelled_at < 3
    wait_for_event(events, "cancelled slow")  # the server got notifications/cancelled and stopped the tool
    assert agent.prompt(session_id, "again")[0]["result"]["stopReason"] == "end_turn"


def test_prompts_are_slash_commands(agent, model, workspace, fixture):
    session_id, seen = open_session(agent, workspace, [fixture[0]], ready=["fixture"])
    (commands,) = [u for u in updates(seen, "available_commands_update") if "mcp__fixture__review" in announced(u)]
    review = next(c for c in commands["availableCommands"] if c["name"] == "mcp__fixture__review")
    assert review["input"] == {"hint": "<resource>"}
    assert review["description"] == "Review one Terraform resource. (MCP server fixture)"

    model.add({"text": "looks fine"})
    response, seen = agent.prompt(session_id, "/mcp__fixture__review aws_s3_bucket.logs")
    assert response["result"]["stopReason"] == "end_turn"
    user_text = model.requests[-1]["messages"][-1]["content"]
    assert "Review the Terraform resource aws_s3_bucket.logs for security issues." in json.dumps(user_text)

    asked = len(model.requests)
    response, seen = agent.prompt(session_id, "/mcp__fixture__review")  # its argument is required
    assert response["result"]["stopReason"] == "end_turn"
    assert answer_text(seen).startswith("[MCP] /mcp__fixture__review needs resource.")
    assert len(model.requests) == asked  # the model was not called


def test_help_lists_the_mcp_prompts_beside_the_built_in_commands(agent, workspace, fixture):
    session_id, _ = open_session(agent, workspace, [fixture[0]], ready=["fixture"])
    response, seen = agent.prompt(session_id, "/help")
    assert response["result"]["stopReason"] == "end_turn"
    text = answer_text(seen)
    assert "  /compact: " in text and "  /init: " in text
    assert "  /mcp__fixture__review: Review one Terraform resource. (MCP server fixture)" in text


def test_a_tool_added_at_run_time_is_offered_on_the_next_model_call_and_its_prompt_announced(
    agent, model, workspace, fixture
):
    session_id, _ = open_session(agent, workspace, [fixture[0]], ready=["fixture"])
    model.add(call("mcp__fixture__grow"), call("mcp__fixture__grown"), {"text": "done"})
    response, seen = agent.prompt(session_id, "grow", allow("allow_always"))
    assert response["result"]["stopReason"] == "end_turn"
    offered = [[tool["function"]["name"] for tool in request["tools"]] for request in model.requests]
    assert "mcp__fixture__grown" not in offered[0] and "mcp__fixture__grown" in offered[1]
    assert _tool_results(model) == ["grown", "I was added later."]
    commands = [announced(update) for update in updates(seen, "available_commands_update")]
    assert any("mcp__fixture__grown_prompt" in names for names in commands)


def test_a_server_that_crashes_on_start_is_reported_once_and_the_session_works(agent, model, workspace, fixture):
    crashing = acp_form(fixture_server("crashy", "--crash"))
    session_id, seen = open_session(agent, workspace, [crashing, fixture[0]], ready=["fixture"])
    model.add(call("mcp__fixture__describe_region", region="eu-central-1"), {"text": "done"})
    response, during = agent.prompt(session_id, "go")
    assert response["result"]["stopReason"] == "end_turn"
    assert _tool_results(model) == ["eu-central-1: 3 zones"]
    model.add({"text": "ok"})
    response, after = agent.prompt(session_id, "again")
    notes = mcp_notes(seen + during + after)
    assert len(notes) == 1 and "'crashy'" in notes[0] and "exited (code 3)" in notes[0]
    offered = [tool["function"]["name"] for tool in model.requests[-1]["tools"]]
    assert not any(name.startswith("mcp__crashy") for name in offered)
    log = "".join(agent.stderr_lines)  # the log has the reason and the end of the server's stderr
    assert "cannot read /etc/fixture.conf" in log


@pytest.mark.parametrize("mode", ["read-only", "plan"])
def test_read_only_and_plan_modes_refuse_the_tools_of_a_client_server_even_marked_read_only(
    agent, model, workspace, fixture, mode
):
    session_id, _ = open_session(agent, workspace, [fixture[0]], ready=["fixture"])
    agent.result("session/set_mode", {"sessionId": session_id, "modeId": mode})
    model.add(
        call("mcp__fixture__delete_bucket", bucket="logs"),
        call("mcp__fixture__describe_region", region="x"),
        {"text": "ok"},
    )
    response, seen = agent.prompt(session_id, "go")  # no permission request: refused outright
    assert response["result"]["stopReason"] == "end_turn"
    destructive, read_only = _tool_results(model)
    assert "deleted" not in destructive
    # a client's server is never trusted (tests/e2e/mcp/test_agent_trust.py has the whole table)
    assert read_only.startswith(f"Not run in {mode} mode") and "not trusted" in read_only
    kinds = {u["title"]: u["kind"] for u in tool_updates(seen) if u["sessionUpdate"] == "tool_call"}
    assert kinds["delete_bucket (MCP server fixture)"] == "delete"


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_http_and_sse_servers_from_session_new(agent, model, workspace, request, transport):
    url = request.getfixturevalue(f"{transport}_url")
    server = {"type": transport, "name": f"remote-{transport}", "url": url, "headers": []}
    session_id, _ = open_session(agent, workspace, [server], ready=[f"remote-{transport}"])
    model.add(call(f"mcp__remote-{transport}__describe_region", region="us-east-1"), {"text": "done"})
    response, _ = agent.prompt(session_id, "go")
    assert response["result"]["stopReason"] == "end_turn"
    assert _tool_results(model) == ["us-east-1: 3 zones"]
