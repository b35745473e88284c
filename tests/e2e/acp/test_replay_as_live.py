"""session/load in a new process shows every tool call exactly as it was shown live: the same `tool_call`
(title, kind, rawInput, locations) and the same final `tool_call_update` (status, content with its diff
or image, rawOutput, locations with lines), and the plan from the same data. Only the live `in_progress`
updates are not replayed."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.acp.wire import updates
from tests.e2e.mcp.servers import acp_form, fixture_server
from tests.e2e.mcp.through_agent import allow, call, open_session
from tests.e2e.sessions.flows import replayed

pytestmark = pytest.mark.timeout(180)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "iac"
PLAN = [{"content": "Write main.tf", "status": "in_progress"}, {"content": "Check it", "status": "pending"}]


def shown_calls(shown: list[dict[str, Any]]) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Each tool call's `tool_call` and its final `tool_call_update` (completed or failed), by id."""
    starts = {u["toolCallId"]: u for u in shown if u["sessionUpdate"] == "tool_call"}
    ends = {
        u["toolCallId"]: u
        for u in shown
        if u["sessionUpdate"] == "tool_call_update" and u.get("status") in ("completed", "failed")
    }
    assert set(starts) == set(ends)
    return {call_id: (starts[call_id], ends[call_id]) for call_id in starts}


def test_a_loaded_session_shows_each_tool_call_and_the_plan_as_they_were_shown_live(spawn, model, workspace):
    shutil.copytree(FIXTURES / "terraform" / "syntax_error", workspace / "network")
    server = acp_form(fixture_server())
    model.add(
        call("update_plan", entries=PLAN),
        call("write_file", path="main.tf", content='resource "aws_vpc" "main" {\n  cidr_block = "10.0.0.0/16"\n}\n'),
        call("edit_file", path="main.tf", old_string="10.0.0.0/16", new_string="10.1.0.0/16"),
        call("iac_check", path="network"),
        call("mcp__fixture__diagram"),
        call("read_file", path="missing.tf"),
        {"text": "Done."},
    )
    first = spawn()
    session_id, _ = open_session(first, workspace, [server], ready=["fixture"])
    response, seen = first.prompt(session_id, "build a VPC", allow())
    assert response["result"]["stopReason"] == "end_turn"
    live = shown_calls(updates(seen))
    (live_plan,) = updates(seen, "plan")
    first.close()

    second = spawn()  # a new process: only the store is shared
    load = second.start_request("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
    response, before = second.response(load)
    assert "result" in response, response
    shown = replayed(before, session_id)
    assert shown_calls(shown) == live
    assert [u for u in shown if u["sessionUpdate"] == "plan"] == [live_plan]

    # what the replay would have lost before: a diff, structured rawOutput, locations with lines, an image
    by_name = {start["rawInput"].get("path", start["title"]): end for start, end in live.values()}
    write, edit = [end for start, end in live.values() if start["kind"] == "edit"]
    assert write["content"][0]["type"] == "diff" and "oldText" not in write["content"][0]
    assert edit["content"][0] == {
        "type": "diff",
        "path": str(workspace / "main.tf"),
        "oldText": 'resource "aws_vpc" "main" {\n  cidr_block = "10.0.0.0/16"\n}\n',
        "newText": 'resource "aws_vpc" "main" {\n  cidr_block = "10.1.0.0/16"\n}\n',
    }
    check = by_name["network"]
    assert "findings" in check["rawOutput"]
    assert {"path": str(workspace / "network" / "main.tf"), "line": 8} in check["locations"]
    diagram = next(end for start, end in live.values() if start["title"].startswith("diagram"))
    assert diagram["content"][-1]["content"]["type"] == "image" and isinstance(diagram["rawOutput"], dict)
    assert by_name["missing.tf"]["status"] == "failed"
    plan_end = next(end for start, end in live.values() if start["rawInput"].get("entries"))
    assert plan_end["rawOutput"]["entries"][0] == {**PLAN[0], "priority": "medium"}
