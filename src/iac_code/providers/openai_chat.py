"""OpenAI chat completions (and every OpenAI-compatible endpoint) through the official `openai` SDK.

The SDK retries 408/409/429/5xx and timeouts before the first byte; once a stream has started,
a failure is final (the loop decides what to do with the half answer).

Prompt caching here is the server's: it reuses a byte-identical prefix (tools, system prompt, earlier
messages), which this module keeps identical from call to call (the messages are rebuilt the same way from
the same history, the tools' JSON is reused). Where the endpoint accepts them it also gets
`prompt_cache_key` (OpenAI routes requests with the same key to the same cache) and explicit
`cache_control` marks (DashScope, cache_marks.py).
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, cast

import openai
from openai.types.chat import ChatCompletion

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
from iac_code.providers.cache_marks import mark_openai
from iac_code.providers.clients import lent_client, tls_context
from iac_code.providers.sdk import parse_arguments, provider_error, sdk_errors

FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}

# Local servers ignore the key, but the SDK refuses to build a client without one.
NO_KEY = "not-needed"


class OpenAIChatProvider:
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
        max_tokens_field: str = "max_tokens",
        sends_cache_key: bool = False,
        cache_marked_models: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.model = model
        self.context_window = context_window
        self.base_url = base_url
        self._key_env = key_env
        # OpenAI's own newer models only accept max_completion_tokens; most compatible servers want max_tokens.
        self._max_tokens_field = max_tokens_field
        self._sends_cache_key = sends_cache_key  # an endpoint that does not know the field may refuse it
        self._cache_marked_models = cache_marked_models  # id prefixes of the models with explicit caching
        self._client_key = ("openai", base_url, api_key or NO_KEY, max_retries, timeout)
        self._body = _RequestBody()

    def _client(self) -> AbstractContextManager[openai.AsyncOpenAI]:
        _, base_url, api_key, max_retries, timeout = self._client_key
        return lent_client(
            self._client_key,
            lambda: openai.AsyncOpenAI(
                api_key=api_key,
                base_url=base_url,
                max_retries=max_retries,
                timeout=openai.Timeout(timeout, connect=10.0),
                http_client=openai.DefaultAsyncHttpxClient(verify=tls_context()),
            ),
        )

    async def stream(
        self, system: str, history: list[Message], tools: list[ToolSchema], *, max_tokens: int, cache_key: str = ""
    ) -> AsyncIterator[ProviderEvent]:
        messages = to_openai_messages(system, history)
        if self.model.lower().startswith(self._cache_marked_models):
            mark_openai(messages)
        request: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            self._max_tokens_field: max_tokens,
        }
        if self._sends_cache_key and cache_key:
            request["prompt_cache_key"] = cache_key
        body = self._body.encode(request, tools)
        reply = _StreamedReply()
        try:
            # Not `chat.completions.create()`: it re-walks the whole request against the SDK's
            # TypedDicts on every call (~0.4 ms per message, 125 ms for a 300-message history, with
            # the event loop blocked), and builds a pydantic model per streamed chunk (~0.2 ms each).
            # Our body is already the API's plain JSON, and chunks are read as plain JSON; `post`
            # keeps the SDK's retries, auth, error mapping and SSE parsing. Chunks are typed `object`:
            # for `dict[str, Any]` the SDK "constructs" every key of every chunk (10 µs each, 1.5 for
            # `object`), handing back the same values. The body goes as bytes (see _RequestBody).
            with self._client() as client:
                chunks = await client.post(
                    "/chat/completions",
                    content=body,
                    cast_to=ChatCompletion,
                    stream=True,
                    stream_cls=openai.AsyncStream[object],
                )
                async with chunks:
                    async for chunk in chunks:
                        for event in reply.absorb(cast(dict[str, Any], chunk)):
                            yield event
        except sdk_errors(openai) as exc:
            raise provider_error(
                openai, exc, name=self.name, model=self.model, endpoint=self.base_url, key_env=self._key_env
            ) from None
        for event in reply.finish(self.name):
            yield event


class _RequestBody:
    """A request's JSON, with the `tools` array encoded once per tool list rather than on every call.

    A session sends the same tools on every model call: eleven built-in ones are ~9 KB of JSON, nine
    tenths of a short conversation's request (more with MCP servers), and encoding them was ~55 µs of
    each call. The bytes are those the SDK would have written (its encoder's options, `tools` last).
    """

    def __init__(self) -> None:
        self._tools: list[ToolSchema] = []
        self._tools_json = ""

    def encode(self, request: dict[str, Any], tools: list[ToolSchema]) -> bytes:
        text = _dumps(request)
        if not tools:
            return text.encode()
        if tools != self._tools:  # compared by value (~3 µs): a schema changed in place is seen too
            self._tools = copy.deepcopy(tools)
            self._tools_json = _dumps([to_openai_tool(tool) for tool in tools])
        return f'{text[:-1]},"tools":{self._tools_json}}}'.encode()


def _dumps(value: Any) -> str:
    # openai's own request encoder (`openapi_dumps`) with the same options, minus its fallbacks for
    # dates and models, which a request built here never holds.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass
class _PendingCall:
    id: str
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def ready(self) -> ToolCallReady:
        return ToolCallReady(ToolCall(id=self.id, name=self.name, arguments=parse_arguments("".join(self.arguments))))


@dataclass
class _StreamedReply:
    """Accumulates one streamed answer: tool calls by index, usage, and why it ended."""

    calls: list[_PendingCall] = field(default_factory=list)
    slots: dict[int, int] = field(default_factory=dict)  # wire index → position in `calls`
    finish_reason: str | None = None
    refused: bool = False
    usage: Usage | None = None

    def absorb(self, chunk: dict[str, Any]) -> list[ProviderEvent]:
        """One streamed chunk, as the API's plain JSON (see `stream` for why not the SDK's model)."""
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            # Some servers repeat a running total on every chunk: the last one wins.
            self.usage = usage_of(usage)
        events: list[ProviderEvent] = []
        for choice in (chunk.get("choices") or [])[:1]:
            delta = choice.get("delta") or {}
            thinking = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(thinking, str) and thinking:
                events.append(ThinkingDelta(thinking))
            if content := delta.get("content"):
                events.append(TextDelta(content))
            if refusal := delta.get("refusal"):
                self.refused = True
                events.append(TextDelta(refusal))
            for position, call in enumerate(delta.get("tool_calls") or []):
                index = call.get("index")
                self._absorb_call(index if index is not None else position, call)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return events

    def _absorb_call(self, index: int, call: dict[str, Any]) -> None:
        slot = self.slots.get(index)
        pending = self.calls[slot] if slot is not None else None
        call_id = call.get("id")
        # A new id at a used index is a new call (some servers send every call at index 0).
        if pending is None or (call_id and call_id != pending.id and pending.name):
            pending = _PendingCall(id=call_id or f"call_{uuid.uuid4().hex[:12]}")
            self.slots[index] = len(self.calls)
            self.calls.append(pending)
        function = call.get("function") or {}
        if function.get("name") and not pending.name:
            pending.name = function["name"]
        if function.get("arguments"):
            pending.arguments.append(function["arguments"])

    def finish(self, provider: str) -> list[ProviderEvent]:
        if self.finish_reason is None:
            raise ProviderError(f"{provider}: stream ended before the model finished")
        events: list[ProviderEvent] = [pending.ready() for pending in self.calls]
        if self.usage is not None:
            events.append(self.usage)
        events.append(Finish(self._reason()))
        return events

    def _reason(self) -> FinishReason:
        if self.refused:
            return "refusal"
        reason = FINISH_REASONS.get(self.finish_reason or "", "end_turn")
        # Some compatible servers say "stop" even when the answer is tool calls.
        if reason == "end_turn" and self.calls:
            return "tool_use"
        return reason


def usage_of(usage: dict[str, Any]) -> Usage:
    """The API's usage object: cached tokens in `prompt_tokens_details` (OpenAI, DashScope, which also
    says what its explicit cache wrote) or as DeepSeek's `prompt_cache_hit_tokens`; reasoning tokens in
    `completion_tokens_details`."""
    prompt = usage.get("prompt_tokens_details") or {}
    completion = usage.get("completion_tokens_details") or {}
    return Usage(
        usage.get("prompt_tokens") or 0,
        usage.get("completion_tokens") or 0,
        cache_read_tokens=prompt.get("cached_tokens") or usage.get("prompt_cache_hit_tokens") or 0,
        cache_write_tokens=prompt.get("cache_creation_input_tokens") or 0,
        thought_tokens=completion.get("reasoning_tokens") or 0,
    )


def to_openai_tool(tool: ToolSchema) -> dict[str, Any]:
    parameters = tool.parameters or {"type": "object", "properties": {}}
    function = {"name": tool.name, "description": tool.description, "parameters": parameters}
    return {"type": "function", "function": function}


def to_openai_messages(system: str, history: list[Message]) -> list[dict[str, Any]]:
    """A tool message holds only text, and the tool messages answering one assistant message must follow
    it directly; so images that tools returned travel in one user message after the last of them."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    tool_images: list[dict[str, Any]] = []  # content parts of the tool results since the assistant message
    for message in history:
        if message.role != "tool" and tool_images:
            messages.append({"role": "user", "content": tool_images})
            tool_images = []
        if message.role == "user":
            messages.append({"role": "user", "content": _user_content(message)})
        elif message.role == "tool":
            messages.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": _tool_text(message)})
            tool_images += _tool_image_parts(message)
        else:
            messages.append(_assistant_message(message))
    if tool_images:
        messages.append({"role": "user", "content": tool_images})
    return messages


def _user_content(message: Message) -> str | list[dict[str, Any]]:
    """Plain text, or content parts when images are attached: each as a data URL, then the text."""
    if not message.images:
        return message.text
    parts = [_image_part(image) for image in message.images]
    if message.text:
        parts.append({"type": "text", "text": message.text})
    return parts


def _tool_text(message: Message) -> str:
    if message.images and not message.text:
        return "(the result is an image: it follows the tool results)"
    return message.text


def _tool_image_parts(message: Message) -> list[dict[str, Any]]:
    """The images of one tool result, after a text part naming the call they answer."""
    if not message.images:
        return []
    count = "an image" if len(message.images) == 1 else f"{len(message.images)} images"
    intro = f"The tool call {message.tool_call_id} ({message.tool_name}) returned {count}:"
    return [{"type": "text", "text": intro}, *(_image_part(image) for image in message.images)]


def _image_part(image: Image) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"}}


def _assistant_message(message: Message) -> dict[str, Any]:
    entry: dict[str, Any] = {"role": "assistant", "content": message.text or (None if message.tool_calls else "")}
    if message.thinking:
        # DeepSeek and Qwen thinking models want their reasoning back, notably around tool calls.
        entry["reasoning_content"] = message.thinking
    if message.tool_calls:
        entry["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for call in message.tool_calls
        ]
    return entry
