"""One ACP session: its agent loop, mode, model, permission memory, and one turn at a time."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from acp import RequestError
from acp.schema import (
    AvailableCommand,
    AvailableCommandsUpdate,
    BaseModel,
    PromptResponse,
    RequestPermissionRequest,
    SessionInfoUpdate,
    ToolCallLocation,
    ToolCallUpdate,
    Usage,
)

from iac_code.acp.permissions import OPTIONS, Mode, decide_without_asking, parse_answer
from iac_code.acp.prompt import PromptBlock, user_message
from iac_code.acp.replay import replay_updates
from iac_code.acp.updates import event_update, message_chunk
from iac_code.agent.events import Event, ToolUseStart, TurnEnd
from iac_code.messages import Message, ToolCall
from iac_code.sessions.store import SessionStore
from iac_code.tools.base import Tool, ToolContext

if TYPE_CHECKING:
    from iac_code.agent.loop import AgentLoop, Decision, PermissionHook

logger = logging.getLogger(__name__)

# (permission hook, on_message, history to start from) → the session's loop
LoopFactory = Callable[["PermissionHook", Callable[[Message], None], list[Message]], "AgentLoop"]

COMMANDS = {
    "compact": "Summarise the conversation so far to free context",
    "clear": "Forget the conversation and start afresh",
    "help": "List the commands and modes",
}
_TITLE_CHARS = 80


class Peer(Protocol):
    """The client, as a session talks to it."""

    async def update(self, session_id: str, update: BaseModel) -> None: ...

    async def request_permission(self, request: RequestPermissionRequest) -> Any: ...


class Session:
    def __init__(
        self,
        session_id: str,
        cwd: Path,
        peer: Peer,
        make_loop: LoopFactory,
        *,
        store: SessionStore | None = None,
        mcp_servers: Sequence[Any] = (),
        mode: Mode = "default",
        title: str = "",
        always: dict[str, Literal["allow", "reject"]] | None = None,
        model: str = "",
        history: Sequence[Message] = (),
        reads_images: Callable[[str], bool] = lambda model: False,
    ) -> None:
        self.id = session_id
        self.cwd = cwd
        self.mcp_servers = list(mcp_servers)  # kept for the MCP issue; not used yet
        self.mode: Mode = mode
        self.title = title
        self.always: dict[str, Literal["allow", "reject"]] = dict(always or {})
        self._peer = peer
        self._store = store
        self._reads_images = reads_images  # model id → whether its prompts may carry images
        self.loop = make_loop(self._permission, self._on_message, list(history))
        if model:
            self.loop.provider.model = model  # the model this session last used, not the configured default
        self._busy = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._cancelled = asyncio.Event()
        self._shown: dict[str, asyncio.Event] = {}  # tool call id → its tool_call update was sent

    @property
    def model(self) -> str:
        return self.loop.provider.model

    @property
    def busy(self) -> bool:
        """A prompt is running (its turn, a command, or a wait for a permission answer)."""
        return self._busy

    # -- turns -------------------------------------------------------------------------------

    async def prompt(self, blocks: Sequence[PromptBlock]) -> PromptResponse:
        if self._busy:
            raise RequestError.invalid_params({"sessionId": "a prompt is already running for this session"})
        self._busy = True
        self._idle.clear()
        self._cancelled.clear()
        try:
            message = await user_message(blocks, self.cwd, images=self._reads_images(self.model))
            if not self.title:
                await self._name_after(message.text)
            end = await self._run(message)
            usage = Usage(
                input_tokens=end.input_tokens,
                output_tokens=end.output_tokens,
                total_tokens=end.input_tokens + end.output_tokens,
            )
            return PromptResponse(stop_reason=end.stop_reason, usage=usage)
        finally:
            self._busy = False
            self._idle.set()

    def cancel(self) -> None:
        """Stop the running turn (no effect when idle); the prompt then answers `cancelled`."""
        if self._busy:
            self._cancelled.set()  # _stream's watcher cancels the loop, even one not started yet

    async def close(self, grace: float = 2.0) -> None:
        self.cancel()
        try:
            await asyncio.wait_for(self._idle.wait(), grace)
        except TimeoutError:
            logger.warning("session %s: turn still running after close", self.id)

    async def _run(self, message: Message) -> TurnEnd:
        command = message.text.strip()
        if command.startswith("/") and command[1:] in COMMANDS:
            return await self._run_command(command[1:])
        end = await self._stream(self.loop.run(message))
        return end or TurnEnd("cancelled" if self._cancelled.is_set() else "end_turn", 0, 0)

    async def _run_command(self, name: str) -> TurnEnd:
        if name == "compact":
            await self._stream(self.loop.compact())
        elif name == "clear":
            self.loop.clear()
            if self._store is not None:
                self._store.clear(self.id)
            await self._peer.update(self.id, message_chunk("Conversation cleared."))
        else:
            await self._peer.update(self.id, message_chunk(_help_text()))
        return TurnEnd("cancelled" if self._cancelled.is_set() else "end_turn", 0, 0)

    async def _stream(self, events: AsyncIterator[Event]) -> TurnEnd | None:
        """Send the loop's events as updates as they come. Text that arrives while an update is being
        written waits, merged, in the loop's channel, so a slow client gets fewer, larger chunks."""
        watcher = asyncio.create_task(self._cancelled.wait())
        watcher.add_done_callback(lambda _: self.loop.cancel())
        end: TurnEnd | None = None
        try:
            async with contextlib.aclosing(events):  # closing it stops the turn if we fail mid-way
                async for event in events:
                    if isinstance(event, TurnEnd):
                        end = event
                    elif (update := event_update(event)) is not None:
                        await self._peer.update(self.id, update)
                        if isinstance(event, ToolUseStart):
                            self._shown_event(event.call.id).set()
        finally:
            self._shown.clear()
            watcher.cancel()
        return end

    def _shown_event(self, call_id: str) -> asyncio.Event:
        return self._shown.setdefault(call_id, asyncio.Event())

    # -- permissions -------------------------------------------------------------------------

    async def _permission(self, call: ToolCall, tool: Tool) -> Decision:
        # The client must have seen the tool_call before it is asked about it.
        await self._shown_event(call.id).wait()
        decided = decide_without_asking(tool.category, self.mode, self.always.get(tool.name))
        if decided is not None:
            return decided
        request = RequestPermissionRequest(
            session_id=self.id,
            tool_call=ToolCallUpdate(
                tool_call_id=call.id,
                title=tool.title(call.arguments),
                kind=tool.kind,
                status="pending",
                raw_input=call.arguments,
                locations=[ToolCallLocation(path=p) for p in tool.locations(call.arguments, ToolContext(self.cwd))]
                or None,
            ),
            options=OPTIONS,
        )
        choice = await self._ask(request)
        if choice == "cancelled":
            self._cancelled.set()
            return "cancel"
        if choice.endswith("_always"):
            self.always[tool.name] = "allow" if choice.startswith("allow") else "reject"
            self._save(permissions=dict(self.always))
        return "allow" if choice.startswith("allow") else "deny"

    async def _ask(self, request: RequestPermissionRequest) -> str:
        asking = asyncio.ensure_future(self._peer.request_permission(request))
        cancelled = asyncio.ensure_future(self._cancelled.wait())
        try:
            await asyncio.wait({asking, cancelled}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancelled.cancel()
        if not asking.done():
            asking.cancel()  # the client was told to cancel the turn; stop waiting for its answer
            return "cancelled"
        try:
            return parse_answer(asking.result())
        except (RequestError, ConnectionError) as exc:
            logger.warning("session %s: permission request failed (%s); denying", self.id, exc)
            return "reject_once"

    # -- state -------------------------------------------------------------------------------

    def set_mode(self, mode: Mode) -> None:
        self.mode = mode
        self._save(mode=mode)

    def set_model(self, model: str) -> None:
        self.loop.provider.model = model  # the loop reads it on its next model call
        self._save(model=model)

    async def replay(self) -> None:
        """Show the whole history to the client again, as updates (for session/load)."""
        for update in replay_updates(self.loop.history, self.loop.tools, self.cwd):
            await self._peer.update(self.id, update)

    async def announce_commands(self) -> None:
        commands = [AvailableCommand(name=name, description=text) for name, text in COMMANDS.items()]
        await self._peer.update(
            self.id, AvailableCommandsUpdate(session_update="available_commands_update", available_commands=commands)
        )

    async def _name_after(self, text: str) -> None:
        first_line = next((line.strip() for line in text.splitlines() if line.strip()), "")
        if not first_line:
            return
        self.title = first_line[:_TITLE_CHARS]
        self._save(title=self.title)
        await self._peer.update(self.id, SessionInfoUpdate(session_update="session_info_update", title=self.title))

    def _on_message(self, message: Message) -> None:
        if self._store is not None:
            self._store.append(self.id, message)

    def _save(self, **changes: object) -> None:
        if self._store is not None:
            self._store.update(self.id, **changes)


def _help_text() -> str:
    lines = ["Commands:"]
    lines += [f"  /{name}: {text}" for name, text in COMMANDS.items()]
    lines += [
        "Modes: default (ask before writing or running), accept-edits (write without asking),",
        "read-only (never write or run).",
    ]
    return "\n".join(lines)
