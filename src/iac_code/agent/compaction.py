"""Context size estimates and compaction: summarise older turns, keep the latest whole.

No tokenizer: they download vocabularies at run time, and these machines are offline. The estimate is
the provider's own count for the last call plus ~4 characters per token for what was added since.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from iac_code.messages import Message, Usage, context_messages
from iac_code.providers.base import ModelProvider, ProviderError, TextDelta

OnText = Callable[[str], Awaitable[None]]

CHARS_PER_TOKEN = 4
TOOL_TEXT_IN_TRANSCRIPT = 2_000  # chars of each tool call / result the summariser sees
KEEP_TURNS = 2  # user turns kept whole after a compaction
# An image costs tokens by its pixels, which are not decoded here: count each at the most a provider
# charges after scaling it down (Anthropic: ~1,600 tokens), so images never make the estimate too low.
IMAGE_CHARS = 1_600 * CHARS_PER_TOKEN

SUMMARY_PREFIX = "[Conversation summary]\n"
SUMMARISER = """\
You summarise a conversation between a user and an infrastructure-as-code assistant so the assistant can
continue the work without the full transcript. Keep: the user's goals and constraints, decisions taken,
files created or changed (exact paths, resource names, provider versions), commands run and their
outcomes, errors still open, and what was about to happen next. Be factual and compact; no preamble."""


def estimate_chars(messages: list[Message]) -> int:
    total = 0
    for m in messages:
        total += len(m.text) + len(m.thinking) + 16 + IMAGE_CHARS * len(m.images)
        for call in m.tool_calls:
            total += len(call.name) + len(json.dumps(call.arguments)) + 16
    return total


@dataclass
class ContextMeter:
    """Tracks how full the context is: the last provider-reported prompt size plus an estimate since."""

    reported_tokens: int = 0
    reported_chars: int = 0  # size (in estimate_chars) of the context when the provider reported

    def record(self, input_tokens: int, context: list[Message], fixed_chars: int) -> None:
        self.reported_tokens = input_tokens
        self.reported_chars = estimate_chars(context) + fixed_chars

    def estimate(self, context: list[Message], fixed_chars: int) -> int:
        chars = estimate_chars(context) + fixed_chars
        if not self.reported_tokens or chars < self.reported_chars:
            return chars // CHARS_PER_TOKEN  # nothing reported yet, or the context shrank (compaction)
        return self.reported_tokens + (chars - self.reported_chars) // CHARS_PER_TOKEN


def split_for_compaction(history: list[Message], keep_turns: int = KEEP_TURNS) -> tuple[list[Message], int]:
    """The context messages to summarise, and how many at the end of `history` to keep whole.

    The kept tail starts at a user prompt, so no tool call is ever separated from its result. Only turns
    after the latest summary can be kept (a summary's own kept turns are summarised again). With no more
    turns than `keep_turns`, only the latest is kept. Nothing to summarise → ([], n).
    """
    context = context_messages(history)
    first_new = len(context) - _messages_after_summary(history)
    starts = [i for i in range(first_new, len(context)) if context[i].role == "user"]
    if not starts:
        return [], len(context)
    keep_from = starts[-keep_turns] if len(starts) > keep_turns else starts[-1]
    return context[:keep_from], len(context) - keep_from


def _messages_after_summary(history: list[Message]) -> int:
    for index in range(len(history) - 1, -1, -1):
        if history[index].summary:
            return len(history) - index - 1
    return len(history)


def transcript(messages: list[Message]) -> str:
    lines: list[str] = []
    for m in messages:
        if m.role == "tool":
            lines.append(f"TOOL RESULT ({m.tool_name}): {_clip(m.text)}")
            continue
        if m.text:
            lines.append(f"{'SUMMARY' if m.summary else m.role.upper()}: {m.text}")
        for call in m.tool_calls:
            lines.append(f"TOOL CALL {call.name}: {_clip(json.dumps(call.arguments))}")
    return "\n\n".join(lines)


def _clip(text: str) -> str:
    if len(text) <= TOOL_TEXT_IN_TRANSCRIPT:
        return text
    return text[:TOOL_TEXT_IN_TRANSCRIPT] + f" […{len(text) - TOOL_TEXT_IN_TRANSCRIPT} chars cut]"


async def summarise(
    provider: ModelProvider, old: list[Message], *, max_tokens: int, on_text: OnText | None = None
) -> tuple[str, Usage]:
    """Ask the model for a summary of `old`, and say what the call used; `on_text` hears each piece as it
    comes. Raises ProviderError."""
    text = transcript(old)
    # The transcript itself must fit: keep its head and tail if the conversation is enormous.
    budget = provider.context_window * CHARS_PER_TOKEN // 2
    if len(text) > budget:
        text = text[: budget // 2] + "\n\n[… middle of the conversation omitted …]\n\n" + text[-budget // 2 :]
    request = [Message(role="user", text=f"Summarise this conversation:\n\n{text}")]
    parts: list[str] = []
    usage = Usage(0, 0)
    async for event in provider.stream(SUMMARISER, request, [], max_tokens=max_tokens):
        if isinstance(event, TextDelta):
            parts.append(event.text)
            if on_text is not None:
                await on_text(event.text)
        elif isinstance(event, Usage):
            usage = event
    summary = "".join(parts).strip()
    if not summary:
        raise ProviderError("the model returned an empty summary")
    return summary, usage
