"""One presenter for live tool calls, permission requests and replay: the wire form, field by field."""

import asyncio
from dataclasses import replace

from iac_code.acp.presenter import (
    permission_request,
    tool_call_progress,
    tool_call_result,
    tool_call_running,
    tool_call_start,
)
from iac_code.acp.replay import replay_updates
from iac_code.agent.events import PermissionRequest, Step, SubagentSteps
from iac_code.agent.policy import EVERY_OPTION, ONCE_OPTIONS
from iac_code.messages import Audio, Image, Message, Resource, ToolCall
from iac_code.tools.base import AccessDetails, Diff, Location, Terminal, ToolContext, ToolResult
from iac_code.tools.describe import CallView, describe_call
from iac_code.tools.registry import default_tools

DUMP = {"mode": "json", "by_alias": True, "exclude_none": True}
CALL = ToolCall("c1", "write_file", {"path": "main.tf", "content": "x"})


def wire(model) -> dict:
    return model.model_dump(**DUMP)


def test_tool_call_start():
    update = tool_call_start(CALL, CallView("Write main.tf", "edit", ["/w/main.tf"]))
    assert wire(update) == {
        "sessionUpdate": "tool_call",
        "toolCallId": "c1",
        "title": "Write main.tf",
        "name": CALL.name,
        "kind": "edit",
        "status": "pending",
        "rawInput": {"path": "main.tf", "content": "x"},
        "locations": [{"path": "/w/main.tf"}],
    }
    assert "locations" not in wire(tool_call_start(CALL, CallView("t", "edit", [])))


def test_running():
    assert wire(tool_call_running("c1")) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "in_progress",
    }


def result(text: str, **fields) -> Message:
    return ToolResult(text, **fields).record(CALL)


def test_text_result():
    assert wire(tool_call_result("c1", result("ok"))) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "completed",
        "rawOutput": "ok",
        "content": [{"type": "content", "content": {"type": "text", "text": "ok"}}],
    }
    assert wire(tool_call_result("c1", result("bad", is_error=True)))["status"] == "failed"


def test_edit_result_is_a_diff_unless_it_failed():
    diff = Diff("/w/main.tf", None, "x")
    assert wire(tool_call_result("c1", result("Created", diff=diff)))["content"] == [
        {"type": "diff", "path": "/w/main.tf", "newText": "x"}
    ]
    failed = result("Created", diff=diff, is_error=True)
    assert wire(tool_call_result("c1", failed))["content"][0]["type"] == "content"


def test_raw_output_locations_and_extra_content():
    findings = [{"rule": "R1", "file": "/w/main.tf", "line": 3}]
    link = {"type": "resource_link", "uri": "file:///w/state", "name": "state", "mimeType": "application/json"}
    embedded = {"type": "resource", "resource": {"uri": "file:///w/a.tf", "mimeType": "text/plain", "text": "x"}}
    record = result(
        "1 finding",
        raw_output={"findings": findings},
        locations=[Location("/w/main.tf", 3), Location("/w/vars.tf")],
        content=[Image("image/png", "AAAA"), Audio("audio/wav", "BBBB"), Resource(link), Resource(embedded)],
    )
    update = wire(tool_call_result("c1", record))
    assert update["rawOutput"] == {"findings": findings}
    assert update["locations"] == [{"path": "/w/main.tf", "line": 3}, {"path": "/w/vars.tf"}]
    assert update["content"] == [
        {"type": "content", "content": {"type": "text", "text": "1 finding"}},
        {"type": "content", "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"}},
        {"type": "content", "content": {"type": "audio", "data": "BBBB", "mimeType": "audio/wav"}},
        {"type": "content", "content": link},
        {"type": "content", "content": embedded},
    ]


def test_a_call_that_ran_in_a_client_terminal_shows_the_terminal_live_and_its_text_on_replay():
    record = result("Success!\nExit code: 0", terminal_id="term-1")
    live = wire(tool_call_result("c1", record))
    assert live["content"] == [{"type": "terminal", "terminalId": "term-1"}]
    assert live["rawOutput"] == "Success!\nExit code: 0", "the text stays in rawOutput"
    replayed = wire(tool_call_result("c1", record, live=False))  # the terminal is gone
    assert replayed == {**live, "content": [{"type": "content", "content": {"type": "text", "text": record.text}}]}


def test_a_result_stored_before_shown_was_kept_shows_its_text_and_images():
    png = Image("image/png", "iVBORw0KGgo=")
    older = Message(role="tool", text="a pixel", tool_call_id="c1", tool_name="x", images=[png])
    assert wire(tool_call_result("c1", older, live=False))["content"] == [
        {"type": "content", "content": {"type": "text", "text": "a pixel"}},
        {"type": "content", "content": {"type": "image", "data": png.data, "mimeType": "image/png"}},
    ]


def test_progress_replaces_the_content_and_leaves_the_status_alone():
    steps = SubagentSteps((Step("Read a.tf", "completed"), Step("Read b.tf", "in_progress")))
    assert wire(tool_call_progress("c1", steps)) == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "content": [{"type": "content", "content": {"type": "text", "text": "✓ Read a.tf\n… Read b.tf"}}],
    }
    assert wire(tool_call_progress("c1", Terminal("term-1")))["content"] == [
        {"type": "terminal", "terminalId": "term-1"}
    ]


def _request(options, infrastructure_change):
    answer = asyncio.get_running_loop().create_future()
    call = ToolCall("c2", "bash", {"command": "terraform apply"})
    return PermissionRequest(
        call, "Run terraform apply", "execute", [], options, infrastructure_change, answer, call.name
    )


async def test_permission_request():
    request = wire(permission_request("s1", _request(EVERY_OPTION, False)))
    assert request["sessionId"] == "s1"
    assert request["toolCall"] == {
        "toolCallId": "c2",
        "title": "Run terraform apply",
        "kind": "execute",
        "status": "pending",
        "rawInput": {"command": "terraform apply"},
    }
    assert [o["optionId"] for o in request["options"]] == list(EVERY_OPTION)


async def test_an_infrastructure_change_says_so_and_offers_no_always():
    request = wire(permission_request("s1", _request(ONCE_OPTIONS, True)))
    assert request["toolCall"]["title"] == "Infrastructure change: Run terraform apply"
    assert request["toolCall"]["rawInput"] == {"command": "terraform apply", "infrastructureChange": True}
    assert [o["kind"] for o in request["options"]] == ["allow_once", "reject_once"]


async def test_a_reviewed_plan_is_in_raw_input_and_its_summary_is_the_content():
    plan = {"tool": "terraform", "counts": {"create": 1}, "resources": []}
    request = replace(_request(ONCE_OPTIONS, True), details=AccessDetails("terraform plan in /w: 1 to add", plan))
    call = wire(permission_request("s1", request))["toolCall"]
    assert call["rawInput"] == {"command": "terraform apply", "infrastructureChange": True, "plan": plan}
    assert call["content"] == [
        {"type": "content", "content": {"type": "text", "text": "terraform plan in /w: 1 to add"}}
    ]
    note = replace(request, details=AccessDetails("Not bound to a reviewed plan: …"))
    assert "plan" not in wire(permission_request("s1", note))["toolCall"]["rawInput"]


def test_replay_shows_a_call_as_live(tmp_path):
    call = ToolCall("c1", "write_file", {"path": "main.tf", "content": "x"})
    history = [
        Message(role="user", text="write"),
        Message(role="assistant", text="", tool_calls=[call]),
        Message(role="tool", text="Created main.tf", tool_call_id="c1", tool_name="write_file"),
    ]
    updates = [wire(u) for u in replay_updates("s1", history, default_tools(), tmp_path)]
    tools = default_tools()
    live_start = wire(tool_call_start(call, describe_call(call, tools["write_file"], ToolContext(tmp_path))))
    assert updates[1] == live_start
    assert updates[2] == wire(tool_call_result("c1", result("Created main.tf")))
