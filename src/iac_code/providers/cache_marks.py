"""Prompt-cache breakpoints: where a request marks the end of a prefix the provider should cache.

Anthropic caches nothing unless asked: a `cache_control` block marks the end of a cached prefix (in the
order tools → system → messages), at most four per request. We spend them on what stays put and on the
moving end of the conversation:

1. the last tool (the tool list alone, for when the system prompt changes: a mode switch);
2. the system prompt (tools and system prompt);
3. the last block of the last message (everything so far: the next call reads it back);
4. the last block of the message before the last assistant message: the end of the previous call's
   request, where it put its third mark, so the previous call's cache is hit however many blocks the
   last round added (a cache is only looked up within 20 blocks before a mark).

DashScope's OpenAI-compatible API takes the same `cache_control` on message content parts for its
explicit cache (also at most four); there the system prompt and the same two moving marks are used.
"""

from __future__ import annotations

from typing import Any, Literal

CacheTtl = Literal["5m", "1h"]
# The 1-hour TTL was announced as a beta; the header is harmless where it is no longer needed.
EXTENDED_TTL_BETA = "extended-cache-ttl-2025-04-11"


def cache_control(ttl: CacheTtl) -> dict[str, str]:
    return {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}


def mark_anthropic(request: dict[str, Any], ttl: CacheTtl) -> None:
    """Mark `request` (a Messages API body: `tools`, `system` as text, `messages`) in place."""
    mark = cache_control(ttl)
    if tools := request.get("tools"):
        tools[-1] = {**tools[-1], "cache_control": mark}
    if system := request.get("system"):
        request["system"] = [{"type": "text", "text": system, "cache_control": mark}]
    _mark_moving_end(request["messages"], mark)


def mark_openai(messages: list[dict[str, Any]], ttl: CacheTtl = "5m") -> None:
    """Mark chat-completions `messages` in place: the system message, and the moving end.

    A marked message's string content becomes one text part (the form the marks need)."""
    mark = cache_control(ttl)
    if messages and messages[0]["role"] == "system":
        _mark_last_part(messages[0], mark)
    _mark_moving_end(messages, mark)


def _mark_moving_end(messages: list[dict[str, Any]], mark: dict[str, str]) -> None:
    """The last message, and the last one the previous call sent (just before its answer)."""
    if not messages or messages[-1]["role"] == "assistant":
        return
    _mark_last_part(messages[-1], mark)
    answers = [index for index, message in enumerate(messages) if message["role"] == "assistant"]
    if answers and answers[-1] > 0 and messages[answers[-1] - 1]["role"] != "system":
        _mark_last_part(messages[answers[-1] - 1], mark)


def _mark_last_part(message: dict[str, Any], mark: dict[str, str]) -> None:
    content = message.get("content")
    if isinstance(content, str):
        if content:
            message["content"] = [{"type": "text", "text": content, "cache_control": mark}]
    elif isinstance(content, list) and content:
        content[-1] = {**content[-1], "cache_control": mark}
