"""Model output made encodable before anything else sees it.

A model's JSON may carry `"\\ud800"`, which the SDKs decode to a lone surrogate. Kept as is, it
breaks whatever writes it next: the session log, the client's update, the next request to the
model (so every later turn of the session failed). build_provider wraps every provider in this.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from iac_code.encodable import encodable, encodable_value
from iac_code.messages import Message, ToolCall
from iac_code.providers.base import (
    ModelProvider,
    ProviderEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallReady,
    ToolSchema,
)


class EncodableOutput:
    """A ModelProvider whose events carry no lone surrogate; everything else is the wrapped one's."""

    def __init__(self, inner: ModelProvider) -> None:
        self.inner = inner
        self.name = inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    @model.setter
    def model(self, value: str) -> None:
        self.inner.model = value

    @property
    def context_window(self) -> int:
        return self.inner.context_window

    @context_window.setter
    def context_window(self, value: int) -> None:
        self.inner.context_window = value

    def __getattr__(self, name: str) -> Any:  # the wrapped provider's own extras (base_url, ...)
        return getattr(self.inner, name)

    async def stream(
        self, system: str, history: list[Message], tools: list[ToolSchema], *, max_tokens: int, cache_key: str = ""
    ) -> AsyncIterator[ProviderEvent]:
        async for event in self.inner.stream(system, history, tools, max_tokens=max_tokens, cache_key=cache_key):
            yield encodable_event(event)


def encodable_event(event: ProviderEvent) -> ProviderEvent:
    if isinstance(event, TextDelta):
        return TextDelta(encodable(event.text))
    if isinstance(event, ThinkingDelta):
        return ThinkingDelta(encodable(event.text), encodable(event.signature))
    if isinstance(event, ToolCallReady):
        call = event.call
        return ToolCallReady(ToolCall(encodable(call.id), encodable(call.name), encodable_value(call.arguments)))
    return event
