"""update_plan: the model keeps a visible plan (ACP plan entries) for multi-step work.

Each call replaces the whole plan. The tool changes nothing outside the conversation, so it runs
without asking; its result carries the validated entries (`raw_output["entries"]`) for the client's
`plan` update, live and on replay (the result's record keeps them); a session stored before results
kept it has its plan read back from the call's arguments.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from iac_code.tools.base import Access, Category, Kind, ToolContext, ToolError, ToolResult

TOOL_NAME = "update_plan"
STATUSES = ("pending", "in_progress", "completed")
PRIORITIES = ("high", "medium", "low")
MAX_ENTRIES = 50
MAX_CONTENT_CHARS = 500

Status = Literal["pending", "in_progress", "completed"]
Priority = Literal["high", "medium", "low"]


class PlanItem(TypedDict):
    content: str
    status: Status
    priority: Priority


def parse_plan(args: dict[str, Any]) -> list[PlanItem]:
    """The entries of an update_plan call, checked; a ToolError tells the model what to fix."""
    entries = args.get("entries")
    if not isinstance(entries, list):
        raise ToolError("'entries' must be a list of {content, status, priority}")
    if len(entries) > MAX_ENTRIES:
        raise ToolError(f"a plan has at most {MAX_ENTRIES} entries; group the smaller steps")
    return [_entry(index, entry) for index, entry in enumerate(entries)]


def _entry(index: int, entry: Any) -> PlanItem:
    where = f"entries[{index}]"
    if not isinstance(entry, dict):
        raise ToolError(f"{where} must be an object with content, status and priority")
    content = entry.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ToolError(f"{where}.content must be a non-empty string")
    if len(content) > MAX_CONTENT_CHARS:
        raise ToolError(f"{where}.content is over {MAX_CONTENT_CHARS} characters; keep each step to one line")
    status = entry.get("status")
    if status not in STATUSES:
        raise ToolError(f"{where}.status must be one of {', '.join(STATUSES)}")
    priority = entry.get("priority", "medium")
    if priority not in PRIORITIES:
        raise ToolError(f"{where}.priority must be one of {', '.join(PRIORITIES)}")
    return PlanItem(content=content.strip(), status=status, priority=priority)


class UpdatePlanTool:
    name = TOOL_NAME
    description = (
        "Show the user your plan for multi-step work, and keep it current: call it with the whole list "
        "each time (it replaces the previous plan). Mark one step in_progress while you work on it and "
        "completed as soon as it is done. Skip it for simple one-step requests."
    )
    parameters = {
        "type": "object",
        "properties": {
            "entries": {
                "type": "array",
                "maxItems": MAX_ENTRIES,
                "description": "Every step of the plan, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "The step, in a few words."},
                        "status": {"type": "string", "enum": list(STATUSES)},
                        "priority": {"type": "string", "enum": list(PRIORITIES), "description": "Default medium."},
                    },
                    "required": ["content", "status"],
                },
            }
        },
        "required": ["entries"],
    }
    category: Category = "read"  # it changes nothing outside the conversation
    kind: Kind = "think"

    def access(self, args: dict[str, Any]) -> Access:
        return "read"

    def title(self, args: dict[str, Any]) -> str:
        return "Update plan"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return []

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        entries = parse_plan(args)
        done = sum(entry["status"] == "completed" for entry in entries)
        current = next((entry["content"] for entry in entries if entry["status"] == "in_progress"), None)
        summary = f"Plan updated: {done} of {len(entries)} steps completed."
        if current:
            summary += f" In progress: {current}"
        return ToolResult(summary, raw_output={"entries": entries})
