"""A scripted Anthropic Messages server on real HTTP, for tests: POST /v1/messages.

Same API and Reply keys as `ScriptedOpenAI` (see tests/fakes/openai_server.py), plus `signature`
(the thinking block's signature; one is made up when absent). `finish_reason` takes either API's
words: stop/end_turn, tool_calls/tool_use, length/max_tokens, content_filter/refusal. `usage` takes
prompt_tokens/completion_tokens (or input_tokens/output_tokens).

`url` is the server root (no /v1): the anthropic SDK appends /v1/messages itself. Without a scripted
`usage`, the prompt cache is simulated at the request's `cache_control` breakpoints
(tests/fakes/prompt_cache.py) and reported as Anthropic does: `input_tokens` without the cached parts.
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.openai_server import (
    DanglingToolCalls,
    Reply,
    ScriptedServer,
    _Handler,
    arguments_json,
    estimate_tokens,
    pieces,
)
from tests.fakes.prompt_cache import BreakpointCache, Cached

STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens", "content_filter": "refusal"}


class ScriptedAnthropic(ScriptedServer):
    url_suffix = ""

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = {
            400: "invalid_request_error",
            401: "authentication_error",
            403: "permission_error",
            404: "not_found_error",
            429: "rate_limit_error",
            529: "overloaded_error",
        }.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    api_path = "/v1/messages"
    prompt_cache = BreakpointCache

    def check_history(self, messages: list[dict[str, Any]]) -> None:
        check_tool_results(messages)

    def complete(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        return self._message(body, reply, self._blocks(reply))

    def stream(self, handler: _Handler, body: dict[str, Any], reply: Reply) -> None:
        def event(kind: str, **payload: Any) -> bytes:
            return f"event: {kind}\ndata: {json.dumps({'type': kind, **payload})}\n\n".encode()

        size = int(reply.get("chunk_chars", 20))
        usage = self._usage(body, reply)
        start = self._message(body, reply, [])
        start.update(stop_reason=None, usage={**usage, "output_tokens": 1})
        events = [event("message_start", message=start), event("ping")]
        for index, block in enumerate(self._blocks(reply)):
            kind = block["type"]
            if kind == "thinking":
                opening = {"type": "thinking", "thinking": "", "signature": ""}
                deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces(block["thinking"], size)]
                deltas.append({"type": "signature_delta", "signature": block["signature"]})
            elif kind == "text":
                opening = {"type": "text", "text": ""}
                deltas = [{"type": "text_delta", "text": p} for p in pieces(block["text"], size)]
            else:
                opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                raw = block["raw_input"]
                deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(raw, max(1, len(raw) // 3))]
            events.append(event("content_block_start", index=index, content_block=opening))
            events += [event("content_block_delta", index=index, delta=d) for d in deltas]
            events.append(event("content_block_stop", index=index))
        tail = [
            event(
                "message_delta",
                delta={"stop_reason": self._stop_reason(reply), "stop_sequence": None},
                usage={"output_tokens": usage["output_tokens"]},
            ),
            event("message_stop"),
        ]
        first_delta = next((i for i, e in enumerate(events) if e.startswith(b"event: content_block_delta")), 0)
        self.send_events(handler, reply, events, tail, first_content=first_delta)

    def _blocks(self, reply: Reply) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if reply.get("thinking"):
            signature = reply.get("signature") or self.new_id("sig-")
            blocks.append({"type": "thinking", "thinking": reply["thinking"], "signature": signature})
        if reply.get("text"):
            blocks.append({"type": "text", "text": reply["text"]})
        for call in reply.get("tool_calls", []):
            raw = arguments_json(call.get("arguments", {}))
            try:
                parsed = json.loads(raw)
            except ValueError:
                parsed = {}
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call.get("id") or self.new_id("toolu_"),
                    "name": call["name"],
                    "input": parsed,
                    "raw_input": raw,
                }
            )
        return blocks

    def _message(self, body: dict[str, Any], reply: Reply, blocks: list[dict[str, Any]]) -> dict[str, Any]:
        content = [{k: v for k, v in b.items() if k != "raw_input"} for b in blocks]
        return {
            "id": self.new_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "scripted-model"),
            "content": content,
            "stop_reason": self._stop_reason(reply),
            "stop_sequence": None,
            "usage": self._usage(body, reply),
        }

    @staticmethod
    def _stop_reason(reply: Reply) -> str:
        reason = reply.get("finish_reason") or ("tool_use" if reply.get("tool_calls") else "end_turn")
        return STOP_REASONS.get(reason, reason)

    @staticmethod
    def _usage(body: dict[str, Any], reply: Reply) -> dict[str, int]:
        usage = reply.get("usage") or {}
        produced = [reply.get("text", ""), reply.get("thinking", ""), reply.get("tool_calls", [])]
        output = int(usage.get("output_tokens", usage.get("completion_tokens", estimate_tokens(produced))))
        if usage.get("input_tokens", usage.get("prompt_tokens")) is not None:
            return {"input_tokens": int(usage.get("input_tokens", usage.get("prompt_tokens"))), "output_tokens": output}
        cached: Cached = reply.get("cached") or Cached(1, 0, 0)
        return {
            "input_tokens": max(0, cached.prompt_tokens - cached.read - cached.written),
            "cache_read_input_tokens": cached.read,
            "cache_creation_input_tokens": cached.written,
            "output_tokens": output,
        }


def _blocks_of(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind]


def check_tool_results(messages: list[dict[str, Any]]) -> None:
    """Raise DanglingToolCalls like the real API: each tool_use must be answered by a tool_result in
    the very next (user) message, and each tool_result must answer a tool_use just before it."""
    for index, message in enumerate(messages):
        if message.get("role") != "user":
            continue
        results = {b.get("tool_use_id") for b in _blocks_of(message, "tool_result")}
        previous = messages[index - 1] if index else {}
        uses = {b.get("id") for b in _blocks_of(previous, "tool_use")} if previous.get("role") == "assistant" else set()
        if results - uses:
            raise DanglingToolCalls(
                f"messages.{index}: unexpected `tool_use_id` found in `tool_result` blocks: "
                f"{', '.join(sorted(str(r) for r in results - uses))}. Each `tool_result` block must have a "
                "corresponding `tool_use` block in the previous message."
            )
    for index, message in enumerate(messages):
        uses = {b.get("id") for b in _blocks_of(message, "tool_use")} if message.get("role") == "assistant" else set()
        if not uses:
            continue
        following = messages[index + 1] if index + 1 < len(messages) else None
        answered = {b.get("tool_use_id") for b in _blocks_of(following, "tool_result")} if following else set()
        if following is None or following.get("role") != "user" or uses - answered:
            missing = ", ".join(sorted(str(u) for u in uses - answered))
            raise DanglingToolCalls(
                f"messages.{index + 1}: `tool_use` ids were found without `tool_result` blocks immediately "
                f"after: {missing}. Each `tool_use` block must have a corresponding `tool_result` block in the "
                "next message."
            )
