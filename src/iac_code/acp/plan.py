"""The model's plan (update_plan) as ACP `plan` session updates: live after each call, and on load.

A `plan` update always carries the whole list; the client replaces what it showed.
"""

from __future__ import annotations

from collections.abc import Sequence

from acp.schema import AgentPlanUpdate, PlanEntry

from iac_code.messages import Message
from iac_code.tools.base import ToolError, ToolResult
from iac_code.tools.plan import TOOL_NAME, PlanItem, parse_plan


def plan_update(entries: Sequence[PlanItem]) -> AgentPlanUpdate:
    return AgentPlanUpdate(
        session_update="plan",
        entries=[PlanEntry(content=e["content"], status=e["status"], priority=e["priority"]) for e in entries],
    )


def result_plan_update(tool_name: str, result: ToolResult) -> AgentPlanUpdate | None:
    """The update to send after a finished call: a plan for a successful update_plan, else None."""
    if tool_name != TOOL_NAME or result.is_error or not isinstance(result.raw_output, dict):
        return None
    return plan_update(result.raw_output["entries"])


def last_plan_update(history: Sequence[Message]) -> AgentPlanUpdate | None:
    """The plan as it stood at the end of a stored history (its last update_plan call that succeeded),
    read back from that call's arguments; None when the conversation never made one."""
    succeeded = {m.tool_call_id for m in history if m.role == "tool" and m.tool_name == TOOL_NAME and not m.is_error}
    for message in reversed(history):
        for call in reversed(message.tool_calls):
            if call.name == TOOL_NAME and call.id in succeeded:
                try:
                    return plan_update(parse_plan(call.arguments))
                except ToolError:  # the rules tightened since it was stored: an older plan is still shown
                    continue
    return None
