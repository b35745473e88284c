"""One ACP session: the session core (agent/session.py) seen through ACP.

The core's loop events become `session/update`s (updates.py, presenter.py), its PermissionRequest a
`session/request_permission` whose answer goes back to it, its commands an `available_commands_update`,
its title a `session_info_update`; its messages are agent message chunks, each a message of its own (a
messageId of its own), its notices `notice` updates (or such messages, for a client that did not ask for
them), its compactions `compaction_update`s (likewise). Prompt content blocks become the user message here
(prompt.py), and the turn's end a PromptResponse, or the JSON-RPC error of a turn that failed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from acp import RequestError
from acp.connection import Connection
from acp.schema import (
    PromptResponse,
    RequestPermissionRequest,
    SessionInfoUpdate,
)

from iac_code.acp.client_io import known_capabilities, workspace_io
from iac_code.acp.commands import available_commands_update
from iac_code.acp.elicitation import METHOD as ELICIT
from iac_code.acp.elicitation import elicitation_request, parsed_answer, supported
from iac_code.acp.outbox import Outbox
from iac_code.acp.permissions import parse_answer
from iac_code.acp.presenter import permission_request
from iac_code.acp.prompt import PromptBlock, user_message
from iac_code.acp.replay import replay_updates
from iac_code.acp.schema_v1_21 import ClientCapabilities, NoticeUpdate, SessionNotification, SessionUpdate
from iac_code.acp.updates import compaction_updates, event_updates, message_chunk, turn_usage
from iac_code.agent.events import Compaction, ErrorReport, Event, NoticeSeverity, PermissionRequest
from iac_code.agent.policy import Choice
from iac_code.agent.session import SessionCore
from iac_code.agent.session_commands import CommandInfo
from iac_code.errors import AuthRequired, IacError, ModelCallFailed
from iac_code.messages import new_message_id
from iac_code.tools.backends import WorkspaceIO
from iac_code.tools.questions import UNSUPPORTED, Answer, Form, Link, NotAnswered
from iac_code.tools.workspace import Roots

logger = logging.getLogger(__name__)


class Peer(Protocol):
    """The client, as a session talks to it."""

    async def update(self, session_id: str, update: SessionUpdate) -> None: ...

    async def request_permission(self, request: RequestPermissionRequest) -> Any: ...

    async def request(self, method: str, params: dict[str, Any]) -> Any: ...


_DUMP: dict[str, Any] = {"mode": "json", "by_alias": True, "exclude_none": True}


class ConnectionPeer:
    """The client seen through one SDK connection (a Peer)."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    async def update(self, session_id: str, update: SessionUpdate) -> None:
        notification = SessionNotification(session_id=session_id, update=update)
        await self._connection.send_notification("session/update", notification.model_dump(**_DUMP))

    async def request_permission(self, request: RequestPermissionRequest) -> Any:
        return await self._connection.send_request("session/request_permission", request.model_dump(**_DUMP))

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Any other request to the client (fs/*, terminal/*); a JSON-RPC error raises RequestError."""
        return await self._connection.send_request(method, params)


@dataclass(frozen=True)
class ClientReports:
    """Which of the session updates a client must have asked for (`clientCapabilities.session`) it gets."""

    notices: bool = False
    compaction: bool = False


NO_REPORTS = ClientReports()


class AcpFace:
    """One session core's face on an ACP connection (a SessionFace): its events and questions become the
    client's `session/update`s, `session/request_permission`s and (when the client shows them)
    `elicitation/create`s."""

    def __init__(
        self,
        session_id: str,
        peer: Peer,
        capabilities: ClientCapabilities | None = None,
        reports: ClientReports = NO_REPORTS,
    ) -> None:
        self.id = session_id
        self._peer = peer
        self._capabilities = capabilities  # what the client offers (initialize): elicitation
        self._reports = reports

    # -- the core's face ---------------------------------------------------------------------

    async def show(self, event: Event) -> None:
        updates: Sequence[SessionUpdate]
        if isinstance(event, Compaction) and self._reports.compaction:
            updates = compaction_updates(event)
        else:
            updates = event_updates(event)
        for update in updates:
            await self._peer.update(self.id, update)

    async def say(self, text: str) -> None:
        await self._peer.update(self.id, message_chunk(text, new_message_id()))

    async def notice(self, severity: NoticeSeverity, title: str, detail: str) -> None:
        if self._reports.notices:
            await self._peer.update(self.id, NoticeUpdate(severity=severity, title=title, description=detail))
        else:
            await self.say(f"\n[{title}] {detail}\n")  # clients show agent messages in or out of a turn

    async def command_failed(self, text: str) -> None:
        await self.say(text)

    async def ask(self, request: PermissionRequest) -> Choice:
        try:
            answer = await self._peer.request_permission(permission_request(self.id, request))
        except (RequestError, ConnectionError) as exc:
            logger.warning("session %s: permission request failed (%s); denying", self.id, exc)
            return "reject_once"
        return parse_answer(answer, request.options)

    async def elicit(self, call_id: str, question: Form | Link) -> Answer:
        if not supported(self._capabilities, question):
            return UNSUPPORTED
        request = elicitation_request(self.id, call_id, question)
        try:
            answer = await self._peer.request(ELICIT, request.model_dump(**_DUMP))
        except (RequestError, ConnectionError) as exc:
            logger.warning("session %s: elicitation failed (%s)", self.id, exc)
            return NotAnswered("failed", str(exc))
        return parsed_answer(answer)

    async def titled(self, title: str) -> None:
        await self._peer.update(self.id, SessionInfoUpdate(session_update="session_info_update", title=title))

    async def commands_changed(self, commands: list[CommandInfo]) -> None:
        await self._peer.update(self.id, available_commands_update(commands))


async def prompt_turn(core: SessionCore, blocks: Sequence[PromptBlock], reads_images: bool) -> PromptResponse:
    """One `session/prompt`: its content blocks as the user message (prompt.py), its turn's end as the response."""
    core.refuse_if_busy()  # before the blocks are read: a second prompt is refused as it comes
    message = await user_message(blocks, core.workspace.roots, images=reads_images)
    end = await core.prompt(message)  # returns once the turn, what it streamed before a failure too, is saved
    if end.stop_reason == "error":
        # ACP v1's reasons have no "error", and "refusal" would tell the client to drop this prompt from the
        # context, which the session keeps: the failure is the request's error (a client's exit status).
        raise _turn_error(end.error or ErrorReport("the turn failed"))
    return PromptResponse(stop_reason=end.stop_reason, usage=turn_usage(end))


def _turn_error(report: ErrorReport) -> IacError:
    """-32000 for a key the provider refused (editors start their sign-in flow), -32603 with the provider's
    words for any other failed model call, plain -32603 for a bug (router.request_error)."""
    if report.kind == "auth":
        return AuthRequired(report.message)
    if report.kind == "model":
        return ModelCallFailed(report.message)
    return IacError(report.message)


async def replay(peer: Peer, core: SessionCore, reports: ClientReports = NO_REPORTS) -> None:
    """Show the whole history to the client again, as updates (for session/load)."""
    history, tools = core.loop.history, core.loop.tools
    for update in replay_updates(core.id, history, tools, core.cwd, compaction=reports.compaction):
        await peer.update(core.id, update)


class AcpFront:
    """The host's Front for one ACP connection (host/client_sessions.py): a face per session on the client,
    the client's fs and terminals where it offers them, and a new session's updates held for its response."""

    def __init__(self, outbox: Outbox, client_capabilities: Any = None) -> None:
        self.peer: ConnectionPeer | None = None  # once the connection is attached
        self.capabilities = known_capabilities(client_capabilities)  # from initialize: what the client offers
        self._outbox = outbox

    def connected(self) -> ConnectionPeer:
        assert self.peer is not None, "attach() the connection first"
        return self.peer

    def face(self, session_id: str, workspace: Path) -> AcpFace:
        return AcpFace(session_id, self.connected(), self.capabilities, self.reports())

    def offers_boolean_options(self) -> bool:
        """The client shows boolean config options (`session.configOptions.boolean`)."""
        session = self.capabilities.session if self.capabilities is not None else None
        return session is not None and session.config_options is not None and session.config_options.boolean is not None

    def reports(self) -> ClientReports:
        """The v1.21 session updates the client said it shows."""
        session = self.capabilities.session if self.capabilities is not None else None
        if session is None:
            return NO_REPORTS
        return ClientReports(notices=session.notices is not None, compaction=session.compaction is not None)

    def io(self, session_id: str, workspace: Roots) -> WorkspaceIO:
        return workspace_io(workspace, session_id, self._request, self.capabilities)

    def opening(self, session_id: str) -> None:
        self._outbox.hold(session_id)  # its updates wait for the response that gives the client its id

    async def _request(self, method: str, params: dict[str, Any]) -> Any:
        return await self.connected().request(method, params)
