"""The turn loop: model call → tool calls → results → next model call, until the model stops.

It knows nothing of ACP. `run()` yields events (events.py); the last is always `TurnEnd`. A call the
session's Judge (policy.py) says to ask about is yielded as a PermissionRequest whose answer the loop
awaits: the consumer of the events answers it. The turn's work runs in its own task so that `cancel()` can
stop the model stream, a permission wait and running tools at once; whatever was cut short is written
into the history so it stays valid for every provider.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path

from iac_code.agent import compaction
from iac_code.agent.audit import NoRecording, Recorder
from iac_code.agent.channel import EventChannel
from iac_code.agent.edit_checks import edits_check
from iac_code.agent.events import (
    Compaction,
    ErrorReport,
    Event,
    StopReason,
    ToolFinished,
    ToolUseStart,
    TurnEnd,
    UsageReport,
)
from iac_code.agent.model_call import ModelReply, read_reply
from iac_code.agent.policy import Judge
from iac_code.agent.spend import Prices, Spend, added, no_prices
from iac_code.agent.system_prompt import ROLE
from iac_code.agent.tool_calls import ToolCalls, TurnCancelled, TurnTools, announced_result
from iac_code.agent.tool_offer import DEFAULT_SHARE, ToolOffer, found_in
from iac_code.messages import Message, ToolCall, context_messages, new_message_id, unanswered_tool_calls, user
from iac_code.observability.record import model_spent, traced_turn, turn_ended
from iac_code.providers.base import FinishReason, ModelProvider, ProviderError, ToolSchema, Usage
from iac_code.redaction import Redactor, Shapes
from iac_code.tools.ask_user import TOOL_NAME as ASK_TOOL
from iac_code.tools.backends import LocalIO, WorkspaceIO
from iac_code.tools.base import Category, Tool, ToolResult
from iac_code.tools.update_plan import TOOL_NAME as PLAN_TOOL

log = logging.getLogger(__name__)

Emit = Callable[[Event], Awaitable[None]]

CANCELLED = "Cancelled: the user stopped the turn before this tool call finished."
NOT_RUN = "Not run: the model's answer ended before this tool call could run."
INTERNAL_ERROR = "Not run: an internal error stopped the turn."
# How a model call's finish ends the turn when no tool call follows (a "tool_use" without calls ends it).
_STOP_REASONS: dict[FinishReason, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "end_turn",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
}
SUBAGENT_CATEGORIES: frozenset[Category] = frozenset({"read"})  # sub-agents explore; the main agent acts
# the plan the user sees is the main agent's; the user's questions too (ask_user may end the turn)
SUBAGENT_EXCLUDED = frozenset({PLAN_TOOL, ASK_TOOL})


async def _drain(channel: EventChannel) -> None:
    while True:
        await channel.get()


@dataclass(frozen=True)
class LoopConfig:
    """The values a loop runs by, fixed for its life; a sub-agent's are its parent's, `replace`d. What a
    session changes as it goes (the mode's instructions, the model) the loop keeps as its own state."""

    system_prompt: str = ROLE  # the session's is built from its workspace (system_prompt.build_system_prompt)
    mode_instructions: str = ""  # the session's mode at construction; then set_mode_instructions
    model: str = ""  # the model the session last used; "" keeps the provider's configured default
    max_turns: int = 50  # model calls in one turn
    max_tokens: int = 8192  # a model call's answer
    compact_threshold: float = 0.8  # of the context window, past which the history is compacted
    tools_share: float = DEFAULT_SHARE  # of the context window the MCP tools' schemas may take (tool_offer.py)
    session_id: str = ""  # names the turns' spans (empty in a sub-agent: it runs inside its session's)
    prices: Prices = no_prices  # what the session's model calls cost (agent/spend.py)
    allow_subagents: bool = True
    subagent_categories: frozenset[Category] = SUBAGENT_CATEGORIES


class AgentLoop:
    def __init__(
        self,
        config: LoopConfig,
        provider: ModelProvider,
        tools: dict[str, Tool],
        workspace: Path,
        *,
        judge: Judge,
        history: list[Message] | None = None,
        on_message: Callable[[Message], None] | None = None,  # every message appended (the store keeps it)
        extra_tools: Callable[[], Iterable[Tool]] | None = None,  # tools that come and go (MCP servers)
        io: WorkspaceIO | None = None,  # where tools read, write and run; None is the local disk
        recorder: Recorder | None = None,
        redactor: Redactor | None = None,
        workspace_summary: Future[str] | None = None,
    ) -> None:
        self.config = config
        self.provider = provider
        if config.model:
            provider.model = config.model  # the model the session last used, not the configured default
        # The built-in tools, and those that come and go (a session's MCP servers), asked for again before
        # every model call: all offered, or searched when their schemas would pass `tools_share` of the
        # context window (tool_offer.py).
        self.offer = ToolOffer(tools, extra_tools, share=config.tools_share, found=found_in(history or []))
        self.workspace = workspace
        self.judge = judge
        self.recorder: Recorder = recorder or NoRecording()  # every decision goes to the audit trail
        # the session's secrets, out of every tool result (agent/secrets.py); None: the credential shapes only
        self.redactor = redactor if redactor is not None else Redactor([Shapes()])
        self.history: list[Message] = list(history or [])
        self.spend = Spend.of(self.history, config.prices)  # a loaded session goes on from what it spent
        # The provider's prompt cache may route by a key: the session's, hashed (it names nothing outside).
        self._cache_key = hashlib.sha256(config.session_id.encode()).hexdigest()[:32] if config.session_id else ""
        self.on_message = on_message
        self.system_prompt = config.system_prompt
        # The workspace's infrastructure, being found in the background; it joins the prompt before the
        # first model call. The mode's instructions (plan mode asks for a plan) follow the prompt on every
        # call, so a mode change takes effect on the next one.
        self._workspace_summary = workspace_summary
        self.mode_instructions = config.mode_instructions
        self.meter = compaction.ContextMeter()
        # e.g. the editor's fs and terminals; its roots are where the tools may act (ToolContext.roots)
        self.io: WorkspaceIO = io if io is not None else LocalIO(workspace)
        self._turn: asyncio.Task[None] | None = None
        self._partial: list[str] = []  # text streamed so far in the current model call
        self._reply_id = ""  # the id of the current model call's message (its streamed deltas carry it)
        self._error: ErrorReport | None = None  # why the current turn failed, for its TurnEnd
        self._announced: dict[str, ToolUseStart] = {}  # this turn's calls the consumer was shown, by id
        self._turn_usage = Usage(0, 0)  # summed over the current turn's model calls
        self.check_edits = False  # the session's option: check what the model's calls wrote (edit_checks.py)

    @property
    def running(self) -> bool:
        return self._turn is not None and not self._turn.done()

    # ----------------------------------------------------------------- public API

    async def run(self, prompt: str | Message, *, tool_call: ToolCall | None = None) -> AsyncGenerator[Event, None]:
        """One turn for `prompt`: text, or a whole user message (text and images). With `tool_call`, the
        turn is that one call, made on the user's behalf (a command such as /check) without the model;
        it enters the history like the model's own calls, so the model sees it on the next turn."""
        turn = self._drive(lambda emit: traced_turn(self.config.session_id, self._turn_body(prompt, emit, tool_call)))
        async for event in turn:
            yield event

    async def compact(self) -> AsyncGenerator[Event, None]:
        """Manual compaction (the /compact command)."""

        async def body(emit: Emit) -> None:
            await traced_turn(self.config.session_id, self._compact(emit, manual=True), name="compaction")

        async for event in self._drive(body):
            yield event

    def cancel(self) -> None:
        if self.running:
            assert self._turn is not None
            self._turn.cancel()

    @property
    def tools(self) -> dict[str, Tool]:
        """What the model may call now: the built-in tools, the MCP tools, `tool_search` when they are searched."""
        return self.offer.tools

    def clear(self) -> None:
        """Forget the conversation, and with it what it spent (the store forgets it too)."""
        self.history.clear()
        self.offer.forget_found()
        self.meter = compaction.ContextMeter()
        self.spend = Spend(self.spend.prices)

    def set_mode_instructions(self, instructions: str) -> None:
        """The session's mode changed: its instructions follow the system prompt from the next model call."""
        self.mode_instructions = instructions

    def set_model(self, model: str) -> None:
        """The session switched models: the next model call uses `model`."""
        self.provider.model = model

    def refresh_tools(self) -> None:
        """Take `extra_tools()` as they are now (the built-in tools keep their names)."""
        self.offer.refresh(self.provider.context_window)

    # ----------------------------------------------------------------- turn machinery

    async def _drive(self, body: Callable[[Emit], Awaitable[None]]) -> AsyncGenerator[Event, None]:
        if self.running:
            raise RuntimeError("a turn is already running")
        channel = EventChannel()
        turn = asyncio.create_task(self._guarded(body, channel))
        self._turn = turn
        try:
            while (event := await channel.get()) is not None:
                yield event
        finally:
            if not turn.done():  # the consumer stopped early: stop the turn, draining what it still emits
                turn.cancel()
                drain = asyncio.create_task(_drain(channel))
                await asyncio.gather(turn, return_exceptions=True)
                drain.cancel()
            self._turn = None

    async def _guarded(self, body: Callable[[Emit], Awaitable[None]], channel: EventChannel) -> None:
        try:
            await body(channel.put)
        except asyncio.CancelledError:
            pass  # _turn_body already recorded the cancellation; a bare body just stops
        finally:
            await channel.put(None)

    async def _turn_body(self, prompt: str | Message, emit: Emit, tool_call: ToolCall | None = None) -> None:
        self._turn_usage = Usage(0, 0)
        self._announced = {}
        self._error = None
        try:
            self._append(prompt if isinstance(prompt, Message) else user(prompt))
            if tool_call is not None:
                self.refresh_tools()  # a model call refreshes them itself
                self._append(Message(role="assistant", text="", tool_calls=[tool_call]))
                await self._run_tools([tool_call], emit)
                stop: StopReason = "end_turn"
            else:
                await self._add_workspace_summary()
                stop = await self._steps(emit)
        except (asyncio.CancelledError, TurnCancelled):
            self._close_partial_message()
            await self._end_dangling(CANCELLED, "cancelled", emit)
            stop = "cancelled"
        except Exception:  # a bug must cost this turn only, never the session's history
            log.exception("turn failed")
            self._close_partial_message()
            await self._end_dangling(INTERNAL_ERROR, "error", emit)
            self._error = ErrorReport("Internal error: the turn stopped (details are in the server log).")
            await emit(self._error)
            stop = "error"
        turn_ended(stop)
        await emit(TurnEnd(stop, self._turn_usage, self._error))

    async def _steps(self, emit: Emit) -> StopReason:
        for _ in range(self.config.max_turns):
            if self._context_tokens() > self.config.compact_threshold * self.provider.context_window:
                await self._compact(emit, manual=False)
            try:
                reply = await self._call_model(emit)
            except ProviderError as exc:
                self._close_partial_message()
                # the provider's words may echo what the request carried: the session's secrets come out
                self._error = ErrorReport(self.redactor.redact(str(exc)), exc.kind)
                await emit(self._error)
                return "error"
            self._spent(reply.message, reply.usage)
            self._append(reply.message)
            await emit(
                UsageReport(
                    reply.usage.input_tokens,
                    reply.usage.output_tokens,
                    self._context_tokens(),
                    self.provider.context_window,
                    self.spend.cost,
                )
            )
            if reply.finish != "tool_use" or not reply.message.tool_calls:
                self._answer_dangling(NOT_RUN)
                return _STOP_REASONS[reply.finish]
            if await self._run_tools(reply.message.tool_calls, emit):
                return "end_turn"  # a call asked the user in plain text: the answer is their next prompt
            if self.check_edits and (check := edits_check(reply.message.tool_calls, self.history)) is not None:
                self._append(Message(role="assistant", text="", tool_calls=[check]))  # as /check makes it
                await self._run_tools([check], emit)
        return "max_turn_requests"

    # ----------------------------------------------------------------- model

    async def _call_model(self, emit: Emit) -> ModelReply:
        self.refresh_tools()  # a server may have changed its tools since the last call (MCP list_changed)
        self._partial = []
        self._reply_id = new_message_id()
        context = context_messages(self.history)
        system_prompt = self._system_prompt()
        stream = self.provider.stream(
            system_prompt, context, self._tool_schemas(), max_tokens=self.config.max_tokens, cache_key=self._cache_key
        )
        reply = await read_reply(stream, emit, self._partial, self._reply_id)
        self._partial = []
        if reply.usage.input_tokens:
            self.meter.record(reply.usage.input_tokens, context, len(system_prompt))
        return reply

    def _spent(self, message: Message, usage: Usage) -> None:
        """Count a call's usage in the turn's and the session's, and keep it on the message it wrote (so a
        reload counts it again)."""
        self._turn_usage = added(self._turn_usage, usage)
        if usage == Usage(0, 0):
            return  # the provider reported nothing
        message.usage, message.model = usage, self.provider.model
        if (cost := self.spend.add(self.provider.model, usage)) is not None:
            model_spent(self.provider.name, self.provider.model, cost.amount, cost.currency)

    def _system_prompt(self) -> str:
        return f"{self.system_prompt}\n\n{self.mode_instructions}" if self.mode_instructions else self.system_prompt

    async def _add_workspace_summary(self) -> None:
        if self._workspace_summary is not None:
            # shielded: a turn cancelled during the wait must leave the summary for the next turn
            summary = await asyncio.shield(asyncio.wrap_future(self._workspace_summary))
            self._workspace_summary = None
            if summary:
                self.system_prompt = f"{self.system_prompt}\n\n{summary}"

    def _tool_schemas(self) -> list[ToolSchema]:
        return [ToolSchema(t.name, t.description, t.parameters) for t in self.offer.offered()]

    def _context_tokens(self) -> int:
        return self.meter.estimate(context_messages(self.history), len(self._system_prompt()))

    # ----------------------------------------------------------------- tools

    async def _run_tools(self, calls: list[ToolCall], emit: Emit) -> bool:
        """Run one step's calls; True when one of them ends the turn (ToolResult.ends_turn)."""
        subagent = (lambda prompt: self._subagent().run(prompt)) if self.config.allow_subagents else None
        turn = TurnTools(
            self.tools, self.workspace, self.io, self.judge, self._append, subagent, self.recorder, self.redactor
        )
        step = ToolCalls(turn, self._announced, emit)
        await step.run(calls)
        return step.ends_turn

    def _subagent(self) -> AgentLoop:
        """A loop for one sub-agent task: its own context, the read tools, this session's backend (and a search
        of its own when the MCP tools are searched)."""
        categories = self.config.subagent_categories
        builtins = self.offer.builtins.items()
        child = AgentLoop(
            # the prompt as it is now (the workspace summary in it), no mode, the provider's model as it is
            replace(
                self.config,
                system_prompt=self.system_prompt,
                mode_instructions="",
                model="",
                session_id="",
                allow_subagents=False,
            ),
            self.provider,
            {n: t for n, t in builtins if t.category in categories and n not in SUBAGENT_EXCLUDED},
            self.workspace,
            extra_tools=lambda: [t for t in self.offer.catalogue.values() if t.category in categories],
            judge=self.judge,
            recorder=self.recorder,
            redactor=self.redactor,
            io=self.io,
        )
        child.spend = self.spend  # its calls are the session's too (counted live; its messages are not stored)
        return child

    # ----------------------------------------------------------------- compaction

    async def _compact(self, emit: Emit, *, manual: bool) -> None:
        before = self._context_tokens()
        compacted = await compaction.compacted(self.history, self.provider, self.config.max_tokens, emit, manual=manual)
        if compacted is None:
            return
        message, usage = compacted
        self._spent(message, usage)  # a compaction within a turn is part of its cost
        self._append(message)
        after = self._context_tokens()
        window = self.provider.context_window
        await emit(
            Compaction(
                f"Context compacted: about {before:,} → {after:,} tokens ({100 * after // window}% of {window:,}).",
                message.id,
                "completed",
                message.text.removeprefix(compaction.SUMMARY_PREFIX),
            )
        )
        await emit(UsageReport(usage.input_tokens, usage.output_tokens, after, window, self.spend.cost))

    # ----------------------------------------------------------------- history

    def _append(self, message: Message) -> None:
        message.id = message.id or new_message_id()  # the client's messageId, stored with it
        self.history.append(message)
        if self.on_message is not None:
            self.on_message(message)

    def _close_partial_message(self) -> None:
        """Keep what the user already saw of an interrupted answer."""
        if self._partial:
            text, self._partial = "".join(self._partial), []
            self._append(Message(role="assistant", id=self._reply_id, text=text))  # the id its chunks had

    def _answer_dangling(self, text: str, reason: str | None = None) -> list[tuple[ToolCall, Message]]:
        """Answer the calls left without a result (`reason`: why they ended, for the client)."""
        answers = []
        for call in unanswered_tool_calls(self.history):
            result = ToolResult(text, is_error=True, raw_output=None if reason is None else {"reason": reason})
            answers.append((call, announced_result(result, call, self._announced)))
            self._append(answers[-1][1])
        return answers

    async def _end_dangling(self, text: str, reason: str, emit: Emit) -> None:
        """Answer the calls left without a result, and end those the consumer was shown (a call the
        client saw must not stay pending)."""
        for call, message in self._answer_dangling(text, reason):
            if call.id in self._announced:
                await emit(ToolFinished(call, message))
