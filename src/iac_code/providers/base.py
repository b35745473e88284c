"""The one interface every model provider implements.

A provider turns (system prompt, history, tool schemas) into a stream of events for one model call.
It never retries a half-streamed answer; the SDKs retry before the first byte.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol

from iac_code.messages import Message, ToolCall
from iac_code.messages import Usage as Usage  # part of a provider's vocabulary, kept with the messages

# Why a model call ended, already mapped onto ACP stop reasons (plus "tool_use": the loop continues).
FinishReason = Literal["end_turn", "tool_use", "max_tokens", "refusal"]


@dataclass
class TextDelta:
    text: str
    message_id: str = ""  # the agent message it belongs to: the loop sets it (agent/model_call.py), not a provider


@dataclass
class ThinkingDelta:
    text: str
    signature: str = ""  # Anthropic signs thinking blocks; they must be echoed back verbatim.
    message_id: str = ""  # as TextDelta's: the thinking's own message (messages.thought_id)


@dataclass
class ToolCallReady:
    """A complete tool call: arguments fully streamed and parsed (unparseable JSON becomes {})."""

    call: ToolCall


@dataclass
class Finish:
    reason: FinishReason


# Usage (messages.py): what one call used, reported once near its end; the last one holds.
ProviderEvent = TextDelta | ThinkingDelta | ToolCallReady | Usage | Finish


@dataclass
class ToolSchema:
    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=dict)  # JSON Schema of the arguments


class ProviderError(Exception):
    """A model call failed for good (after the SDK's retries). The message is safe to show a user."""

    kind: ClassVar[Literal["auth", "model"]] = "model"


class ProviderAuthError(ProviderError):
    """The provider refused the key (HTTP 401 or 403): the user has to sign in or fix it, a retry cannot help."""

    kind = "auth"


class ModelProvider(Protocol):
    name: str  # the provider's configured name, e.g. "openai", "dashscope", "scripted"
    model: str  # the model id in use; assignable, takes effect on the next call
    context_window: int  # tokens

    def stream(
        self,
        system: str,
        history: list[Message],
        tools: list[ToolSchema],
        *,
        max_tokens: int,
        cache_key: str = "",
    ) -> AsyncIterator[ProviderEvent]:
        """Stream one model call. Ends with exactly one `Finish`; raises `ProviderError` on failure.

        `cache_key` names the conversation (a hash of its session), for providers whose prompt cache
        routes by a key; "" when there is none (a sub-agent, a summary)."""
        ...
