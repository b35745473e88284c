"""A sub-agent's turn, seen from its parent's `agent` call.

The user follows the sub-agent inside that call: its tool calls, each with its state, are what the call
shows (`ToolProgress` with `SubagentSteps`), updated as they run and end. A call of the sub-agent that
needs permission is also shown on its own in the parent's stream, before its request (a client is
never asked about a call it has not seen); its id is namespaced under the parent call's (`<parent
id>/<child id>`), since the two conversations number their calls independently. The model gets the
sub-agent's final answer: its text after its last tool call.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import replace

from iac_code.agent.events import (
    ElicitRequest,
    ErrorReport,
    Event,
    PermissionRequest,
    Step,
    StepState,
    SubagentSteps,
    TextDelta,
    ToolFinished,
    ToolProgress,
    ToolRunning,
    ToolUseStart,
)
from iac_code.messages import ToolCall
from iac_code.tools.base import ToolError, ToolResult

Emit = Callable[[Event], Awaitable[None]]

NO_ANSWER = "(the sub-agent gave no answer)"
STOPPED = "Cancelled: the sub-agent stopped before this tool call finished."


class _Steps:
    """The sub-agent's tool calls in order, with their state."""

    def __init__(self) -> None:
        self._titles: dict[str, str] = {}
        self._states: dict[str, StepState] = {}

    def start(self, call_id: str, title: str) -> None:
        self._titles[call_id] = title
        self._states[call_id] = "pending"

    def mark(self, call_id: str, state: StepState) -> None:
        if call_id in self._titles:
            self._states[call_id] = state

    def now(self) -> SubagentSteps:
        return SubagentSteps(tuple(Step(title, self._states[call_id]) for call_id, title in self._titles.items()))


async def follow_subagent(events: AsyncGenerator[Event, None], parent: ToolCall, emit: Emit) -> str:
    """Consume a sub-agent's turn (`events`) inside the parent call `parent`; return its final answer."""
    answer: list[str] = []
    steps = _Steps()
    starts: dict[str, ToolUseStart] = {}
    shown: dict[str, ToolCall] = {}  # the child's calls shown on their own and not finished, by child id

    async def show(call_id: str, state: StepState) -> None:
        steps.mark(call_id, state)
        await emit(ToolProgress(parent, steps.now()))

    try:
        async with contextlib.aclosing(events):
            async for event in events:
                if isinstance(event, TextDelta):
                    answer.append(event.text)
                elif isinstance(event, ErrorReport):
                    raise ToolError(f"sub-agent failed: {event.message}")
                elif isinstance(event, ToolUseStart):
                    answer.clear()  # only the text after its last tool call is the final answer
                    starts[event.call.id] = event
                    steps.start(event.call.id, event.title)
                    await show(event.call.id, "pending")
                elif isinstance(event, PermissionRequest):
                    alone = shown[event.call.id] = _namespaced(parent, event.call)
                    await emit(replace(starts[event.call.id], call=alone))
                    await emit(replace(event, call=alone))  # the same answer future: the child waits on it
                elif isinstance(event, ElicitRequest):  # an MCP server's question: asked within the parent call
                    await emit(replace(event, call=parent))
                elif isinstance(event, ToolRunning):
                    await show(event.call.id, "in_progress")
                    if event.call.id in shown:
                        await emit(ToolRunning(shown[event.call.id]))
                elif isinstance(event, ToolFinished):
                    await show(event.call.id, "failed" if event.result.is_error else "completed")
                    if event.call.id in shown:
                        await emit(ToolFinished(shown.pop(event.call.id), event.result))
    finally:
        for call in shown.values():  # stopped mid-way: nothing the client was shown stays pending
            stopped = ToolResult(STOPPED, is_error=True, raw_output={"reason": "cancelled"})
            await emit(ToolFinished(call, stopped.record(call)))
    return "".join(answer).strip() or NO_ANSWER


def _namespaced(parent: ToolCall, call: ToolCall) -> ToolCall:
    return replace(call, id=f"{parent.id}/{call.id}")
