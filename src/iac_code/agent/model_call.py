"""One model call, read to its end: the text and thinking streamed to the consumer as they come, the tool
calls, the usage and why the model stopped, gathered into the assistant message the history keeps.

One model call is one agent message to the client (its text, whatever tool calls follow it) and its
thinking another: the deltas carry the message's id, and the thinking's (`messages.thought_id`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace

from iac_code.agent.events import Event
from iac_code.messages import Message, ToolCall, thought_id
from iac_code.providers.base import Finish, FinishReason, ProviderEvent, TextDelta, ThinkingDelta, ToolCallReady, Usage


@dataclass
class ModelReply:
    message: Message
    finish: FinishReason
    usage: Usage = field(default_factory=lambda: Usage(0, 0))


async def read_reply(
    stream: AsyncIterator[ProviderEvent],
    emit: Callable[[Event], Awaitable[None]],
    partial: list[str],
    message_id: str,
) -> ModelReply:
    """Read `stream` to its end, into the message `message_id`. The answer's text is gathered in `partial`
    as it arrives, so a caller whose call is cut short (cancelled, failed) still has what the user already saw."""
    thinking: list[str] = []
    signature = ""
    calls: list[ToolCall] = []
    finish: FinishReason = "end_turn"
    usage = Usage(0, 0)
    async for event in stream:
        if isinstance(event, TextDelta):
            partial.append(event.text)
            await emit(replace(event, message_id=message_id))
        elif isinstance(event, ThinkingDelta):
            thinking.append(event.text)
            signature = event.signature or signature
            if event.text:
                await emit(replace(event, message_id=thought_id(message_id)))
        elif isinstance(event, ToolCallReady):
            calls.append(event.call)
        elif isinstance(event, Usage):
            usage = event
        elif isinstance(event, Finish):
            finish = event.reason
    message = Message(
        role="assistant",
        id=message_id,
        text="".join(partial),
        thinking="".join(thinking),
        thinking_signature=signature,
        tool_calls=calls,
    )
    return ModelReply(message, finish, usage)
