"""Prompt caching as the real APIs do it, simulated for the scripted servers (tokens: 4 characters each).

- `PrefixCache` (OpenAI-style, automatic): a prompt (tools, then messages, as JSON) whose first ≥ 1,024
  tokens equal an earlier prompt's reads the common prefix from the cache, in steps of 128 tokens.
- `BreakpointCache` (Anthropic, explicit): a request is a list of blocks (tools, system, each message's
  content blocks); a block with `cache_control` ends a prefix that is written to the cache (≥ 1,024 tokens).
  A later request reads the longest cached prefix it starts with that ends at most 20 blocks before one
  of its own breakpoints, and writes the rest up to its last breakpoint.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any, Protocol

CHARS_PER_TOKEN = 4
MIN_CACHED_TOKENS = 1024
OPENAI_STEP = 128
LOOKBACK_BLOCKS = 20


@dataclass(frozen=True)
class Cached:
    prompt_tokens: int  # all of the prompt
    read: int  # of which read from the cache
    written: int  # of which written to it


def tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN


class PromptCache(Protocol):
    def use(self, body: dict[str, Any]) -> Cached: ...


class PrefixCache:
    def __init__(self) -> None:
        self._prompts: list[str] = []
        self._lock = threading.Lock()

    def use(self, body: dict[str, Any]) -> Cached:
        prompt = json.dumps(body.get("tools") or []) + json.dumps(body.get("messages") or [])
        with self._lock:
            common = max((_common_prefix(prompt, earlier) for earlier in self._prompts), default=0)
            self._prompts.append(prompt)
        read = tokens(prompt[:common]) // OPENAI_STEP * OPENAI_STEP
        return Cached(max(1, tokens(prompt)), read if read >= MIN_CACHED_TOKENS else 0, 0)


class BreakpointCache:
    def __init__(self) -> None:
        self._prefixes: dict[tuple[str, ...], int] = {}  # the blocks of a cached prefix → its tokens
        self._lock = threading.Lock()

    def use(self, body: dict[str, Any]) -> Cached:
        blocks, marks = _blocks(body)
        sizes = [tokens(block) for block in blocks]
        total = max(1, sum(sizes))
        if not marks:
            return Cached(total, 0, 0)
        with self._lock:
            hit = max(
                (
                    length
                    for length in range(len(blocks), 0, -1)
                    if tuple(blocks[:length]) in self._prefixes
                    and any(length - 1 <= mark < length - 1 + LOOKBACK_BLOCKS for mark in marks)
                ),
                default=0,
            )
            end = marks[-1] + 1
            read = sum(sizes[:hit])
            written = sum(sizes[hit:end]) if end > hit and sum(sizes[:end]) >= MIN_CACHED_TOKENS else 0
            for mark in marks:
                if sum(sizes[: mark + 1]) >= MIN_CACHED_TOKENS:
                    self._prefixes[tuple(blocks[: mark + 1])] = sum(sizes[: mark + 1])
        return Cached(total, read, written)


def _blocks(body: dict[str, Any]) -> tuple[list[str], list[int]]:
    """The request's blocks in the order the API reads them (each as JSON without its mark), and the
    indexes of the marked ones."""
    items: list[tuple[str, dict[str, Any]]] = [("tool", tool) for tool in body.get("tools") or []]
    system = body.get("system") or []
    items += [
        ("system", block) for block in ([{"type": "text", "text": system}] if isinstance(system, str) else system)
    ]
    for message in body.get("messages") or []:
        content = message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        items += [(message["role"], part) for part in parts]
    blocks, marks = [], []
    for index, (where, block) in enumerate(items):
        if "cache_control" in block:
            marks.append(index)
        unmarked = {key: value for key, value in block.items() if key != "cache_control"}
        blocks.append(where + json.dumps(unmarked))
    return blocks, marks


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    low, high = 0, n  # binary search on equal prefixes: slices compare in C
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low
