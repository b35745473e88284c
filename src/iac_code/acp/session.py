"""One ACP session: its agent loop, mode, model, permission memory, slash commands, and one turn at a time."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from acp import RequestError
from acp.schema import (
    AvailableCommandsUpdate,
    BaseModel,
    PromptResponse,
    RequestPermissionRequest,
    SessionInfoUpdate,
    Usage,
)

from iac_code.acp.commands import CommandError, FileCommands, PromptCommands, SessionCommand, help_text
from iac_code.acp.commands import available_commands_update as commands_update
from iac_code.acp.permissions import parse_answer
from iac_code.acp.presenter import permission_request
from iac_code.acp.prompt import PromptBlock, user_message
from iac_code.acp.replay import replay_updates
from iac_code.acp.session_mcp import HubFactory, SessionMcp
from iac_code.acp.updates import event_updates, message_chunk
from iac_code.agent.commands import parse_invocation
from iac_code.agent.events import Event, PermissionRequest, TurnEnd
from iac_code.agent.factory import LoopFactory
from iac_code.agent.policy import Choice, Mode, OptionKind, Remembered, Verdict, decide, remembered_after
from iac_code.agent.system_prompt import mode_instructions
from iac_code.encodable import encodable
from iac_code.messages import Message
from iac_code.sessions.store import RecordChanges, SessionStore
from iac_code.sessions.writer import OrderedWriter
from iac_code.tools.backends import WorkspaceIO
from iac_code.tools.base import Access
from iac_code.tools.iac_check import workspace_check_call

logger = logging.getLogger(__name__)

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
        mcp: HubFactory | None = None,
        mode: Mode = "default",
        title: str = "",
        always: dict[str, Remembered] | None = None,
        model: str = "",
        history: Sequence[Message] = (),
        reads_images: Callable[[str], bool] = lambda model: False,
        io: WorkspaceIO | None = None,
        config_dir: Path | None = None,
    ) -> None:
        self.id = session_id
        self.cwd = cwd
        self.mode: Mode = mode
        self.title = title
        self.always: dict[str, Remembered] = dict(always or {})
        self._peer = peer
        self._store = store
        self._writes = OrderedWriter(session_id)  # the store's writes for this session, in order
        self._reads_images = reads_images  # model id → whether its prompts may carry images
        self.loop = make_loop(self._judge, self._on_message, list(history))
        self.loop.mode_instructions = mode_instructions(mode)
        self.mcp = SessionMcp(mcp, functools.partial(peer.update, session_id), self.announce_commands)
        self.loop.extra_tools = self.mcp.tools
        if model:
            self.loop.provider.model = model  # the model this session last used, not the configured default
        if io is not None:
            self.loop.io = io  # the editor's file system and terminals
        self._files = FileCommands(cwd, config_dir, reserved=COMMANDS)
        self.prompt_commands: list[PromptCommands] = [self._files]  # sources of prompt commands, in order
        self._busy = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._cancelled = asyncio.Event()

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
            await self._writes.flush()  # the answer means the turn is saved
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
        await self.flush()
        await self.mcp.aclose()

    def release(self) -> None:
        """The runtime is dropped without a close (evicted, or taken by another connection)."""
        self.mcp.release()

    async def flush(self) -> None:
        """Wait until everything this session wrote is in the store."""
        try:
            await self._writes.flush()
        except Exception:
            logger.warning("session %s: some writes were lost (see above)", self.id)

    async def _run(self, message: Message) -> TurnEnd:
        """A slash command (see commands.py), or a normal turn."""
        invocation = parse_invocation(message.text)
        if invocation is not None:
            name, arguments = invocation
            await asyncio.to_thread(self._files.reload)  # a command file added since the last prompt counts
            if (command := COMMANDS.get(name)) is not None:
                return await command.run(self, arguments) or self._quiet_end()
            try:
                rendered = await self._render(name, arguments)
            except CommandError as exc:
                await self.say(str(exc))
                return self._quiet_end()
            if rendered is not None:
                message = replace(message, text=encodable(rendered))  # the images stay with it
        return await self.turn(message)

    async def _render(self, name: str, arguments: str) -> str | None:
        for source in self.prompt_commands:
            if (rendered := await source.render(name, arguments)) is not None:
                return rendered
        return None

    async def turn(self, message: Message) -> TurnEnd:
        """One turn of the model for `message`, shown to the client as it runs."""
        if (prepared := await self.mcp.prepare(message, self._cancelled)) is None:  # an MCP prompt failed
            return self._quiet_end()
        end = await self._stream(self.loop.run(prepared))
        return end or self._quiet_end()

    async def say(self, text: str) -> None:
        """Show `text` as the agent's message; the model does not see it."""
        await self._peer.update(self.id, message_chunk(text))

    def _quiet_end(self) -> TurnEnd:
        return TurnEnd("cancelled" if self._cancelled.is_set() else "end_turn", 0, 0)

    async def _compact(self, arguments: str) -> None:
        await self._stream(self.loop.compact())

    async def _clear(self, arguments: str) -> None:
        self.loop.clear()
        if (store := self._store) is not None:
            self._writes.submit(lambda: store.clear(self.id))
        await self.say("Conversation cleared.")

    async def _check(self, arguments: str) -> None:
        """One iac_check call on the workspace, shown like the model's and kept in the history."""
        await self._stream(self.loop.run("/check", tool_call=workspace_check_call()))

    async def _help(self, arguments: str) -> None:
        await self.say(help_text(self._commands().available_commands))

    async def _stream(self, events: AsyncGenerator[Event, None]) -> TurnEnd | None:
        """Send the loop's events as updates as they come. Text that arrives while an update is being
        written waits, merged, in the loop's channel, so a slow client gets fewer, larger chunks."""
        watcher = asyncio.create_task(self._cancelled.wait())
        watcher.add_done_callback(lambda _: self.loop.cancel())
        end: TurnEnd | None = None
        try:
            async with contextlib.aclosing(events):  # closing it stops the turn if we fail mid-way
                async for event in events:
                    if self._writes.pending:  # what the client sees next follows saved history only
                        await self._writes.flush()
                    if isinstance(event, TurnEnd):
                        end = event
                    elif isinstance(event, PermissionRequest):
                        await self._answer(event)  # the stream already carried its tool_call
                    else:
                        for update in event_updates(event):
                            await self._peer.update(self.id, update)
        finally:
            watcher.cancel()
        return end

    # -- permissions -------------------------------------------------------------------------

    def _judge(self, tool_name: str, access: Access) -> Verdict:
        return decide(access, self.mode, self.always.get(tool_name))

    async def _answer(self, request: PermissionRequest) -> None:
        choice = await self._ask(permission_request(self.id, request), request.options)
        if choice == "cancelled":
            self._cancelled.set()
        elif (remembered := remembered_after(choice)) is not None:
            self.always[request.subject] = remembered
            self._save(RecordChanges(permissions=dict(self.always)))  # flushed with the turn
        request.resolve(choice)

    async def _ask(self, request: RequestPermissionRequest, offered: Sequence[OptionKind]) -> Choice:
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
            return parse_answer(asking.result(), offered)
        except (RequestError, ConnectionError) as exc:
            logger.warning("session %s: permission request failed (%s); denying", self.id, exc)
            return "reject_once"

    # -- state -------------------------------------------------------------------------------

    async def set_mode(self, mode: Mode) -> None:
        self.mode = mode
        self.loop.mode_instructions = mode_instructions(mode)  # from the next model call
        self._save(RecordChanges(mode=mode))
        await self._writes.flush()

    async def set_model(self, model: str) -> None:
        self.loop.provider.model = model  # the loop reads it on its next model call
        self._save(RecordChanges(model=model))
        await self._writes.flush()

    async def replay(self) -> None:
        """Show the whole history to the client again, as updates (for session/load)."""
        for update in replay_updates(self.loop.history, self.loop.tools, self.cwd):
            await self._peer.update(self.id, update)

    async def announce_commands(self) -> None:
        """Send the commands the client may offer (the command files are read again)."""
        await asyncio.to_thread(self._files.reload)
        await self._peer.update(self.id, self._commands())

    def _commands(self) -> AvailableCommandsUpdate:
        """The session's commands, the prompt commands, then the prompts of the MCP servers ready now."""
        update = commands_update(COMMANDS, self.prompt_commands)
        update.available_commands += self.mcp.available_commands()
        return update

    async def _name_after(self, text: str) -> None:
        first_line = next((line.strip() for line in text.splitlines() if line.strip()), "")
        if not first_line:
            return
        self.title = first_line[:_TITLE_CHARS]
        self._save(RecordChanges(title=self.title))
        await self._peer.update(self.id, SessionInfoUpdate(session_update="session_info_update", title=self.title))

    def _on_message(self, message: Message) -> None:
        if (store := self._store) is not None:
            self._writes.submit(lambda: store.append(self.id, message))

    def _save(self, changes: RecordChanges) -> None:
        if (store := self._store) is not None:
            self._writes.submit(lambda: store.update(self.id, changes))


# The session's own slash commands (commands.py): one entry per command.
COMMANDS: dict[str, SessionCommand[Session]] = {
    "compact": SessionCommand("Summarise the conversation so far to free context", Session._compact),
    "clear": SessionCommand("Forget the conversation and start afresh", Session._clear),
    "help": SessionCommand("List the commands and modes", Session._help),
    "check": SessionCommand(
        "Validate, lint and security-scan the workspace's infrastructure code (iac_check)", Session._check
    ),
}
