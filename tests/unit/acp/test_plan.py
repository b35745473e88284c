"""Plans as ACP `plan` updates: after a finished update_plan call, and the last one of a stored history."""

from acp.schema import AgentPlanUpdate, PlanEntry

from iac_code.acp.plan import last_plan_update, plan_update, result_plan_update
from iac_code.messages import Message, ToolCall, tool_result, user
from iac_code.tools.base import ToolResult

FIRST = [{"content": "Write main.tf", "status": "in_progress", "priority": "high"}]
SECOND = [
    {"content": "Write main.tf", "status": "completed", "priority": "high"},
    {"content": "Validate", "status": "in_progress", "priority": "medium"},
]


def plan_call(call_id: str, entries: list) -> ToolCall:
    return ToolCall(call_id, "update_plan", {"entries": entries})


def test_the_update_carries_the_whole_list_in_the_official_shape():
    update = plan_update(SECOND)
    assert isinstance(update, AgentPlanUpdate)
    assert update.model_dump(mode="json", by_alias=True, exclude_none=True) == {
        "sessionUpdate": "plan",
        "entries": SECOND,
    }


def test_only_a_successful_update_plan_result_makes_an_update():
    call = plan_call("c1", FIRST)
    ok = ToolResult("Plan updated", raw_output={"entries": FIRST}).record(call)
    assert result_plan_update("update_plan", ok) == plan_update(FIRST)
    assert result_plan_update("update_plan", ToolResult("bad", is_error=True).record(call)) is None
    assert result_plan_update("read_file", ToolResult("text", raw_output={"entries": FIRST}).record(call)) is None
    assert result_plan_update("update_plan", tool_result(call, "Plan updated")) is None, "stored before results kept it"


def test_a_replayed_plan_is_the_one_the_result_recorded_not_the_arguments_read_again():
    """Live and replay show the same data: the validated entries the tool returned."""
    call = plan_call("c1", [{"content": "  Write main.tf  ", "status": "in_progress"}])
    recorded = ToolResult("Plan updated", raw_output={"entries": FIRST}).record(call)
    history = [user("go"), Message(role="assistant", tool_calls=[call]), recorded]
    assert last_plan_update(history) == result_plan_update("update_plan", recorded) == plan_update(FIRST)
    stored = Message.from_dict(recorded.to_dict())
    assert last_plan_update([*history[:2], stored]) == plan_update(FIRST)


def test_the_last_successful_plan_of_a_history_is_replayed():
    first, second, rejected = plan_call("c1", FIRST), plan_call("c2", SECOND), plan_call("c3", [{"content": "?"}])
    history = [
        user("Build a VPC"),
        Message(role="assistant", tool_calls=[first]),
        tool_result(first, "Plan updated"),
        Message(role="assistant", tool_calls=[second]),
        tool_result(second, "Plan updated"),
        Message(role="assistant", tool_calls=[rejected]),
        tool_result(rejected, "entries[0].status must be one of ...", is_error=True),
        Message(role="assistant", text="Done."),
    ]
    assert last_plan_update(history) == AgentPlanUpdate(
        session_update="plan",
        entries=[PlanEntry(**SECOND[0]), PlanEntry(**SECOND[1])],
    )


def test_no_plan_without_a_successful_call():
    call = plan_call("c1", FIRST)
    assert last_plan_update([user("hi"), Message(role="assistant", text="Hello")]) is None
    assert last_plan_update([user("hi"), Message(role="assistant", tool_calls=[call])]) is None, "never answered"
