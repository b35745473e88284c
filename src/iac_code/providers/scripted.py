"""A provider that plays a script of replies with no network: the offline demo, and integration tests.

A reply is a dict with the fake servers' keys (tests/fakes/openai_server.py): `text`, `thinking`,
`tool_calls` [{"name", "arguments": dict|str, "id"?}], `finish_reason` (either API's word),
`usage` {"prompt_tokens", "completion_tokens"}, `chunk_chars` (size of the streamed pieces, default
20), plus `delay` (seconds between events) and `error`
(raise ProviderError with that message instead of answering). One reply per model call; the script
starts over when it runs out.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from iac_code.messages import Message, ToolCall
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

Reply = dict[str, Any]

FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "end_turn",
    "end_turn": "end_turn",
    "tool_calls": "tool_use",
    "tool_use": "tool_use",
    "length": "max_tokens",
    "max_tokens": "max_tokens",
    "content_filter": "refusal",
    "refusal": "refusal",
}
CHUNK_CHARS = 20


class ScriptedProvider:
    def __init__(self, script: list[Reply], name: str = "scripted", model: str = "scripted", notice: str = "") -> None:
        if not script:
            raise ValueError("a script needs at least one reply")
        self.name = name
        self.model = model
        self.context_window = 128_000
        self.notice = notice
        self.script = script
        self.calls = 0  # model calls played so far

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> ScriptedProvider:
        """Load `{"replies": [...]}`. Raises ValueError (with the path) when the file is unusable."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"cannot read script {path}: {exc}") from None
        replies = data.get("replies") if isinstance(data, dict) else None
        if not isinstance(replies, list) or not replies or not all(isinstance(r, dict) for r in replies):
            raise ValueError(f"script {path} must be a JSON object with a non-empty list of reply objects in 'replies'")
        return cls(replies, **kwargs)

    async def stream(
        self, system: str, history: list[Message], tools: list[ToolSchema], *, max_tokens: int, cache_key: str = ""
    ) -> AsyncIterator[ProviderEvent]:
        reply = self.script[self.calls % len(self.script)]
        self.calls += 1
        if reply.get("error"):
            raise ProviderError(str(reply["error"]))
        delay = float(reply.get("delay", 0))
        for event in self._events(reply, history, system):
            if delay:
                await asyncio.sleep(delay)
            yield event

    def _events(self, reply: Reply, history: list[Message], system: str) -> Iterator[ProviderEvent]:
        size = int(reply.get("chunk_chars", CHUNK_CHARS))
        for piece in _pieces(reply.get("thinking", ""), size):
            yield ThinkingDelta(piece)
        for piece in _pieces(self._text(reply), size):
            yield TextDelta(piece)
        calls = [_tool_call(spec) for spec in reply.get("tool_calls", [])]
        for call in calls:
            yield ToolCallReady(call)
        yield _usage(reply, history, system)
        reason = reply.get("finish_reason") or ("tool_use" if calls else "end_turn")
        yield Finish(FINISH_REASONS.get(reason, "end_turn"))

    def _text(self, reply: Reply) -> str:
        text = str(reply.get("text", ""))
        if not self.notice:
            return text
        return f"{self.notice}\n\n{text}" if text else self.notice


def _pieces(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


def _tool_call(spec: dict[str, Any]) -> ToolCall:
    arguments = spec.get("arguments", {})
    if isinstance(arguments, str):
        arguments = _parse_json_object(arguments)
    # Random ids: a replayed script must not reuse an id already answered in a reloaded session.
    call_id = spec.get("id") or f"call_{uuid.uuid4().hex[:12]}"
    return ToolCall(id=call_id, name=spec["name"], arguments=arguments)


def _parse_json_object(raw: str) -> dict[str, Any]:
    try:
        parsed = json.loads(raw)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _usage(reply: Reply, history: list[Message], system: str) -> Usage:
    usage = reply.get("usage") or {}
    prompt_chars = len(system) + sum(len(m.text) + len(m.thinking) for m in history)
    produced = [reply.get("text", ""), reply.get("thinking", ""), json.dumps(reply.get("tool_calls", []))]
    produced_chars = sum(len(part) for part in produced)
    return Usage(
        input_tokens=int(usage.get("prompt_tokens", usage.get("input_tokens", max(1, prompt_chars // 4)))),
        output_tokens=int(usage.get("completion_tokens", usage.get("output_tokens", max(1, produced_chars // 4)))),
    )
