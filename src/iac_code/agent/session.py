"""The session core: one conversation's owner, the same for every face (ACP, headless).

It owns the turn's AgentLoop, the mode, the remembered answers and the judge, every slash command (its
own, the prompt commands, MCP prompts), the MCP servers, the title, the ordered writer, and one turn at a
time (busy, cancel, close, flush). It knows nothing of a protocol: what a user should see goes to its
`SessionFace` as loop events and plain text, and a call that needs an answer goes there as the loop's
`PermissionRequest`. Errors a client hears about are errors.py's kinds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Coroutine, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

from iac_code.agent.audit import AnsweredBy, TrailRecorder
from iac_code.agent.commands import parse_invocation
from iac_code.agent.events import ElicitRequest, Event, NoticeSeverity, PermissionRequest, TurnEnd
from iac_code.agent.factory import LoopFactory, LoopParts
from iac_code.agent.options import CHECK_EDITS, OPTION_IDS
from iac_code.agent.policy import Choice, JudgedCall, Mode, Remembered, Verdict, decide, remembered_after
from iac_code.agent.read_denials import denied_read_paths
from iac_code.agent.rules import remember_trust
from iac_code.agent.session_commands import (
    SKILLS_TITLE,
    CommandError,
    CommandInfo,
    FileCommands,
    PromptCommands,
    SessionCommand,
    SkillCommands,
    help_text,
    listed,
    status_text,
)
from iac_code.agent.session_mcp import TITLE as MCP_TITLE
from iac_code.agent.session_mcp import HubFactory, SessionMcp
from iac_code.agent.spend import spend_text
from iac_code.agent.system_prompt import mode_instructions
from iac_code.agent.workspace import Workspace
from iac_code.encodable import encodable
from iac_code.errors import InvalidParams
from iac_code.guard.shims import guard_status
from iac_code.messages import Message
from iac_code.principals import LOCAL, Principal
from iac_code.sessions.audit import Audited, AuditTrail
from iac_code.sessions.store import RecordChanges, SessionStore
from iac_code.sessions.writer import OrderedWriter
from iac_code.tools.backends import WorkspaceIO
from iac_code.tools.iac_check import workspace_check_call
from iac_code.tools.iac_plan import preview_call
from iac_code.tools.questions import Answer, Form, Link, NotAnswered

logger = logging.getLogger(__name__)

TITLE_CHARS = 80
_Answer = TypeVar("_Answer")


class SessionFace(Protocol):
    """Where a session shows what happens and asks its questions: one per protocol."""

    async def show(self, event: Event) -> None:
        """One loop event of a running turn (never TurnEnd or PermissionRequest: the session handles those)."""
        ...

    async def say(self, text: str) -> None:
        """A message from the session itself (a command's output), which the model does not see."""
        ...

    async def notice(self, severity: NoticeSeverity, title: str, detail: str) -> None:
        """Something for the user beside the conversation (an MCP server that failed, a skill skipped), which
        the model does not see; the turn goes on. `title` is short ("MCP"), `detail` says what happened."""
        ...

    async def command_failed(self, text: str) -> None:
        """A slash command could not run as typed; the turn ends here."""
        ...

    async def ask(self, request: PermissionRequest) -> Choice:
        """The user's answer about a call (its ToolUseStart was shown). The session stops waiting when the
        turn is cancelled, and resolves the request itself."""
        ...

    async def elicit(self, call_id: str, question: Form | Link) -> Answer:
        """The user's answer to a running call's question (tools/questions.py); UNSUPPORTED when it cannot be
        shown. The session stops waiting when the turn is cancelled."""
        ...

    async def titled(self, title: str) -> None:
        """The session got its title (from its first prompt)."""
        ...

    async def commands_changed(self, commands: list[CommandInfo]) -> None:
        """The commands a client may offer now."""
        ...


class SessionCore:
    def __init__(
        self,
        session_id: str,
        workspace: Workspace,
        face: SessionFace,
        make_loop: LoopFactory,
        *,
        store: SessionStore | None = None,
        mcp: HubFactory | None = None,
        mode: Mode = "default",
        title: str = "",
        always: dict[str, Remembered] | None = None,
        model: str = "",
        options: Mapping[str, bool] | None = None,
        history: Sequence[Message] = (),
        io: WorkspaceIO | None = None,
        config_dir: Path | None = None,
        principal: Principal = LOCAL,
        trail: AuditTrail | None = None,
        answered_by: AnsweredBy = "user",
    ) -> None:
        """`make_loop`: the loop over `workspace` for the parts the session gives it (host/assembly.py)."""
        self.id = session_id
        self.principal = principal  # who is asking: the audit and the logs name it
        self.workspace = workspace
        self.rules = workspace.rules  # the permission rules in force (agent/rules.py); /permissions trust changes them
        self._config_dir = config_dir
        # every decision is recorded in the store's audit trail (or `trail`, for a face without a store)
        if trail is None and isinstance(store, Audited):
            trail = store.audit_trail()
        recorder = (
            TrailRecorder(trail, session_id, lambda: self.principal.name, answered_by=answered_by)
            if trail is not None
            else None
        )
        self.mode: Mode = mode
        self.title = title
        self.always: dict[str, Remembered] = dict(always or {})
        self._face = face
        self._store = store
        self._writes = OrderedWriter(session_id)  # the store's writes for this session, in order
        self.mcp = SessionMcp(mcp, self._mcp_problem, self.announce_commands)
        self.skills = workspace.skills  # found once: the system prompt lists them, the same for the whole session
        parts = LoopParts(
            judge=self._judge,
            on_message=self._on_message,
            history=list(history),
            mode_instructions=mode_instructions(mode),
            extra_tools=self.mcp.tools,
            model=model,
            io=io,
            session_id=session_id,
            recorder=recorder,
            unreadable=lambda: denied_read_paths(self.rules),
        )
        self.loop = make_loop(parts)
        self.options: dict[str, bool] = {}  # the on/off settings set for it (edit_checks.CHECK_EDITS)
        for option_id, value in (options or {}).items():
            self._apply_option(option_id, value)
        # a skill wins a name clash with a Markdown command (but not with /init or the session's own commands)
        self._files = FileCommands(workspace.root, config_dir, reserved={*COMMANDS, *self.skills.names})
        self._skill_commands = SkillCommands(self.skills, reserved=COMMANDS)
        self.prompt_commands: list[PromptCommands] = [self._files, self._skill_commands]  # sources, in order
        self._busy = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._cancelled = asyncio.Event()

    @property
    def cwd(self) -> Path:
        return self.workspace.root

    @property
    def model(self) -> str:
        return self.loop.provider.model

    @property
    def busy(self) -> bool:
        """A prompt is running (its turn, a command, or a wait for a permission answer)."""
        return self._busy

    # -- turns -------------------------------------------------------------------------------

    def refuse_if_busy(self) -> None:
        """InvalidParams while a prompt is running: one prompt at a time."""
        if self._busy:
            raise InvalidParams("sessionId", "a prompt is already running for this session")

    async def prompt(self, message: Message) -> TurnEnd:
        """One prompt: a slash command or a turn of the model. Returns once the turn is saved."""
        self.refuse_if_busy()
        self._busy = True
        self._idle.clear()
        self._cancelled.clear()
        try:
            await self._tell_skill_problems()
            if not self.title:
                await self._name_after(message.text)
            end = await self._run(message)
            await self._writes.flush()  # the answer means the turn is saved
            return end
        finally:
            self._busy = False
            self._idle.set()

    def cancel(self) -> None:
        """Stop the running turn (no effect when idle); the prompt then ends `cancelled`."""
        if self._busy:
            self._cancelled.set()  # _stream's watcher cancels the loop, even one not started yet

    async def close(self, grace: float = 2.0) -> None:
        self.cancel()
        try:
            async with asyncio.timeout(grace):
                await self._idle.wait()
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
        """A session command, a prompt command, or a normal turn."""
        try:
            invocation = parse_invocation(message.text)
            if invocation is not None:
                name, arguments = invocation
                await asyncio.to_thread(self._files.reload)  # a command file added since the last prompt counts
                if (command := COMMANDS.get(name)) is not None:
                    return await command.run(self, arguments) or self._quiet_end()
                if (rendered := await self._render(name, arguments)) is not None:
                    message = replace(message, text=encodable(rendered))  # the images stay with it
            prepared = await self.mcp.prepare(message, self._cancelled)  # an MCP prompt is rendered here
        except CommandError as exc:
            await self._face.command_failed(str(exc))
            return self._quiet_end()
        if prepared is None:  # cancelled while an MCP prompt was rendering
            return self._quiet_end()
        return await self._stream(self.loop.run(prepared)) or self._quiet_end()

    async def _render(self, name: str, arguments: str) -> str | None:
        for source in self.prompt_commands:
            if (rendered := await source.render(name, arguments)) is not None:
                return rendered
        return None

    async def say(self, text: str) -> None:
        """Show `text` as the session's message (a command's output); the model does not see it."""
        await self._face.say(text)

    def _quiet_end(self) -> TurnEnd:
        return TurnEnd("cancelled" if self._cancelled.is_set() else "end_turn")

    async def _compact(self, arguments: str) -> TurnEnd | None:
        return await self._stream(self.loop.compact())

    async def _clear(self, arguments: str) -> None:
        self.loop.clear()
        if (store := self._store) is not None:
            self._writes.submit(lambda: store.clear(self.id))
        await self.say("Conversation cleared.")

    async def _check(self, arguments: str) -> TurnEnd | None:
        """One iac_check call on the workspace, shown like the model's and kept in the history."""
        return await self._stream(self.loop.run("/check", tool_call=workspace_check_call()))

    async def _preview(self, arguments: str) -> TurnEnd | None:
        """One iac_plan call on a root module (the workspace by default), shown like the model's."""
        return await self._stream(self.loop.run(f"/preview {arguments}".rstrip(), tool_call=preview_call(arguments)))

    async def _help(self, arguments: str) -> None:
        await self.say(help_text(self.commands()))

    async def _status(self, arguments: str) -> None:
        guard = await asyncio.to_thread(guard_status)  # the first use probes namespaces (a child process)
        await self.say(status_text(self.mode, self.model, guard, self.mcp.status()))

    async def _stream(self, events: AsyncGenerator[Event, None]) -> TurnEnd | None:
        """Show the loop's events as they come. Text that arrives while the face is busy waits, merged,
        in the loop's channel, so a slow client gets fewer, larger chunks."""
        watcher = asyncio.create_task(self._cancelled.wait())
        watcher.add_done_callback(lambda _: self.loop.cancel())
        end: TurnEnd | None = None
        try:
            async with contextlib.aclosing(events):  # closing it stops the turn if we fail mid-way
                async for event in events:
                    if self._writes.pending:  # what the user sees next follows saved history only
                        await self._writes.flush()
                    if isinstance(event, TurnEnd):
                        end = event
                    elif isinstance(event, PermissionRequest):
                        await self._answer(event)  # the stream already carried its ToolUseStart
                    elif isinstance(event, ElicitRequest):
                        answer = await self._unless_cancelled(self._face.elicit(event.call.id, event.question))
                        event.resolve(NotAnswered("cancelled") if answer is None else answer)
                    else:
                        await self._face.show(event)
        finally:
            watcher.cancel()
        return end

    # -- permissions -------------------------------------------------------------------------

    def _judge(self, call: JudgedCall) -> Verdict:
        return decide(call.access, self.mode, self.always.get(call.subject), self.rules.match(call))

    async def _cost(self, arguments: str) -> None:
        await self.say(spend_text(self.loop.spend))

    async def _permissions(self, arguments: str) -> None:
        """/permissions: the rules in force, the project's trust, the remembered answers; `/permissions trust`
        trusts the project (its allow rules apply from now on, in every session of this workspace)."""
        if arguments.strip() == "trust":
            if self._config_dir is None or not self.rules.project_files:
                raise CommandError("there is no project rules file (.iac-code/settings.json) to trust here")
            await asyncio.to_thread(remember_trust, self._config_dir, self.cwd, self.principal)
            self.rules = replace(
                self.rules,
                allow=self.rules.allow + self.rules.untrusted_allow,
                trusted=True,
                untrusted_allow=(),
            )
        elif arguments.strip():
            raise CommandError("usage: /permissions, or /permissions trust")
        await self.say(self.rules.described(dict(self.always)))

    async def _answer(self, request: PermissionRequest) -> None:
        choice = await self._ask(request)
        if choice == "cancelled":
            self._cancelled.set()
        elif (remembered := remembered_after(choice)) is not None:
            self.always[request.subject] = remembered
            self._save(RecordChanges(permissions=dict(self.always)))  # flushed with the turn
        request.resolve(choice)

    async def _ask(self, request: PermissionRequest) -> Choice:
        choice = await self._unless_cancelled(self._face.ask(request))
        return "cancelled" if choice is None else choice

    async def _unless_cancelled(self, question: Coroutine[Any, Any, _Answer]) -> _Answer | None:
        """The face's answer to `question`, or None when the turn is cancelled first."""
        asking = asyncio.ensure_future(question)
        cancelled = asyncio.ensure_future(self._cancelled.wait())
        try:
            await asyncio.wait({asking, cancelled}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancelled.cancel()
        if not asking.done():
            asking.cancel()  # the user was told to cancel the turn; stop waiting for the answer
            return None
        return asking.result()

    # -- state -------------------------------------------------------------------------------

    async def set_mode(self, mode: Mode) -> None:
        self.mode = mode
        self.loop.set_mode_instructions(mode_instructions(mode))  # from the next model call
        self._save(RecordChanges(mode=mode))
        await self._writes.flush()

    async def set_model(self, model: str) -> None:
        self.loop.set_model(model)  # from the next model call
        self._save(RecordChanges(model=model))
        await self._writes.flush()

    async def set_option(self, option_id: str, value: bool) -> None:
        """Turn one of the options (agent/options.py) on or off, from the next model call; kept with the session."""
        self._apply_option(option_id, value)
        self._save(RecordChanges(options=dict(self.options)))
        await self._writes.flush()

    def _apply_option(self, option_id: str, value: bool) -> None:
        if option_id in OPTION_IDS:  # one a later version dropped is forgotten
            self.options[option_id] = value
        if option_id == CHECK_EDITS:
            self.loop.check_edits = value

    def commands(self) -> list[CommandInfo]:
        """The session's commands, the prompt commands, then the prompts of the MCP servers ready now."""
        return listed(COMMANDS, self.prompt_commands, self.mcp.available_commands())

    async def announce_commands(self) -> None:
        """Tell the face the commands a client may offer (the command files are read again)."""
        await asyncio.to_thread(self._files.reload)
        await self._face.commands_changed(self.commands())
        await self._tell_skill_problems()

    async def _tell_skill_problems(self) -> None:
        """The skills that were skipped, told once: when the client first hears of the commands, or at the
        first prompt (headless)."""
        for problem in self._skill_commands.untold_problems():
            await self._face.notice("warning", SKILLS_TITLE, f"skipped {problem}")

    async def _mcp_problem(self, problem: str) -> None:
        await self._face.notice("warning", MCP_TITLE, problem)

    async def _name_after(self, text: str) -> None:
        first_line = next((line.strip() for line in text.splitlines() if line.strip()), "")
        if not first_line:
            return
        self.title = first_line[:TITLE_CHARS]
        self._save(RecordChanges(title=self.title))
        await self._face.titled(self.title)

    def _on_message(self, message: Message) -> None:
        if (store := self._store) is not None:
            self._writes.submit(lambda: store.append(self.id, message))

    def _save(self, changes: RecordChanges) -> None:
        if (store := self._store) is not None:
            self._writes.submit(lambda: store.update(self.id, changes))


# The session's own slash commands (session_commands.py): one entry per command.
COMMANDS: dict[str, SessionCommand[SessionCore]] = {
    "compact": SessionCommand("Summarise the conversation so far to free context", SessionCore._compact),
    "clear": SessionCommand("Forget the conversation and start afresh", SessionCore._clear),
    "help": SessionCommand("List the commands and modes", SessionCore._help),
    "check": SessionCommand(
        "Validate, lint and security-scan the workspace's infrastructure code (iac_check)", SessionCore._check
    ),
    "status": SessionCommand(
        "Show the mode, the model, the infrastructure guard and the MCP servers", SessionCore._status
    ),
    "cost": SessionCommand(
        "Show the tokens this session used (cached ones apart) and what they cost", SessionCore._cost
    ),
    "permissions": SessionCommand(
        "List the permission rules in force, the project's trust and the remembered answers",
        SessionCore._permissions,
        hint="[trust]",
    ),
    "preview": SessionCommand(
        "Show what applying a Terraform/OpenTofu module would change (iac_plan)", SessionCore._preview, hint="[dir]"
    ),
}
