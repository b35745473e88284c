"""What the agent loop yields. Transports turn these into their own output (ACP updates, stdout)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from iac_code.messages import ToolCall
from iac_code.providers.base import TextDelta, ThinkingDelta
from iac_code.tools.base import Category, Kind, ToolResult

StopReason = Literal["end_turn", "max_turn_requests", "max_tokens", "refusal", "cancelled"]


@dataclass
class ToolUseStart:
    """The model asked for a tool; it has not run yet (it may still need permission)."""

    call: ToolCall
    title: str
    kind: Kind
    category: Category
    locations: list[str]


@dataclass
class ToolRunning:
    """Permission granted (or not needed); the tool is running now."""

    call: ToolCall


@dataclass
class ToolFinished:
    call: ToolCall
    result: ToolResult  # result.is_error → the ACP status is "failed"


@dataclass
class Compaction:
    message: str  # human-readable: what was compacted, or why it failed


@dataclass
class UsageReport:
    """After each model call: tokens of that call, and how full the context is."""

    input_tokens: int
    output_tokens: int
    context_used: int
    context_size: int


@dataclass
class ErrorReport:
    message: str  # safe to show: no key material, no stack trace


@dataclass
class TurnEnd:
    stop_reason: StopReason
    input_tokens: int  # summed over the turn's model calls
    output_tokens: int


Event = (
    TextDelta
    | ThinkingDelta
    | ToolUseStart
    | ToolRunning
    | ToolFinished
    | Compaction
    | UsageReport
    | ErrorReport
    | TurnEnd
)

__all__ = [
    "Compaction",
    "ErrorReport",
    "Event",
    "StopReason",
    "TextDelta",
    "ThinkingDelta",
    "ToolFinished",
    "ToolRunning",
    "ToolUseStart",
    "TurnEnd",
    "UsageReport",
]
