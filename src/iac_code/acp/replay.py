"""A stored history → the `session/update`s that show it again (for `session/load`).

Each message becomes what the client saw live, in order: the user's prompt as `user_message_chunk`,
the model's thinking and text as `agent_thought_chunk` / `agent_message_chunk`, each tool call as a
`tool_call` (title, kind, rawInput, locations, as live) and, when its result comes, one final
`tool_call_update` (completed or failed, with the result text). A compaction summary is not the
user's words: it is shown as a short "[context compacted]" agent message, not as its text.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from acp.helpers import update_agent_thought_text, update_user_message_text
from acp.schema import AgentMessageChunk, AgentThoughtChunk, ToolCallProgress, ToolCallStart, UserMessageChunk

from iac_code.acp.presenter import tool_call_result, tool_call_start
from iac_code.acp.updates import message_chunk
from iac_code.messages import Message, ToolCall
from iac_code.tools.base import Tool, ToolContext, ToolResult
from iac_code.tools.describe import CallView, describe_call

COMPACTED = "\n[context compacted]\n"

ReplayUpdate = UserMessageChunk | AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress


def replay_updates(history: list[Message], tools: Mapping[str, Tool], workspace: Path) -> Iterator[ReplayUpdate]:
    ctx = ToolContext(workspace)
    described: dict[tuple[object, ...], CallView] = {}  # a long session reads the same files often
    for message in history:
        if message.role == "user":
            yield message_chunk(COMPACTED) if message.summary else update_user_message_text(message.text)
        elif message.role == "assistant":
            if message.thinking:
                yield update_agent_thought_text(message.thinking)
            if message.text:
                yield message_chunk(message.text)
            for call in message.tool_calls:
                key = _call_key(call)
                if key is None:
                    yield tool_call_start(call, describe_call(call, tools.get(call.name), ctx))
                    continue
                if key not in described:
                    described[key] = describe_call(call, tools.get(call.name), ctx)
                yield tool_call_start(call, described[key])
        else:
            yield tool_call_result(message.tool_call_id, ToolResult(message.text, is_error=message.is_error))


def _call_key(call: ToolCall) -> tuple[object, ...] | None:
    """What a call's title and locations depend on, when it is hashable (scalar arguments only)."""
    if not all(isinstance(v, str | int | float | bool | None) for v in call.arguments.values()):
        return None
    return call.name, *sorted(call.arguments.items())
