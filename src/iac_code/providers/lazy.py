"""A ModelProvider that builds the real one on its first model call.

Building the configured provider imports its SDK (the openai SDK alone takes one to two seconds),
which `session/new` must not pay for: the model id, the picker's list and the context window are all
known from the settings. `presets.warm_up` imports the SDK in the background meanwhile, and the
build runs in a worker thread so a cold import never blocks the other sessions of the process.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from iac_code.config import ConfigError, Settings
from iac_code.messages import Message
from iac_code.preload import loading_for_good
from iac_code.providers.base import ModelProvider, ProviderError, ProviderEvent, ToolSchema
from iac_code.providers.images import images_enabled, without_images
from iac_code.providers.observed import observed
from iac_code.providers.presets import (
    DEMO_MODEL,
    available_models,
    build_provider,
    canonical_name,
    check_settings,
    context_window_for,
)


class LazyProvider:
    """Raises ConfigError at construction for what can be checked without an SDK; a problem found
    only when building (an unreadable script) becomes a ProviderError, which the loop reports."""

    def __init__(self, settings: Settings) -> None:
        check_settings(settings)
        self._settings = settings
        self._built: ModelProvider | None = None
        self._building = asyncio.Lock()
        self.name = canonical_name(settings.provider) if settings.provider else "demo"
        self._model = available_models(settings)[0] if settings.provider else DEMO_MODEL  # the current comes first
        self._context_window = settings.context_window or context_window_for(self._model)

    @property
    def model(self) -> str:
        return self._built.model if self._built is not None else self._model

    @model.setter
    def model(self, value: str) -> None:
        self._model = value
        # A new model may have a very different window (qwen-max 32k vs qwen3-coder-plus 1M), and
        # compaction must follow it; an explicit IAC_CODE_CONTEXT_WINDOW still wins.
        self._context_window = self._settings.context_window or context_window_for(value)
        if self._built is not None:
            self._built.model = value
            self._built.context_window = self._context_window

    @property
    def context_window(self) -> int:
        return self._context_window

    @context_window.setter
    def context_window(self, value: int) -> None:
        self._context_window = value
        if self._built is not None:
            self._built.context_window = value

    def stream(
        self, system: str, history: list[Message], tools: list[ToolSchema], *, max_tokens: int, cache_key: str = ""
    ) -> AsyncIterator[ProviderEvent]:
        events = self._stream(system, history, tools, max_tokens=max_tokens, cache_key=cache_key)
        return observed(self.name, self.model, events)

    async def _stream(
        self, system: str, history: list[Message], tools: list[ToolSchema], *, max_tokens: int, cache_key: str = ""
    ) -> AsyncIterator[ProviderEvent]:
        provider = await self._provider()
        if not images_enabled(self._settings, self.model):  # an image would be a 400 on every later turn
            history = without_images(history)
        async for event in provider.stream(system, history, tools, max_tokens=max_tokens, cache_key=cache_key):
            yield event

    async def _provider(self) -> ModelProvider:
        async with self._building:
            if self._built is None:
                try:
                    built = await asyncio.to_thread(_build, self._settings)
                except ConfigError as exc:
                    raise ProviderError(str(exc)) from None
                built.model = self._model
                self._built = built
        return self._built


def _build(settings: Settings) -> ModelProvider:
    with loading_for_good():  # the SDK it may import stays for good: ~8% faster without collections
        return build_provider(settings)
