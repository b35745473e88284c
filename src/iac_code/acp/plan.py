"""The model's plan (update_plan) as ACP `plan` session updates: live after each call, and on load.

A `plan` update always carries the whole list; the client replaces what it showed.
"""

from __future__ import annotations

from collections.abc import Sequence

from acp.schema import AgentPlanUpdate, PlanEntry

from iac_code.messages import Message
from iac_code.tools.base import ToolError
from iac_code.tools.update_plan import TOOL_NAME, PlanItem, parse_plan


def plan_update(entries: Sequence[PlanItem]) -> AgentPlanUpdate:
    return AgentPlanUpdate(
        session_update="plan",
        entries=[PlanEntry(content=e["content"], status=e["status"], priority=e["priority"]) for e in entries],
    )


def result_plan_update(tool_name: str, result: Message) -> AgentPlanUpdate | None:
    """The update to send after a finished call (its result message): a plan for a successful
    update_plan, else None. The plan is the one the tool returned (`shown.raw_output`), live and on
    replay; a result stored before that was kept has none."""
    if tool_name != TOOL_NAME or result.is_error or result.shown is None:
        return None
    raw = result.shown.raw_output
    if not isinstance(raw, dict) or not isinstance(raw.get("entries"), list):
        return None
    try:
        return plan_update(parse_plan(raw))
    except ToolError:  # a stored record the rules no longer accept
        return None


def last_plan_update(history: Sequence[Message]) -> AgentPlanUpdate | None:
    """The plan as it stood at the end of a stored history (its last update_plan call that succeeded):
    the one its result recorded, or, for a result stored before results kept it, the call's arguments
    read again; None when the conversation never made one."""
    calls = {call.id: call for message in history for call in message.tool_calls if call.name == TOOL_NAME}
    for message in reversed(history):
        if message.role != "tool" or message.tool_name != TOOL_NAME or message.is_error:
            continue
        if message.shown is not None:
            if (update := result_plan_update(TOOL_NAME, message)) is not None:
                return update
        elif (call := calls.get(message.tool_call_id)) is not None:
            try:
                return plan_update(parse_plan(call.arguments))
            except ToolError:  # the rules tightened since it was stored: an older plan is still shown
                continue
    return None
