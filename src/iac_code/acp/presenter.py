"""How a tool call looks to an ACP client, built one way for live updates, permission requests and replay.

A call is announced as a `tool_call` (pending, with title, kind, rawInput and the paths it touches), may
go `in_progress` and show progress while it runs (a client terminal, a sub-agent's steps: `content`
only), and ends with one `tool_call_update`: completed or failed, `rawOutput` (the tool's structured
output, else its text), `content` (an edit's diff, else the text — left out when the call ran in a
client terminal, which shows the output itself, or when it is empty beside other blocks — then any extra
blocks the tool added) and
`locations` (with lines) when the result points somewhere.
"""

from __future__ import annotations

from typing import Any

from acp.helpers import start_tool_call, text_block, tool_content, tool_diff_content, update_tool_call
from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    RequestPermissionRequest,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from iac_code.acp.permissions import permission_options
from iac_code.agent.events import PermissionRequest
from iac_code.messages import ToolCall
from iac_code.tools.base import Location, ToolResult
from iac_code.tools.describe import CallView

INFRASTRUCTURE_TITLE_PREFIX = "Infrastructure change: "

ToolCallContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent
_TOOL_CALL_CONTENT = (ContentToolCallContent, FileEditToolCallContent, TerminalToolCallContent)


def tool_call_start(call: ToolCall, view: CallView) -> ToolCallStart:
    return start_tool_call(
        call.id,
        view.title,
        kind=view.kind,
        status="pending",
        raw_input=call.arguments,
        locations=_paths(view.locations),
    )


def tool_call_running(call_id: str) -> ToolCallProgress:
    return update_tool_call(call_id, status="in_progress")


def tool_call_progress(call_id: str, content: list[Any]) -> ToolCallProgress:
    """What a running call shows now; it replaces the call's content so far."""
    return update_tool_call(call_id, content=[_as_tool_content(block) for block in content])


def tool_call_result(call_id: str, result: ToolResult) -> ToolCallProgress:
    return update_tool_call(
        call_id,
        status="failed" if result.is_error else "completed",
        raw_output=result.text if result.raw_output is None else result.raw_output,
        content=[*_result_content(result), *(_as_tool_content(block) for block in result.content)],
        locations=_lines(result.locations),
    )


def permission_request(session_id: str, request: PermissionRequest) -> RequestPermissionRequest:
    """`session/request_permission` for a call the client was already shown. An infrastructure change says
    so in its title and in rawInput (`infrastructureChange: true`), and offers no "always" option."""
    title, raw_input = request.title, request.call.arguments
    if request.infrastructure_change:
        title = INFRASTRUCTURE_TITLE_PREFIX + title
        raw_input = {**raw_input, "infrastructureChange": True}
    return RequestPermissionRequest(
        session_id=session_id,
        tool_call=ToolCallUpdate(
            tool_call_id=request.call.id,
            title=title,
            kind=request.kind,
            status="pending",
            raw_input=raw_input,
            locations=_paths(request.locations),
        ),
        options=permission_options(request.options),
    )


def _result_content(result: ToolResult) -> list[ToolCallContent]:
    if result.diff is not None and not result.is_error:
        diff = result.diff
        return [tool_diff_content(diff.path, diff.new_text, diff.old_text)]
    if any(_is_terminal(block) for block in result.content):
        return []
    if not result.text and result.content:  # e.g. an MCP tool that returned only an image
        return []
    return [tool_content(text_block(result.text))]


def _is_terminal(block: Any) -> bool:
    return isinstance(block, TerminalToolCallContent) or (isinstance(block, dict) and block.get("type") == "terminal")


def _as_tool_content(block: Any) -> Any:
    """A tool's extra block: tool-call content (a diff, a terminal) as is, a plain content block wrapped."""
    if isinstance(block, _TOOL_CALL_CONTENT):
        return block
    if isinstance(block, dict) and block.get("type") in ("content", "diff", "terminal"):
        return block
    return tool_content(block)


def _paths(paths: list[str]) -> list[ToolCallLocation] | None:
    return [ToolCallLocation(path=path) for path in paths] or None


def _lines(locations: list[Location]) -> list[ToolCallLocation] | None:
    return [ToolCallLocation(path=loc.path, line=loc.line) for loc in locations] or None
