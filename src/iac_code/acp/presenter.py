"""How a tool call looks to an ACP client, built one way for live updates, permission requests and replay.

A call is announced as a `tool_call` (pending, with title, kind, rawInput and the paths it touches), may
go `in_progress` and show progress while it runs (a client terminal, a sub-agent's steps: `content`
only), and ends with one `tool_call_update` made from the result message the history keeps (its
`shown` record), live and on replay alike: completed or failed, `rawOutput` (the tool's structured
output, else its text), `content` (an edit's diff, else the text — left out when the call ran in a
client terminal, which shows the output itself, or when it is empty beside other blocks — then the
blocks the tool added: images, audio, resources as the MCP server gave them) and `locations` (with
lines) when the result points somewhere. On a replay the terminal is gone: its output is shown as text.
A result stored before `shown` was kept shows its text and images only.
"""

from __future__ import annotations

from typing import Any

from acp.helpers import (
    audio_block,
    image_block,
    text_block,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
)
from acp.schema import (
    AudioContentBlock,
    ContentToolCallContent,
    EmbeddedResourceContentBlock,
    FileEditToolCallContent,
    ImageContentBlock,
    RequestPermissionRequest,
    ResourceContentBlock,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolCallUpdate,
)

from iac_code.acp.permissions import permission_options
from iac_code.acp.schema_v1_21 import ToolCallProgress, ToolCallStart
from iac_code.agent.events import PermissionRequest, SubagentSteps
from iac_code.messages import Audio, Block, Image, Location, Message, Shown, ToolCall
from iac_code.tools.base import Terminal
from iac_code.tools.describe import CallView

INFRASTRUCTURE_TITLE_PREFIX = "Infrastructure change: "
STEP_MARKS = {"pending": "○", "in_progress": "…", "completed": "✓", "failed": "✗"}

ToolCallContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent


def tool_call_start(call: ToolCall, view: CallView) -> ToolCallStart:
    return ToolCallStart(
        session_update="tool_call",
        tool_call_id=call.id,
        title=view.title,
        name=call.name,
        kind=view.kind,
        status="pending",
        raw_input=call.arguments,
        locations=_paths(view.locations),
    )


def tool_call_running(call_id: str) -> ToolCallProgress:
    return _update(call_id, status="in_progress")


def tool_call_progress(call_id: str, progress: Terminal | SubagentSteps) -> ToolCallProgress:
    """What a running call shows now; it replaces the call's content so far. A sub-agent's steps are one
    line each, marked with their state."""
    if isinstance(progress, Terminal):
        return _update(call_id, content=[tool_terminal_ref(progress.terminal_id)])
    lines = "\n".join(f"{STEP_MARKS[step.state]} {step.title}" for step in progress.steps)
    return _update(call_id, content=[tool_content(text_block(lines))])


def tool_call_result(call_id: str, result: Message, *, live: bool = True) -> ToolCallProgress:
    """The final update for the tool-result message `result`; `live` False on a replay."""
    shown = result.shown or Shown(blocks=list(result.images))
    terminal = shown.terminal_id if live else None
    return _update(
        call_id,
        status="failed" if result.is_error else "completed",
        raw_output=result.text if shown.raw_output is None else shown.raw_output,
        content=[*_main_content(result, shown, terminal), *(tool_content(_block(b)) for b in shown.blocks)],
        locations=_lines(shown.locations),
    )


def permission_request(session_id: str, request: PermissionRequest) -> RequestPermissionRequest:
    """`session/request_permission` for a call the client was already shown. An infrastructure change says
    so in its title and in rawInput (`infrastructureChange: true`), and offers no "always" option. A question
    with details shows their text as content, and a reviewed plan's contract as rawInput.plan."""
    title, raw_input = request.title, request.call.arguments
    if request.infrastructure_change:
        title = INFRASTRUCTURE_TITLE_PREFIX + title
        raw_input = {**raw_input, "infrastructureChange": True}
    details = request.details
    if details is not None and details.plan is not None:
        raw_input = {**raw_input, "plan": details.plan}
    return RequestPermissionRequest(
        session_id=session_id,
        tool_call=ToolCallUpdate(
            tool_call_id=request.call.id,
            title=title,
            kind=request.kind,
            status="pending",
            raw_input=raw_input,
            locations=_paths(request.locations),
            content=[tool_content(text_block(details.text))] if details is not None and details.text else None,
        ),
        options=permission_options(request.options),
    )


def _main_content(result: Message, shown: Shown, terminal: str | None) -> list[ToolCallContent]:
    if shown.diff is not None and not result.is_error:
        diff = shown.diff
        return [tool_diff_content(diff.path, diff.new_text, diff.old_text)]
    if terminal is not None:
        return [tool_terminal_ref(terminal)]
    if not result.text and shown.blocks:  # e.g. an MCP tool that returned only an image
        return []
    return [tool_content(text_block(result.text))]


def _block(block: Block) -> ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock:
    if isinstance(block, Image):
        return image_block(block.data, block.mime_type)
    if isinstance(block, Audio):
        return audio_block(block.data, block.mime_type)
    if block.block.get("type") == "resource_link":
        return ResourceContentBlock.model_validate(block.block)
    return EmbeddedResourceContentBlock.model_validate(block.block)


def _update(call_id: str, **fields: Any) -> ToolCallProgress:
    return ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id, **fields)


def _paths(paths: list[str]) -> list[ToolCallLocation] | None:
    return [ToolCallLocation(path=path) for path in paths] or None


def _lines(locations: list[Location]) -> list[ToolCallLocation] | None:
    return [ToolCallLocation(path=loc.path, line=loc.line) for loc in locations] or None
