import pytest

from iac_code.tools.base import ToolContext, ToolError
from iac_code.tools.subagent import AgentTool


async def test_returns_the_sub_agents_answer(ctx: ToolContext) -> None:
    prompts: list[str] = []

    async def run_subagent(prompt: str) -> str:
        prompts.append(prompt)
        return "Found 3 VPC modules."

    ctx.run_subagent = run_subagent
    result = await AgentTool().run({"description": "Find VPCs", "prompt": "List VPC modules"}, ctx)
    assert result.text == "Found 3 VPC modules." and not result.is_error
    assert prompts == ["List VPC modules"]


async def test_refused_inside_a_sub_agent(ctx: ToolContext) -> None:
    assert ctx.run_subagent is None
    with pytest.raises(ToolError, match="sub-agents cannot start sub-agents"):
        await AgentTool().run({"description": "x", "prompt": "y"}, ctx)


async def test_empty_prompt_is_refused(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="prompt"):
        await AgentTool().run({"description": "x", "prompt": " "}, ctx)


def test_title() -> None:
    assert AgentTool().title({"description": "Survey modules"}) == "Agent: Survey modules"
