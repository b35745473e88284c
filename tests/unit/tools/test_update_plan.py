"""update_plan: validates the whole plan and hands it back for the client's `plan` update."""

import pytest

from iac_code.tools.base import ToolContext, ToolError
from iac_code.tools.update_plan import MAX_ENTRIES, UpdatePlanTool

PLAN = [
    {"content": "Read the existing VPC module", "status": "completed", "priority": "high"},
    {"content": "Add the NAT gateway", "status": "in_progress", "priority": "high"},
    {"content": "Run terraform validate", "status": "pending"},
]


async def test_the_plan_comes_back_checked_with_default_priorities(ctx: ToolContext) -> None:
    result = await UpdatePlanTool().run({"entries": PLAN}, ctx)
    assert not result.is_error
    assert result.text == "Plan updated: 1 of 3 steps completed. In progress: Add the NAT gateway"
    assert result.raw_output == {"entries": [*PLAN[:2], {**PLAN[2], "priority": "medium"}]}


def test_it_runs_without_asking_and_touches_nothing() -> None:
    tool = UpdatePlanTool()
    assert (tool.category, tool.access({"entries": PLAN}), tool.kind) == ("read", "read", "think")
    assert tool.title({}) == "Update plan"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "'entries' must be a list"),
        ({"entries": "step one"}, "'entries' must be a list"),
        ({"entries": ["step one"]}, r"entries\[0\] must be an object"),
        ({"entries": [{"content": " ", "status": "pending"}]}, r"entries\[0\].content must be a non-empty"),
        ({"entries": [{"content": "x", "status": "done"}]}, r"entries\[0\].status must be one of pending"),
        ({"entries": [{"content": "x", "status": "pending", "priority": "urgent"}]}, "priority must be one of"),
        ({"entries": [{"content": "x" * 501, "status": "pending"}]}, "over 500 characters"),
        ({"entries": [{"content": "x", "status": "pending"}] * (MAX_ENTRIES + 1)}, "at most 50 entries"),
    ],
)
async def test_bad_plans_are_errors_the_model_can_fix(ctx: ToolContext, args, message) -> None:
    with pytest.raises(ToolError, match=message):
        await UpdatePlanTool().run(args, ctx)


async def test_an_empty_plan_clears_it(ctx: ToolContext) -> None:
    result = await UpdatePlanTool().run({"entries": []}, ctx)
    assert result.raw_output == {"entries": []}
