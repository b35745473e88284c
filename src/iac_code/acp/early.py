"""What the stdio server answers while the SDK is still loading, and how it then hands over to the SDK.

Loading the SDK's schema (~280 pydantic models) takes half a second or more, most of a client's wait for
its first session. Two requests are answered without it, from the same code the agent answers them with:
`initialize` (handshake.py) and a plain `session/new` (a usable cwd, no MCP servers): its record is
stored and its state (config_options.session_state) answered at once. When the SDK serves the
connection, each session created this way is opened by an internal `session/resume` (what opening a
stored session is), whose response the client never sees, before anything else is handed over. Any
other message waits for the SDK, and so does everything after it: messages are never reordered.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from iac_code.acp.config_options import new_session_toggles
from iac_code.acp.handshake import initialize_result, is_plain_initialize
from iac_code.logs import log_frame

if TYPE_CHECKING:
    from acp._transport import Transport

    from iac_code.acp.early_session import EarlySessions
    from iac_code.host.host import SessionHost

logger = logging.getLogger(__name__)

Message = dict[str, Any]

_INTERNAL_ID = "iac-code/early/"  # + session id: the internal resume of a session answered early


class EarlyAnswers:
    """Answers given before the SDK has loaded, and the sessions they created."""

    def __init__(self, host: SessionHost) -> None:
        self._settings = host.settings
        self._host = host
        self._sessions: EarlySessions | None = None
        self.client_capabilities: Any = None  # from the last initialize answered here: the agent uses them

    async def answer(self, message: Message) -> Message | None:
        """The response to `message` if it can be given now, else None (the SDK will answer it)."""
        response = None
        if is_plain_initialize(message):
            result = initialize_result(self._settings, message["params"]["protocolVersion"])
            response = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            self.client_capabilities = message["params"].get("clientCapabilities")
        elif message.get("method") == "session/new" and not self._settings.database_url:  # files only
            response = await self._early_sessions().answer(message, new_session_toggles(self.client_capabilities))
        if response is not None and logger.isEnabledFor(logging.DEBUG):  # as the SDK-served connection logs
            log_frame(logger, False, message)
            log_frame(logger, True, response)
        return response

    def handover(
        self, transport: Transport, waiting: list[asyncio.Future[Any]], on_idle: Callable[[], None]
    ) -> Handover:
        """The transport the SDK-served connection reads (`waiting`: receives made while it loaded)."""
        created = self._sessions.created if self._sessions is not None else []
        return Handover(transport, created, waiting, on_idle)

    def _early_sessions(self) -> EarlySessions:
        # Imported on first use so that `initialize` does not wait for it; the loading thread imports it first.
        if self._sessions is None:
            from iac_code.acp.early_session import EarlySessions

            self._sessions = EarlySessions(self._host)
        return self._sessions


class Handover:
    """The transport the SDK-served connection reads: first an internal `session/resume` of each session
    answered early (its response kept from the client, and awaited), then the messages that arrived while
    the SDK loaded, then the live transport.

    `on_idle` runs once, the first time no request is left unanswered (nor received and unread): work
    started then (importing the model SDK, up to a second of CPU) does not compete for the GIL with a
    request the client is waiting for, and is done by the time the first prompt, typed meanwhile, comes.
    """

    def __init__(
        self,
        transport: Transport,
        created: list[tuple[str, str]],
        waiting: list[asyncio.Future[Any]],
        on_idle: Callable[[], None],
    ) -> None:
        self._transport = transport
        self._resumes = [_resume_request(session_id, cwd) for session_id, cwd in created]
        self._waiting = waiting
        self._internal_id: str | None = None
        self._resumed = asyncio.Event()
        self._resumed.set()
        self._unanswered: set[Any] = set()  # ids of the requests read and not answered yet
        self._on_idle: Callable[[], None] | None = on_idle

    async def receive(self) -> Message | None:
        await self._resumed.wait()  # the previous resume has opened its session
        if self._resumes:
            request = self._resumes.pop(0)
            self._internal_id = request["id"]
            self._resumed.clear()
            return self._read(request)
        if not (self._unanswered or self._received_unread()):
            self._idle()
        if self._waiting:
            return self._read(await self._waiting.pop(0))
        return self._read(await self._transport.receive())

    async def send(self, message: Message) -> None:
        is_response = "method" not in message
        if is_response and self._internal_id is not None and message.get("id") == self._internal_id:
            if "error" in message:  # deleted from disk meanwhile, by another window: later calls say not found
                logger.warning("could not open session %s: %s", message["id"], message["error"])
            self._internal_id = None
            self._resumed.set()
        else:
            await self._transport.send(message)
        if is_response and self._unanswered:
            self._unanswered.discard(message.get("id"))
            if not (self._unanswered or self._resumes or self._received_unread()):
                self._idle()

    async def close(self) -> None:
        await self._transport.close()

    def _received_unread(self) -> bool:
        """Whether a message that arrived while the SDK loaded is still to be read. The last receive
        made then may still be pending: the client has not sent anything since, which is idle."""
        return any(receiving.done() for receiving in self._waiting)

    def _read(self, message: Message | None) -> Message | None:
        if message is not None and "method" in message and "id" in message:
            self._unanswered.add(message["id"])
        return message

    def _idle(self) -> None:
        if self._on_idle is not None:
            on_idle, self._on_idle = self._on_idle, None
            on_idle()


def _resume_request(session_id: str, cwd: str) -> Message:
    params = {"sessionId": session_id, "cwd": cwd, "mcpServers": []}
    return {"jsonrpc": "2.0", "id": _INTERNAL_ID + session_id, "method": "session/resume", "params": params}
