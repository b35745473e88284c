"""How a tool call is shown (title, kind, paths), computed one way for live turns, permission requests
and replays."""

from __future__ import annotations

from dataclasses import dataclass

from iac_code.messages import ToolCall
from iac_code.tools.base import Kind, Tool, ToolContext


@dataclass(frozen=True)
class CallView:
    title: str
    kind: Kind
    locations: list[str]  # absolute paths the call touches


def describe_call(call: ToolCall, tool: Tool | None, ctx: ToolContext) -> CallView:
    """Never raises: a call's arguments may not make sense (a path outside the workspace, a stored call
    whose tool changed since); it is still shown, under its tool's name, and fails when it runs."""
    if tool is None:
        return CallView(call.name, "other", [])
    try:
        title = tool.title(call.arguments)
    except Exception:
        title = call.name
    try:
        locations = tool.locations(call.arguments, ctx)
    except Exception:
        locations = []
    return CallView(title, tool.kind, locations)
