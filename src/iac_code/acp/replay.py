"""A stored history → the `session/update`s that show it again (for `session/load`).

Each message becomes what the client saw live, in order: the user's prompt as `user_message_chunk`,
the model's thinking and text as `agent_thought_chunk` / `agent_message_chunk`, each tool call as a
`tool_call` (title, kind, rawInput, locations, as live) and, when its result comes, one final
`tool_call_update` (completed or failed, with the result text). A compaction summary is not the
user's words: it is shown as a short "[context compacted]" agent message, not as its text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TypeVar

from acp.schema import (
    AgentThoughtChunk,
    ContentToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from iac_code.acp.updates import message_chunk
from iac_code.messages import Message, ToolCall
from iac_code.tools.base import Tool, ToolContext

COMPACTED = "\n[context compacted]\n"

T = TypeVar("T")
ReplayUpdate = UserMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress


def replay_updates(history: list[Message], tools: Mapping[str, Tool], workspace: Path) -> Iterator[ReplayUpdate]:
    ctx = ToolContext(workspace)
    described: dict[tuple[object, ...], tuple[str, list[str]]] = {}  # a long session reads the same files often
    for message in history:
        if message.role == "user":
            yield message_chunk(COMPACTED) if message.summary else _user_chunk(message.text)  # type: ignore[misc]
        elif message.role == "assistant":
            if message.thinking:
                yield AgentThoughtChunk(session_update="agent_thought_chunk", content=_text(message.thinking))
            if message.text:
                yield message_chunk(message.text)  # type: ignore[misc]
            for call in message.tool_calls:
                tool = tools.get(call.name)
                key = _call_key(call)
                if key is None:
                    yield _tool_call(call, tool, *_describe(call, tool, ctx))
                    continue
                if key not in described:
                    described[key] = _describe(call, tool, ctx)
                yield _tool_call(call, tool, *described[key])
        else:
            yield _tool_result(message)


def _text(text: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=text)


def _user_chunk(text: str) -> UserMessageChunk:
    return UserMessageChunk(session_update="user_message_chunk", content=_text(text))


def _call_key(call: ToolCall) -> tuple[object, ...] | None:
    """What a call's title and locations depend on, when it is hashable (scalar arguments only)."""
    if not all(isinstance(v, str | int | float | bool | None) for v in call.arguments.values()):
        return None
    return call.name, *sorted(call.arguments.items())


def _describe(call: ToolCall, tool: Tool | None, ctx: ToolContext) -> tuple[str, list[str]]:
    """The call's title and locations, as the live tool_call showed them."""
    if tool is None:
        return call.name, []
    title = _safe(lambda: tool.title(call.arguments), call.name)
    return title, _safe(lambda: tool.locations(call.arguments, ctx), [])


def _tool_call(call: ToolCall, tool: Tool | None, title: str, paths: list[str]) -> ToolCallStart:
    return ToolCallStart(
        session_update="tool_call",
        tool_call_id=call.id,
        title=title,
        kind=tool.kind if tool else "other",
        status="pending",
        raw_input=call.arguments,
        locations=[ToolCallLocation(path=path) for path in paths] or None,
    )


def _tool_result(message: Message) -> ToolCallProgress:
    return ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=message.tool_call_id,
        status="failed" if message.is_error else "completed",
        raw_output=message.text,
        content=[ContentToolCallContent(type="content", content=_text(message.text))],
    )


def _safe(compute: Callable[[], T], fallback: T) -> T:
    """A stored call's arguments may no longer make sense (a path since deleted, a tool whose schema
    changed): the replay must still show the call."""
    try:
        return compute()
    except Exception:
        return fallback
