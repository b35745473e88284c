"""Agent loop events → official `session/update` payloads (tool calls through presenter.py, plans through
plan.py)."""

from __future__ import annotations

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    Cost,
    TextContentBlock,
    Usage,
    UsageUpdate,
)

from iac_code.acp.plan import result_plan_update
from iac_code.acp.presenter import tool_call_progress, tool_call_result, tool_call_running, tool_call_start
from iac_code.acp.schema_v1_21 import (
    CompactionSummaryChunk,
    CompactionUpdate,
    ContentBlock,
    ToolCallProgress,
    ToolCallStart,
)
from iac_code.agent.events import (
    Compaction,
    Event,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolProgress,
    ToolRunning,
    ToolUseStart,
    TurnEnd,
    UsageReport,
)
from iac_code.messages import new_message_id
from iac_code.tools.describe import CallView

_TOLD_STAGES = frozenset({"completed", "failed", "skipped"})  # as before compactions were reported as they go

Update = AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress | UsageUpdate | AgentPlanUpdate


def message_chunk(text: str, message_id: str) -> AgentMessageChunk:
    """A chunk of the agent message `message_id` (every chunk of one message carries its id)."""
    content = TextContentBlock(type="text", text=text)
    return AgentMessageChunk(session_update="agent_message_chunk", content=content, message_id=message_id)


def thought_chunk(text: str, message_id: str) -> AgentThoughtChunk:
    content = TextContentBlock(type="text", text=text)
    return AgentThoughtChunk(session_update="agent_thought_chunk", content=content, message_id=message_id)


def event_update(event: Event) -> Update | None:
    """The update for one loop event; None for events that are not updates (TurnEnd, PermissionRequest, and
    ErrorReport: the prompt's response is the error, acp/face.py)."""
    if isinstance(event, TextDelta):
        return message_chunk(event.text, event.message_id)
    if isinstance(event, ThinkingDelta):
        return thought_chunk(event.text, event.message_id)
    if isinstance(event, ToolUseStart):
        return tool_call_start(event.call, CallView(event.title, event.kind, event.locations))
    if isinstance(event, ToolRunning):
        return tool_call_running(event.call.id)
    if isinstance(event, ToolProgress):
        return tool_call_progress(event.call.id, event.progress)
    if isinstance(event, ToolFinished):
        return tool_call_result(event.call.id, event.result)
    if isinstance(event, UsageReport):
        cost = Cost(amount=event.cost.amount, currency=event.cost.currency) if event.cost is not None else None
        return UsageUpdate(session_update="usage_update", used=event.context_used, size=event.context_size, cost=cost)
    if isinstance(event, Compaction):  # for a client without `session.compaction`: how it ended, as a message
        if event.stage not in _TOLD_STAGES:
            return None
        return message_chunk(f"\n[context compacted] {event.message}\n", new_message_id())
    return None


def event_updates(event: Event) -> list[Update]:
    """Every update one loop event makes: its own, then, after a finished update_plan call, the plan."""
    update = event_update(event)
    if update is None:
        return []
    if isinstance(event, ToolFinished) and (plan := result_plan_update(event.call.name, event.result)) is not None:
        return [update, plan]
    return [update]


def compaction_updates(event: Compaction) -> list[CompactionUpdate | CompactionSummaryChunk | AgentMessageChunk]:
    """A compaction for a client that advertised `session.compaction`: `compaction_update` in_progress, the
    summary as `compaction_summary_chunk`s, then `compaction_update` completed (with the whole summary, as
    stored), failed (with why) or cancelled; a /compact with nothing to compact stays a message."""
    if event.stage == "skipped":
        return [message_chunk(f"\n[context compacted] {event.message}\n", new_message_id())]
    if event.stage == "summary":
        return [
            CompactionSummaryChunk(compaction_id=event.id, content=TextContentBlock(type="text", text=event.summary))
        ]
    if event.stage == "started":
        return [CompactionUpdate(compaction_id=event.id, status="in_progress")]
    if event.stage == "completed":
        return [completed_compaction(event.id, event.summary)]
    error = event.message if event.stage == "failed" else None
    return [CompactionUpdate(compaction_id=event.id, status=event.stage, error=error)]


def completed_compaction(compaction_id: str, summary: str) -> CompactionUpdate:
    """A compaction done, with its whole summary: live, and on a replay from the stored summary message."""
    content: list[ContentBlock] = [TextContentBlock(type="text", text=summary)]
    return CompactionUpdate(compaction_id=compaction_id, status="completed", summary=content)


def turn_usage(end: TurnEnd) -> Usage:
    """The prompt response's usage: the turn's tokens, the cached parts and the reasoning apart (inputTokens
    counts all the input, cached or not; totalTokens is input plus output, which holds the reasoning)."""
    tokens = end.usage
    return Usage(
        input_tokens=tokens.input_tokens,
        output_tokens=tokens.output_tokens,
        thought_tokens=tokens.thought_tokens,
        cached_read_tokens=tokens.cache_read_tokens,
        cached_write_tokens=tokens.cache_write_tokens,
        total_tokens=tokens.input_tokens + tokens.output_tokens,
    )
