"""A stored history → the `session/update`s that show it again (for `session/load`).

Each message becomes what the client saw live, in order: the user's prompt as `user_message_chunk`s
(the blocks it was sent as; for sessions stored before they were kept, its text, then each image), the
model's thinking and text as `agent_thought_chunk` / `agent_message_chunk`, each chunk with the messageId
it had live (messages.message_ids: stored, or derived from its position for older sessions), each tool
call as a `tool_call` (title, kind, rawInput, locations, as live) and, when its result comes, one final
`tool_call_update` made by presenter.py from the stored result message, as live (its `shown` record:
content, diff, rawOutput, locations, status; a client terminal, gone by now, is shown as the output's
text). A call's title and kind are the ones stored with its result (what the client saw live); a result
stored without them (older sessions) takes its tool's, or for an MCP tool whose server is not connected
(replays run as the session opens) one made from its `mcp__<server>__<tool>` name. A compaction summary
is not the user's words: it is shown as the completed `compaction_update` it was (its id the summary
message's, as live), with its text, to a client that advertised `session.compaction`, else as a short
"[context compacted]" agent message. Last comes the plan as it stood at the end, when the model kept one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import cast, get_args

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    UserMessageChunk,
)

from iac_code.acp.plan import last_plan_update
from iac_code.acp.presenter import tool_call_result, tool_call_start
from iac_code.acp.prompt import PromptBlock, user_blocks
from iac_code.acp.schema_v1_21 import CompactionUpdate, ToolCallProgress, ToolCallStart
from iac_code.acp.updates import completed_compaction, message_chunk, thought_chunk
from iac_code.agent.compaction import SUMMARY_PREFIX
from iac_code.mcp.naming import title_from_name
from iac_code.messages import Message, ToolCall, message_ids, thought_id
from iac_code.tools.base import Kind, Tool, ToolContext
from iac_code.tools.describe import CallView, describe_call

COMPACTED = "\n[context compacted]\n"

ReplayUpdate = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | CompactionUpdate
)


def replay_updates(
    session_id: str, history: list[Message], tools: Mapping[str, Tool], workspace: Path, *, compaction: bool = False
) -> Iterator[ReplayUpdate]:
    """`compaction`: the client advertised `session.compaction` (a summary is then a completed compaction)."""
    ctx = ToolContext(workspace)
    described: dict[tuple[object, ...], CallView] = {}  # a long session reads the same files often
    shown = {m.tool_call_id: m for m in history if m.role == "tool"}  # what the client saw live, if stored
    for message, message_id in zip(history, message_ids(session_id, history), strict=True):
        if message.role == "user":
            if message.summary and compaction:
                yield compaction_update(message_id, message)
            elif message.summary:
                yield message_chunk(COMPACTED, message_id)
            else:
                yield from (_user_chunk(block, message_id) for block in user_blocks(message))
        elif message.role == "assistant":
            if message.thinking:
                yield thought_chunk(message.thinking, thought_id(message_id))
            if message.text:
                yield message_chunk(message.text, message_id)
            for call in message.tool_calls:
                key = _call_key(call)
                if key is None:
                    view = _view(call, tools.get(call.name), ctx)
                else:
                    if key not in described:
                        described[key] = _view(call, tools.get(call.name), ctx)
                    view = described[key]
                yield tool_call_start(call, _as_shown(view, shown.get(call.id)))
        else:
            yield tool_call_result(message.tool_call_id, message, live=False)
    if (plan := last_plan_update(history)) is not None:
        yield plan


def compaction_update(message_id: str, summary: Message) -> CompactionUpdate:
    """A stored summary as the completed compaction that wrote it, under the summary message's id (the
    compaction's id live, agent/loop.py; derived from its place for a session stored before ids were kept)."""
    return completed_compaction(message_id, summary.text.removeprefix(SUMMARY_PREFIX))


def _user_chunk(block: PromptBlock, message_id: str) -> UserMessageChunk:
    return UserMessageChunk(session_update="user_message_chunk", content=block, message_id=message_id)


def _view(call: ToolCall, tool: Tool | None, ctx: ToolContext) -> CallView:
    view = describe_call(call, tool, ctx)
    if tool is None and (title := title_from_name(call.name)) is not None:
        return replace(view, title=title)
    return view


def _as_shown(view: CallView, result: Message | None) -> CallView:
    """The view with the title and kind stored with the call's result (older sessions stored neither)."""
    if result is None:
        return view
    kind = result.tool_kind if result.tool_kind in get_args(Kind) else view.kind
    return replace(view, title=result.tool_title or view.title, kind=cast(Kind, kind))


def _call_key(call: ToolCall) -> tuple[object, ...] | None:
    """What a call's title and locations depend on, when it is hashable (scalar arguments only)."""
    if not all(isinstance(v, str | int | float | bool | None) for v in call.arguments.values()):
        return None
    return call.name, *sorted(call.arguments.items())
