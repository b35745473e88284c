"""Agent loop events → official `session/update` payloads."""

from __future__ import annotations

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentToolCallContent,
    FileEditToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
)

from iac_code.agent.events import (
    Compaction,
    ErrorReport,
    Event,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolRunning,
    ToolUseStart,
    UsageReport,
)

Update = AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress | UsageUpdate


def message_chunk(text: str) -> AgentMessageChunk:
    return AgentMessageChunk(session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text))


def event_update(event: Event) -> Update | None:
    """The update for one loop event; None for events the client does not see (TurnEnd)."""
    if isinstance(event, TextDelta):
        return message_chunk(event.text)
    if isinstance(event, ThinkingDelta):
        return AgentThoughtChunk(
            session_update="agent_thought_chunk", content=TextContentBlock(type="text", text=event.text)
        )
    if isinstance(event, ToolUseStart):
        return ToolCallStart(
            session_update="tool_call",
            tool_call_id=event.call.id,
            title=event.title,
            kind=event.kind,
            status="pending",
            raw_input=event.call.arguments,
            locations=[ToolCallLocation(path=path) for path in event.locations] or None,
        )
    if isinstance(event, ToolRunning):
        return ToolCallProgress(session_update="tool_call_update", tool_call_id=event.call.id, status="in_progress")
    if isinstance(event, ToolFinished):
        return _finished(event)
    if isinstance(event, UsageReport):
        return UsageUpdate(session_update="usage_update", used=event.context_used, size=event.context_size)
    if isinstance(event, Compaction):
        return message_chunk(f"\n[context compacted] {event.message}\n")
    if isinstance(event, ErrorReport):
        return message_chunk(f"\n[error] {event.message}\n")
    return None


def _finished(event: ToolFinished) -> ToolCallProgress:
    result = event.result
    if result.diff is not None and not result.is_error:
        content: list = [
            FileEditToolCallContent(
                type="diff", path=result.diff.path, old_text=result.diff.old_text, new_text=result.diff.new_text
            )
        ]
    else:
        content = [ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=result.text))]
    return ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=event.call.id,
        status="failed" if result.is_error else "completed",
        raw_output=result.text,
        content=content,
    )
