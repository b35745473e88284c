from pathlib import Path

from iac_code.acp.presenter import tool_call_result
from iac_code.acp.replay import COMPACTED, replay_updates
from iac_code.messages import Diff, Image, Location, Message, ToolCall, message_ids, thought_id, tool_result, user
from iac_code.tools.base import ToolResult
from iac_code.tools.registry import default_tools


def _dump(updates) -> list[dict]:
    return [u.model_dump(mode="json", by_alias=True, exclude_none=True) for u in updates]


def test_each_message_becomes_what_the_client_saw_live(tmp_path: Path):
    read = ToolCall(id="c1", name="read_file", arguments={"path": "main.tf"})
    gone = ToolCall(id="c2", name="retired_tool", arguments={"x": 1})
    history = [
        user("What is in main.tf?"),
        Message(role="assistant", text="Let me look.", thinking="Read it first.", tool_calls=[read, gone]),
        tool_result(read, "a VPC"),
        tool_result(gone, "Unknown tool: retired_tool", is_error=True),
        Message(role="assistant", text="A VPC."),
    ]
    asked, looked, *_, answered = message_ids("s1", history)  # stored before ids were: derived from the position
    assert _dump(replay_updates("s1", history, default_tools(), tmp_path)) == [
        {
            "sessionUpdate": "user_message_chunk",
            "content": {"type": "text", "text": "What is in main.tf?"},
            "messageId": asked,
        },
        {
            "sessionUpdate": "agent_thought_chunk",
            "content": {"type": "text", "text": "Read it first."},
            "messageId": thought_id(looked),
        },
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "Let me look."},
            "messageId": looked,
        },
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "c1",
            "title": default_tools()["read_file"].title(read.arguments),
            "name": "read_file",
            "kind": "read",
            "status": "pending",
            "rawInput": {"path": "main.tf"},
            "locations": [{"path": str(tmp_path / "main.tf")}],
        },
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "c2",
            "title": "retired_tool",
            "name": "retired_tool",
            "kind": "other",
            "status": "pending",
            "rawInput": {"x": 1},
        },
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "status": "completed",
            "rawOutput": "a VPC",
            "content": [{"type": "content", "content": {"type": "text", "text": "a VPC"}}],
        },
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c2",
            "status": "failed",
            "rawOutput": "Unknown tool: retired_tool",
            "content": [{"type": "content", "content": {"type": "text", "text": "Unknown tool: retired_tool"}}],
        },
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "A VPC."}, "messageId": answered},
    ]


def test_a_compaction_summary_is_not_shown_as_the_users_words(tmp_path: Path):
    summary = Message(role="user", text="[Conversation summary]\nsecret details", summary=True, kept=0)
    (update,) = _dump(replay_updates("s1", [summary], default_tools(), tmp_path))
    assert update == {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": COMPACTED},
        "messageId": message_ids("s1", [summary])[0],
    }


def test_arguments_a_tool_cannot_read_still_replay(tmp_path: Path):
    odd = ToolCall(id="c1", name="read_file", arguments={"path": 42})
    (update,) = _dump(replay_updates("s1", [Message(role="assistant", tool_calls=[odd])], default_tools(), tmp_path))
    assert update["toolCallId"] == "c1" and update["rawInput"] == {"path": 42}


def test_an_empty_history_replays_nothing(tmp_path: Path):
    assert list(replay_updates("s1", [], default_tools(), tmp_path)) == []


def test_a_prompt_with_an_image_replays_as_its_text_then_the_image(tmp_path: Path):
    prompt = Message(role="user", id="m1", text="Why did this fail?", images=[Image("image/png", "iVBORw0KGgo=")])
    assert _dump(replay_updates("s1", [prompt], default_tools(), tmp_path)) == [
        {
            "sessionUpdate": "user_message_chunk",
            "content": {"type": "text", "text": "Why did this fail?"},
            "messageId": "m1",
        },
        {
            "sessionUpdate": "user_message_chunk",
            "content": {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
            "messageId": "m1",
        },
    ]


def test_the_plan_as_it_stood_at_the_end_comes_last(tmp_path: Path):
    entries = [{"content": "Write main.tf", "status": "completed"}, {"content": "Validate", "status": "in_progress"}]
    plan = ToolCall(id="c1", name="update_plan", arguments={"entries": entries})
    history = [
        user("go"),
        Message(role="assistant", tool_calls=[plan]),
        tool_result(plan, "Plan updated"),
        Message(role="assistant", text="ok"),
    ]
    updates = _dump(replay_updates("s1", history, default_tools(), tmp_path))
    assert updates[-1] == {
        "sessionUpdate": "plan",
        "entries": [
            {"content": "Write main.tf", "status": "completed", "priority": "medium"},
            {"content": "Validate", "status": "in_progress", "priority": "medium"},
        ],
    }
    assert updates[-2]["sessionUpdate"] == "agent_message_chunk"


def test_an_mcp_call_replays_with_its_stored_title_and_kind_or_ones_made_from_its_name(tmp_path: Path):
    """Replays run as the session opens, before its MCP servers are connected: the tool is unknown."""
    titled = ToolCall(id="c1", name="mcp__fixture__describe_region", arguments={"region": "x"})
    older = ToolCall(id="c2", name="mcp__fixture__echo", arguments={"text": "hi"})  # stored before titles were
    diagram = ToolCall(id="c3", name="mcp__fixture__diagram", arguments={})
    png = Image("image/png", "iVBORw0KGgo=")
    history = [
        Message(role="assistant", tool_calls=[titled, older, diagram]),
        tool_result(titled, "x: 3 zones", title="Describe a region (MCP server fixture)", kind="read"),
        tool_result(older, "hi"),
        tool_result(diagram, "", images=[png], title="diagram (MCP server fixture)", kind="not-a-kind"),
    ]
    updates = _dump(replay_updates("s1", history, default_tools(), tmp_path))
    assert [(u["title"], u["kind"]) for u in updates if u["sessionUpdate"] == "tool_call"] == [
        ("Describe a region (MCP server fixture)", "read"),
        ("echo (MCP server fixture)", "other"),
        ("diagram (MCP server fixture)", "other"),
    ]
    assert updates[-1]["content"] == [  # an image alone: no empty text block before it
        {"type": "content", "content": {"type": "image", "mimeType": "image/png", "data": png.data}}
    ]


def test_a_stored_title_is_what_the_client_saw_even_for_a_built_in_tool(tmp_path: Path):
    read = ToolCall(id="c1", name="read_file", arguments={"path": "main.tf"})
    history = [Message(role="assistant", tool_calls=[read]), tool_result(read, "a VPC", title="Read main.tf (live)")]
    start = _dump(replay_updates("s1", history, default_tools(), tmp_path))[0]
    assert (start["title"], start["kind"]) == ("Read main.tf (live)", "read")


def test_a_stored_record_replays_as_it_was_shown_live_except_a_terminal_which_is_gone(tmp_path: Path):
    edit = ToolCall(id="c1", name="edit_file", arguments={"path": "main.tf", "old_string": "a", "new_string": "b"})
    bash = ToolCall(id="c2", name="bash", arguments={"command": "terraform validate"})
    diff = Diff(str(tmp_path / "main.tf"), "a\n", "b\n")
    edited = ToolResult("Edited main.tf", diff=diff, locations=[Location(diff.path, 1)]).record(edit, title="Edit")
    ran = ToolResult("Success!\nExit code: 0", terminal_id="term-1").record(bash, title="Validate", kind="execute")
    stored = [Message.from_dict(m.to_dict()) for m in (Message(role="assistant", tool_calls=[edit, bash]), edited, ran)]
    updates = _dump(replay_updates("s1", stored, default_tools(), tmp_path))
    assert updates[2] == _dump([tool_call_result("c1", edited)])[0]
    live = _dump([tool_call_result("c2", ran)])[0]
    assert live["content"] == [{"type": "terminal", "terminalId": "term-1"}]
    assert updates[3] == {**live, "content": [{"type": "content", "content": {"type": "text", "text": ran.text}}]}
