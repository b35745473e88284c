"""One step's tool calls, from their announcement to their results in the history.

Each call is announced (`ToolUseStart`), then judged by the session's Judge, run, and answered: its
result enters the history and is shown (`ToolFinished`). Consecutive read calls run together (at most
MAX_PARALLEL_READS at once) once each was judged; any other call runs alone, in order. Reads are
judged like any call: a remembered "always reject", or a rule that asks, holds for them too. A user who
answers a permission request with `cancelled` stops the whole turn (`TurnCancelled`, which the loop
handles).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from iac_code.agent.audit import NoRecording, Recorder
from iac_code.agent.events import (
    ElicitRequest,
    Event,
    PermissionRequest,
    ToolFinished,
    ToolProgress,
    ToolRunning,
    ToolUseStart,
)
from iac_code.agent.policy import Ask, Choice, Judge, JudgedCall, Refuse, Verdict, answered, shim_refusal, unrecorded
from iac_code.agent.rule_patterns import opened_path
from iac_code.agent.secrets import redacted_result
from iac_code.agent.subagent import follow_subagent
from iac_code.messages import Message, ToolCall
from iac_code.observability.record import permission_decided, tool_call, tool_call_not_run
from iac_code.redaction import Redactor, Shapes
from iac_code.sessions.audit import AuditUnavailable
from iac_code.tools.backends import WorkspaceIO
from iac_code.tools.base import (
    Access,
    AccessDetails,
    Category,
    RunSubagent,
    Terminal,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
)
from iac_code.tools.describe import describe_call
from iac_code.tools.questions import Answer, Form, Link

log = logging.getLogger(__name__)

Emit = Callable[[Event], Awaitable[None]]

MAX_PARALLEL_READS = 8


def announced_result(result: ToolResult, call: ToolCall, announced: dict[str, ToolUseStart]) -> Message:
    """The call's result message, with its title and kind as the consumer was shown them."""
    start = announced.get(call.id)
    return result.record(call, title=start.title, kind=start.kind) if start else result.record(call)


class TurnCancelled(Exception):
    """The user answered a permission request with `cancelled`: the whole turn stops."""


@dataclass(frozen=True)
class TurnTools:
    """What the calls of one step may use, as the loop has it now."""

    tools: dict[str, Tool]
    workspace: Path
    io: WorkspaceIO
    judge: Judge
    append: Callable[[Message], None]  # into the history (and the store)
    # a sub-agent's turn for a prompt; None inside a sub-agent (delegation stops at one level)
    subagent: Callable[[str], AsyncGenerator[Event, None]] | None
    recorder: Recorder = field(default_factory=NoRecording)  # the audit trail of decisions (agent/audit.py)
    # the session's secrets, out of every result (agent/secrets.py); by default only the credential shapes
    redactor: Redactor = field(default_factory=lambda: Redactor([Shapes()]))


class ToolCalls:
    """Runs one step's calls. `announced` is the turn's record of the calls the consumer was shown, by id
    (the loop reads it to end the calls a cancellation cut short)."""

    def __init__(self, turn: TurnTools, announced: dict[str, ToolUseStart], emit: Emit) -> None:
        self._turn = turn
        self._announced = announced
        self._emit = emit
        self._opened: dict[str, Path] = {}  # a file tool's path as it was judged, by call id (ToolContext.judged_path)
        self.ends_turn = False  # a call asked the user in plain text (ToolResult.ends_turn)

    async def run(self, calls: list[ToolCall]) -> None:
        ctx = ToolContext(workspace=self._turn.workspace, io=self._turn.io)
        starts = {call.id: self._describe(call, ctx) for call in calls}
        for start in starts.values():
            await self._emit(start)
            self._announced[start.call.id] = start
        # Every call is judged first. Consecutive read calls that may run then run together; any other
        # call runs alone, in order, once allowed.
        reads: list[ToolCall] = []
        for call in calls:
            tool = self._turn.tools.get(call.name)
            if tool is not None and tool.access(call.arguments) == "read":
                reads.append(call)
                continue
            await self._run_reads(reads, starts)
            reads = []
            if tool is None:
                tool_call_not_run(call.name, "unknown_tool")
                await self._finish(call, ToolResult(f"Unknown tool: {call.name}", is_error=True))
            elif await self._allowed(starts[call.id], tool):
                await self._emit(ToolRunning(call))
                await self._finish(call, await self._execute(tool, call))
        await self._run_reads(reads, starts)

    def _context(self, call: ToolCall) -> ToolContext:
        """What one call's tool may use: the workspace and its backend, a way to show its progress, and
        (outside a sub-agent) a sub-agent of its own."""

        async def progress(terminal: Terminal) -> None:
            await self._emit(ToolProgress(call, terminal))

        async def request_access(
            subject: str, access: Access, question: str, details: AccessDetails | None = None
        ) -> str | None:
            return await self._request_access(call, subject, access, question, details)

        run_subagent: RunSubagent | None = None
        if (subagent := self._turn.subagent) is not None:

            async def delegate(prompt: str) -> str:
                return await follow_subagent(subagent(prompt), call, self._emit)

            run_subagent = delegate

        async def elicit(question: Form | Link) -> Answer:
            answer: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
            await self._emit(ElicitRequest(call, question, answer))
            return await answer

        return ToolContext(
            workspace=self._turn.workspace,
            run_subagent=run_subagent,
            io=self._turn.io,
            progress=progress,
            request_access=request_access,
            judged_path=self._opened.get(call.id),
            elicit=elicit,
        )

    async def _request_access(
        self, call: ToolCall, subject: str, access: Access, question: str, details: AccessDetails | None
    ) -> str | None:
        """A running call asks for more than its tool's access (see ToolContext.request_access); a guard's
        shim (`details.command`: the argv it asked about) is answered in the words its command's stderr shows."""
        shown = self._announced.get(call.id)
        start = ToolUseStart(call, question, shown.kind if shown else "other", "read", shown.locations if shown else [])
        verdict = self._turn.judge(JudgedCall(subject, access, call.arguments, details))
        refusal = await self._refusal(start, verdict, subject, details)
        if refusal is None:
            return None
        return shim_refusal(refusal) if details is not None and details.command else refusal.reason

    async def _run_reads(self, calls: list[ToolCall], starts: dict[str, ToolUseStart]) -> None:
        allowed = [call for call in calls if await self._allowed(starts[call.id], self._turn.tools[call.name])]
        if not allowed:
            return
        limit = asyncio.Semaphore(MAX_PARALLEL_READS)

        async def one(call: ToolCall) -> ToolResult:
            async with limit:
                await self._emit(ToolRunning(call))
                return await self._execute(self._turn.tools[call.name], call)

        running = [asyncio.ensure_future(one(c)) for c in allowed]
        try:
            results = await asyncio.gather(*running)
        except BaseException:  # a cancelled turn (or a user's "cancel" in one call) stops its siblings too
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            raise
        for call, result in zip(allowed, results, strict=True):
            await self._finish(call, result)

    async def _allowed(self, start: ToolUseStart, tool: Tool) -> bool:
        """Whether the Judge (and the user, when it asks) lets the call run; a call that may not is
        answered here with the reason."""
        call = start.call
        opened = opened_path(call.name, call.arguments, self._turn.workspace)
        verdict = self._turn.judge(JudgedCall(call.name, tool.access(call.arguments), call.arguments, opened=opened))
        refusal = await self._refusal(start, verdict, call.name)
        if opened is not None:
            self._opened[call.id] = opened
        if refusal is not None:
            tool_call_not_run(call.name, "refused")
            await self._finish(call, ToolResult(refusal.reason, is_error=True))
        return refusal is None

    async def _refusal(
        self, start: ToolUseStart, verdict: Verdict, subject: str, details: AccessDetails | None = None
    ) -> Refuse | None:
        """None when `verdict` (and the user, when it asks about `subject`) lets `start` go ahead, else the
        refusal; a user who cancels stops the turn (TurnCancelled). The decision is recorded first: a call
        whose decision could not be recorded does not run."""
        decision, choice = verdict, None
        if isinstance(verdict, Ask):
            choice = await self._ask(start, verdict, subject, details)
            decision = answered(choice)
        refusal = decision if isinstance(decision, Refuse) else None
        try:
            await self._turn.recorder.decided(start.call, subject, verdict, choice, details)
        except AuditUnavailable as exc:
            log.error("call %s not run: the audit trail could not be written: %s", start.call.id, exc)
            refusal = refusal or unrecorded(str(exc))
        permission_decided(decision.source, allowed=refusal is None)
        if choice == "cancelled":
            raise TurnCancelled
        return refusal

    async def _ask(self, start: ToolUseStart, ask: Ask, subject: str, details: AccessDetails | None) -> Choice:
        answer: asyncio.Future[Choice] = asyncio.get_running_loop().create_future()
        request = PermissionRequest(
            start.call,
            start.title,
            start.kind,
            start.locations,
            ask.options,
            ask.infrastructure_change,
            answer,
            subject,
            details,
        )
        await self._emit(request)
        return await answer

    async def _execute(self, tool: Tool, call: ToolCall) -> ToolResult:
        with tool_call(call.name, call.id) as observed:
            result = await self._run_tool(tool, call)
            observed.finished(failed=result.is_error)
        return result

    async def _run_tool(self, tool: Tool, call: ToolCall) -> ToolResult:
        try:
            return await tool.run(call.arguments, self._context(call))
        except ToolError as exc:
            return ToolResult(str(exc), is_error=True)
        except (asyncio.CancelledError, TurnCancelled):
            raise
        except Exception as exc:  # a tool bug must not end the session: the model sees it and can adapt
            log.exception("tool %s failed", call.name)
            return ToolResult(f"Tool '{call.name}' failed: {type(exc).__name__}: {exc}", is_error=True)

    async def _finish(self, call: ToolCall, result: ToolResult) -> None:
        """The one place a finished call's record is made: the history keeps it (the model and the store
        read it there), and the client is shown it (a replay shows the same record); secrets redacted first."""
        result = redacted_result(result, self._turn.redactor)
        self.ends_turn = self.ends_turn or result.ends_turn
        await self._turn.recorder.finished(call, result)  # an infrastructure change's exit status
        message = announced_result(result, call, self._announced)
        self._turn.append(message)
        await self._emit(ToolFinished(call, message))

    def _describe(self, call: ToolCall, ctx: ToolContext) -> ToolUseStart:
        tool = self._turn.tools.get(call.name)
        view = describe_call(call, tool, ctx)
        category: Category = tool.category if tool else "execute"
        return ToolUseStart(call, title=view.title, kind=view.kind, category=category, locations=view.locations)
