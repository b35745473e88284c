"""Anthropic Messages (and Anthropic-compatible endpoints) through the official `anthropic` SDK.

Thinking blocks come back signed; the signature is kept on the assistant message and the block is
echoed verbatim on the next call, as the API requires around tool use. Every request marks its prompt-cache
breakpoints (cache_marks.py), and the usage keeps the cached reads and writes apart.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import anthropic

from iac_code.messages import Image, Message, ToolCall
from iac_code.providers.base import (
    Finish,
    FinishReason,
    ProviderError,
    ProviderEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallReady,
    ToolSchema,
    Usage,
)
from iac_code.providers.cache_marks import EXTENDED_TTL_BETA, CacheTtl, mark_anthropic
from iac_code.providers.clients import lent_client, tls_context
from iac_code.providers.sdk import parse_arguments, provider_error, sdk_errors

STOP_REASONS: dict[str, FinishReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "pause_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "refusal": "refusal",
}


class AnthropicProvider:
    def __init__(
        self,
        name: str,
        model: str,
        base_url: str,
        api_key: str,
        context_window: int,
        max_retries: int = 2,
        timeout: float = 120.0,
        *,
        key_env: str = "",
        cache_ttl: CacheTtl = "5m",
    ) -> None:
        self.name = name
        self.cache_ttl: CacheTtl = cache_ttl
        self.model = model
        self.context_window = context_window
        # The SDK appends /v1/messages itself; a base URL copied with /v1 would double it.
        self.base_url = base_url.rstrip("/").removesuffix("/v1")
        self._key_env = key_env
        self._client_key = ("anthropic", self.base_url, api_key, max_retries, timeout)

    def _client(self) -> AbstractContextManager[anthropic.AsyncAnthropic]:
        _, base_url, api_key, max_retries, timeout = self._client_key
        return lent_client(
            self._client_key,
            lambda: anthropic.AsyncAnthropic(
                api_key=api_key,
                base_url=base_url or None,
                max_retries=max_retries,
                timeout=anthropic.Timeout(timeout, connect=10.0),
                http_client=anthropic.DefaultAsyncHttpxClient(verify=tls_context()),
            ),
        )

    async def stream(
        self, system: str, history: list[Message], tools: list[ToolSchema], *, max_tokens: int, cache_key: str = ""
    ) -> AsyncIterator[ProviderEvent]:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": to_anthropic_messages(history),
            "max_tokens": max_tokens,
            "stream": True,
        }
        if system:
            request["system"] = system
        if tools:
            request["tools"] = [to_anthropic_tool(tool) for tool in tools]
        mark_anthropic(request, self.cache_ttl)
        if self.cache_ttl == "1h":
            request["extra_headers"] = {"anthropic-beta": EXTENDED_TTL_BETA}
        reply = _StreamedReply()
        try:
            with self._client() as client:
                events = await client.messages.create(**request)
                async with events:
                    async for event in events:
                        for translated in reply.absorb(event):
                            yield translated
        except sdk_errors(anthropic) as exc:
            endpoint = self.base_url or "the Anthropic API"
            raise provider_error(
                anthropic, exc, name=self.name, model=self.model, endpoint=endpoint, key_env=self._key_env
            ) from None
        for translated in reply.finish(self.name):
            yield translated


@dataclass
class _PendingToolUse:
    id: str
    name: str
    input_json: list[str] = field(default_factory=list)


@dataclass
class _StreamedReply:
    """Accumulates one streamed message: tool_use blocks by index, usage, and the stop reason."""

    tool_uses: dict[int, _PendingToolUse] = field(default_factory=dict)
    usage: Usage = field(default_factory=lambda: Usage(0, 0))
    stop_reason: str | None = None
    stopped: bool = False

    def absorb(self, event: Any) -> list[ProviderEvent]:
        kind = event.type
        if kind == "message_start":
            self._absorb_usage(event.message.usage)
        elif kind == "content_block_start":
            return self._block_start(event.index, event.content_block)
        elif kind == "content_block_delta":
            return self._block_delta(event.index, event.delta)
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason or self.stop_reason
            if event.usage is not None:
                self._absorb_usage(event.usage)
        elif kind == "message_stop":
            self.stopped = True
        return []

    def _absorb_usage(self, usage: Any) -> None:
        """Anthropic's `input_tokens` leaves out the cached part; ours counts it (it is context the model
        read). message_delta repeats the counts cumulatively (the output ones at least): given ones win."""
        read = getattr(usage, "cache_read_input_tokens", None)
        written = getattr(usage, "cache_creation_input_tokens", None)
        if read is not None:
            self.usage.cache_read_tokens = read
        if written is not None:
            self.usage.cache_write_tokens = written
        if (uncached := getattr(usage, "input_tokens", None)) is not None:
            self.usage.input_tokens = uncached + self.usage.cache_read_tokens + self.usage.cache_write_tokens
        if (output := getattr(usage, "output_tokens", None)) is not None:
            self.usage.output_tokens = output

    def _block_start(self, index: int, block: Any) -> list[ProviderEvent]:
        if block.type == "tool_use":
            self.tool_uses[index] = _PendingToolUse(block.id, block.name)
        elif block.type == "text" and block.text:
            return [TextDelta(block.text)]
        elif block.type == "thinking" and block.thinking:
            return [ThinkingDelta(block.thinking, signature=block.signature or "")]
        return []

    def _block_delta(self, index: int, delta: Any) -> list[ProviderEvent]:
        if delta.type == "text_delta":
            return [TextDelta(delta.text)]
        if delta.type == "thinking_delta":
            return [ThinkingDelta(delta.thinking)]
        if delta.type == "signature_delta":
            return [ThinkingDelta("", signature=delta.signature)]
        if delta.type == "input_json_delta" and index in self.tool_uses:
            self.tool_uses[index].input_json.append(delta.partial_json)
        return []

    def finish(self, provider: str) -> list[ProviderEvent]:
        if not self.stopped or self.stop_reason is None:
            raise ProviderError(f"{provider}: stream ended before the model finished")
        events: list[ProviderEvent] = [
            ToolCallReady(ToolCall(id=use.id, name=use.name, arguments=parse_arguments("".join(use.input_json))))
            for _, use in sorted(self.tool_uses.items())
        ]
        events.append(self.usage)
        events.append(Finish(STOP_REASONS.get(self.stop_reason, "end_turn")))
        return events


def to_anthropic_tool(tool: ToolSchema) -> dict[str, Any]:
    schema = tool.parameters or {"type": "object", "properties": {}}
    return {"name": tool.name, "description": tool.description, "input_schema": schema}


def to_anthropic_messages(history: list[Message]) -> list[dict[str, Any]]:
    """Tool results travel as user `tool_result` blocks; consecutive user-side turns merge into one
    message so roles alternate and tool results stay first, as the API requires."""
    messages: list[dict[str, Any]] = []
    for message in history:
        if message.role == "assistant":
            blocks = _assistant_blocks(message)
            if blocks:
                messages.append({"role": "assistant", "content": blocks})
            continue
        blocks = [_tool_result_block(message)] if message.role == "tool" else _user_blocks(message)
        if not blocks:
            continue
        if messages and messages[-1]["role"] == "user":
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": "user", "content": blocks})
    return messages


def _user_blocks(message: Message) -> list[dict[str, Any]]:
    """Images first (Anthropic's advice for image prompts), then the text; the API rejects empty text blocks."""
    blocks = [_image_block(image) for image in message.images]
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    return blocks


def _tool_result_block(message: Message) -> dict[str, Any]:
    """The result's text, or its content blocks when the tool returned images: the text, then the images."""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    if message.images:
        text = [{"type": "text", "text": message.text}] if message.text else []
        block["content"] = text + [_image_block(image) for image in message.images]
    elif message.text:
        block["content"] = message.text
    if message.is_error:
        block["is_error"] = True
    return block


def _image_block(image: Image) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": image.data}}


def _assistant_blocks(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    # Unsigned thinking (e.g. from an OpenAI-compatible model earlier in the session) would be rejected.
    if message.thinking and message.thinking_signature:
        blocks.append({"type": "thinking", "thinking": message.thinking, "signature": message.thinking_signature})
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    blocks += [
        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments} for call in message.tool_calls
    ]
    return blocks
