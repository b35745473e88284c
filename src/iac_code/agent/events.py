"""What the agent loop yields. Transports turn these into their own output (ACP updates, stdout).

Events carry neutral data (no protocol's shapes): acp/presenter.py and acp/updates.py make them ACP.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Literal

from iac_code.agent.policy import Choice, OptionKind
from iac_code.agent.spend import Cost
from iac_code.messages import Message, ToolCall, Usage
from iac_code.providers.base import TextDelta, ThinkingDelta
from iac_code.tools.base import AccessDetails, Category, Kind, Terminal
from iac_code.tools.questions import Answer, Form, Link

# ACP's five, and "error": a model call failed (or a bug stopped the turn) after an ErrorReport said why. ACP v1
# has no such reason: its face answers the prompt with a JSON-RPC error instead (acp/face.py); headless exits 1.
StopReason = Literal["end_turn", "max_turn_requests", "max_tokens", "refusal", "cancelled", "error"]


@dataclass
class ToolUseStart:
    """The model asked for a tool; it has not run yet (it may still need permission)."""

    call: ToolCall
    title: str
    kind: Kind
    category: Category
    locations: list[str]


@dataclass
class PermissionRequest:
    """The call needs the user's answer before it runs. The loop waits on `answer`, which whoever consumes
    the turn's events resolves; it comes after the call's ToolUseStart in the same stream, so a client is
    never asked about a call it has not seen. A sub-agent's requests come through its parent's stream."""

    call: ToolCall
    title: str
    kind: Kind
    locations: list[str]
    options: tuple[OptionKind, ...]
    infrastructure_change: bool
    answer: asyncio.Future[Choice]
    # What an "always" answer is remembered for: the tool's name, or what a running call asked about
    # (ToolContext.request_access), e.g. "iac_check:terraform-validate".
    subject: str
    # What the question shows beside its title (a reviewed plan and its summary), when it shows more.
    details: AccessDetails | None = None

    def resolve(self, choice: Choice) -> None:
        if not self.answer.done():  # the turn may have been cancelled meanwhile
            self.answer.set_result(choice)


@dataclass
class ElicitRequest:
    """A running call asks the user a structured question (tools/questions.py); like a PermissionRequest,
    whoever consumes the events resolves `answer`, and it comes after the call's ToolRunning."""

    call: ToolCall
    question: Form | Link
    answer: asyncio.Future[Answer]

    def resolve(self, answer: Answer) -> None:
        if not self.answer.done():  # the turn may have been cancelled meanwhile
            self.answer.set_result(answer)


@dataclass
class ToolRunning:
    """Permission granted (or not needed); the tool is running now."""

    call: ToolCall


StepState = Literal["pending", "in_progress", "completed", "failed"]


@dataclass(frozen=True)
class Step:
    title: str
    state: StepState


@dataclass(frozen=True)
class SubagentSteps:
    """A sub-agent's tool calls so far, in order, each with its state."""

    steps: tuple[Step, ...]


@dataclass
class ToolProgress:
    """A running call shows something new, which replaces what it showed so far: the client terminal its
    command runs in (the client shows the live output), or a sub-agent's steps."""

    call: ToolCall
    progress: Terminal | SubagentSteps


@dataclass
class ToolFinished:
    """The call's result, as the history keeps it (messages.tool_result): the model's text, `is_error`
    (the call failed) and `shown`, what the client is shown; a replay shows the same record."""

    call: ToolCall
    result: Message


NoticeSeverity = Literal["info", "warning", "error"]  # of what a session tells the user beside the conversation
CompactionStage = Literal["started", "summary", "completed", "failed", "cancelled", "skipped"]


@dataclass
class Compaction:
    """A compaction of the conversation, told as it goes, all under one `id`: `started`, each piece of the
    `summary` as the model writes it, then `completed` (`summary` the whole, as stored), `failed` or
    `cancelled`. `skipped` alone when there was nothing to compact (a /compact too early)."""

    message: str  # human-readable: what was compacted, or why it failed ("" while it runs)
    id: str = ""
    stage: CompactionStage = "completed"
    summary: str = ""


@dataclass
class UsageReport:
    """After each model call: tokens of that call, how full the context is, and the session's cost so far
    (None when some call's price is unknown)."""

    input_tokens: int
    output_tokens: int
    context_used: int
    context_size: int
    cost: Cost | None = None


# Why a turn failed: the provider refused the key ("auth": HTTP 401/403), the model call failed for good
# otherwise ("model"), or a bug stopped the turn ("internal").
ErrorKind = Literal["auth", "model", "internal"]


@dataclass
class ErrorReport:
    message: str  # safe to show: no key material, no stack trace
    kind: ErrorKind = "internal"


@dataclass
class TurnEnd:
    stop_reason: StopReason
    usage: Usage = field(default_factory=lambda: Usage(0, 0))  # summed over the turn's model calls
    error: ErrorReport | None = None  # with stop_reason "error": what failed


Event = (
    TextDelta
    | ThinkingDelta
    | ToolUseStart
    | PermissionRequest
    | ElicitRequest
    | ToolRunning
    | ToolProgress
    | ToolFinished
    | Compaction
    | UsageReport
    | ErrorReport
    | TurnEnd
)

__all__ = [
    "Compaction",
    "ElicitRequest",
    "ErrorKind",
    "ErrorReport",
    "Event",
    "PermissionRequest",
    "Step",
    "StepState",
    "StopReason",
    "SubagentSteps",
    "TextDelta",
    "ThinkingDelta",
    "ToolFinished",
    "ToolProgress",
    "ToolRunning",
    "ToolUseStart",
    "TurnEnd",
    "UsageReport",
]
