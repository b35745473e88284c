"""agent: hand a self-contained task to a sub-agent and get its final answer back.

The loop provides `ctx.run_subagent`; it leaves it unset inside a sub-agent, so delegation stops
at one level.
"""

from __future__ import annotations

from typing import Any

from iac_code.tools.base import Access, Category, Kind, ToolContext, ToolError, ToolResult, required_text
from iac_code.tools.workspace import shorten


class AgentTool:
    name = "agent"
    description = (
        "Delegate a self-contained task (e.g. 'find every module that creates a VPC and summarise their "
        "inputs') to a sub-agent with its own context and the same tools. It cannot see this conversation: "
        "put everything it needs in `prompt`. Returns the sub-agent's final answer."
    )
    parameters = {
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": "A short (3-6 word) label for the task."},
            "prompt": {"type": "string", "description": "The complete task for the sub-agent."},
        },
        "required": ["description", "prompt"],
    }
    category: Category = "execute"
    kind: Kind = "execute"

    def access(self, args: dict[str, Any]) -> Access:
        return "execute"

    def title(self, args: dict[str, Any]) -> str:
        label = str(args.get("description") or "").strip()
        return f"Agent: {shorten(label)}" if label else "Agent"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return []

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        prompt = required_text(args, "prompt", blank_ok=False)
        if ctx.run_subagent is None:
            raise ToolError("sub-agents cannot start sub-agents")
        answer = await ctx.run_subagent(prompt)
        return ToolResult(str(answer) if answer else "(the sub-agent returned no answer)")
