"""ACP's WebSocket profile of /acp: `GET /acp` with `Upgrade: websocket`, JSON-RPC text frames both ways.

A socket is one more client of the Backend: what a client POSTs and reads on its connection's GET stream,
on one socket. A text frame in is checked as a POST body is, then handed to `backend.initialize` (the
first, which must be `initialize`) or `backend.post`; the connection stream's events go out as text
frames. So every deployment (one process, instances sharing PostgreSQL) serves WebSockets with its own
limits, principals and failover.

- A plain upgrade opens a connection: the 101 names its id (`Acp-Connection-Id`), and `initialize` must
  come within `initialize_timeout` (else close 1008). When the client ends the socket, the connection closes.
- An upgrade naming `Acp-Connection-Id` attaches to that connection (opened by a POST `initialize`, maybe
  on another instance), after `Last-Event-ID` if given; its end only detaches, like an SSE stream's.
- The upgrade must offer the `acp` subprotocol (else 400; `IAC_CODE_WEBSOCKET_WITHOUT_ACP` lets clients
  that offer none in, such as the ACP Python SDK's `acp.ws` client); the 101 picks it.
- Bad input never ends the socket: invalid JSON gets a -32700 error, a binary frame or anything else that
  is not one JSON-RPC message -32600 (id null, as JSON-RPC says); a request before `initialize`, or one the
  backend refuses, an error response to its id. uvicorn closes a frame over `max_body_bytes` with 1009
  (`ws_max_size`).
- The credential of the upgrade is checked again on every frame received, and the socket is closed with
  4401 (reason "the token expired" or "the token was revoked") when it stops holding: at a JWT's `exp`,
  or when the tokens file drops the token (auth.Authenticator.until_invalid); a socket that opened its
  connection closes it then, as on any end.
- Nothing is sent while idle: uvicorn's pings keep the socket alive. On shutdown every socket closes with
  1001 and leaves its connection to the backend's shutdown (with PostgreSQL another instance adopts it,
  and the client may attach to it there).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from typing import Any

from acp.http.protocol import CONNECTION_ID_HEADER, is_initialize_request
from starlette.websockets import WebSocket, WebSocketDisconnect

from iac_code.observability.record import websocket_closed, websocket_opened
from iac_code.principals import Principal
from iac_code.safe_json import dumps_bytes
from iac_code.transports.http.auth import Authenticator, Credential, refuse, request_credential
from iac_code.transports.http.backend import Backend, OpenStream, Reader, Refusal
from iac_code.transports.http.events import Event, last_event_id
from iac_code.transports.jsonrpc import (
    INVALID_REQUEST_CODE,
    SERVER_ERROR_CODE,
    error_response,
    is_request,
    parse_message,
)

logger = logging.getLogger(__name__)

ACP_SUBPROTOCOL = "acp"  # required (unless the operator says otherwise), and picked: a browser fails a handshake
# that picks none of its offers
# A WebSocket carries no event ids, so a `lost` notice (events trimmed before a reader got them) becomes
# an extension notification (ACP reserves names starting with "_"), its params the notice itself.
EVENTS_LOST_METHOD = "_iac-code/events_lost"

NORMAL_CLOSURE = 1000
GOING_AWAY = 1001
POLICY_VIOLATION = 1008
INTERNAL_ERROR = 1011
TRY_AGAIN_LATER = 1013
CREDENTIALS_ENDED = 4401  # application range (4000-4999): HTTP's 401, so a client knows to get a new token


class _Close(Exception):
    """End the socket with this close code and reason (at most 123 bytes)."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class _ClientGone(Exception):
    """The client closed the socket, or it broke: nothing more can be sent."""


class AcpWebSockets:
    """The WebSockets of one app; `begin_shutdown` (from the signal handler) ends them all."""

    def __init__(
        self,
        backend: Backend,
        authenticator: Authenticator,
        *,
        initialize_timeout: float,
        keepalive_seconds: float,
        require_acp: bool = True,
    ) -> None:
        self._backend = backend
        self._authenticator = authenticator
        self._require_acp = require_acp
        self._initialize_timeout = initialize_timeout
        self._keepalive_seconds = keepalive_seconds
        self._shutdown = asyncio.Event()
        self._open = 0
        self._none_open = asyncio.Event()
        self._none_open.set()

    def begin_shutdown(self) -> None:
        self._shutdown.set()

    async def all_closed(self) -> None:
        """Until every socket has ended (after `begin_shutdown`: each told 1001)."""
        await self._none_open.wait()

    async def serve(self, websocket: WebSocket) -> None:
        """The endpoint of `GET /acp` upgrades (AuthMiddleware let it in and named its principal)."""
        credential = request_credential(websocket.scope)
        principal = credential.principal
        if self._require_acp and ACP_SUBPROTOCOL not in websocket.scope.get("subprotocols", ()):
            reason = f"offer the {ACP_SUBPROTOCOL!r} WebSocket subprotocol (Sec-WebSocket-Protocol: {ACP_SUBPROTOCOL})"
            await refuse(websocket.scope, websocket.receive, websocket.send, 400, reason)
            return
        attach_to = websocket.headers.get(CONNECTION_ID_HEADER)
        try:
            opened = await self._attach(websocket, attach_to, principal) if attach_to else None
        except Refusal as refusal:
            await refuse(websocket.scope, websocket.receive, websocket.send, refusal.status, refusal.message)
            return
        connection_id = attach_to or str(uuid.uuid4())
        socket = _Socket(
            websocket, self._backend, credential, connection_id, opened, self._keepalive_seconds, self._authenticator
        )
        websocket_opened()
        self._open += 1
        self._none_open.clear()
        try:
            await self._run_until_shutdown(socket)
        finally:
            websocket_closed()
            self._open -= 1
            if not self._open:
                self._none_open.set()

    async def _attach(self, websocket: WebSocket, connection_id: str, principal: Principal) -> OpenStream:
        try:
            after = last_event_id(websocket.headers.get("last-event-id"))
        except ValueError as exc:
            raise Refusal(400, str(exc)) from None
        return await self._backend.open_stream(connection_id, None, after, principal)

    async def _run_until_shutdown(self, socket: _Socket) -> None:
        session = asyncio.create_task(socket.run(self._initialize_timeout))
        shutdown = asyncio.create_task(self._shutdown.wait())
        try:
            await asyncio.wait({session, shutdown}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            shutdown.cancel()
            if not session.done():  # shutting down (or cancelled): the connection outlives the socket
                socket.keep_connection = True
                session.cancel()
            await asyncio.gather(session, return_exceptions=True)
        if self._shutdown.is_set():
            await socket.close(GOING_AWAY, "the server is shutting down")


class _Socket:
    """One accepted socket: its connection's messages in, its connection stream's events out."""

    def __init__(
        self,
        websocket: WebSocket,
        backend: Backend,
        credential: Credential,
        connection_id: str,
        opened: OpenStream | None,  # attached to an existing connection; None: open one with initialize
        keepalive_seconds: float,
        authenticator: Authenticator,
    ) -> None:
        self._websocket = websocket
        self._backend = backend
        self._credential = credential
        self._principal = credential.principal
        self._authenticator = authenticator  # checks the credential again while the socket lasts
        self._connection_id = connection_id
        self._opened = opened
        self._keepalive_seconds = keepalive_seconds
        self._opens_connection = opened is None
        self._initialized = False  # the socket's own connection answered initialize
        self.keep_connection = False  # the server ends the socket: its connection stays
        self._sending = asyncio.Lock()  # the pump and the answers to bad input share the socket

    async def run(self, initialize_timeout: float) -> None:
        try:
            await self._accept()
            if self._opened is None:
                await self._open_connection(initialize_timeout)
            assert self._opened is not None
            await self._exchange(self._opened)
        except _Close as close:
            await self.close(close.code, close.reason)
        except _ClientGone:
            pass
        except Exception:
            logger.exception("WebSocket of connection %s failed", self._connection_id)
            await self.close(INTERNAL_ERROR, "internal error")
        finally:
            await self._end()

    async def close(self, code: int, reason: str) -> None:
        async with self._sending:
            with contextlib.suppress(WebSocketDisconnect, RuntimeError):  # the client may be gone already
                await self._websocket.close(code, reason)

    async def _accept(self) -> None:
        offered = self._websocket.scope.get("subprotocols", ())
        subprotocol = ACP_SUBPROTOCOL if ACP_SUBPROTOCOL in offered else None  # never a bearer.* one
        header = (CONNECTION_ID_HEADER.lower().encode(), self._connection_id.encode())
        try:
            await self._websocket.accept(subprotocol, headers=[header])
        except (WebSocketDisconnect, OSError) as exc:
            raise _ClientGone from exc

    async def _open_connection(self, initialize_timeout: float) -> None:
        """Wait for `initialize`, open the socket's connection with it and answer it."""
        try:
            async with asyncio.timeout(initialize_timeout):
                message = await self._wait_for_initialize()
        except TimeoutError:
            raise _Close(POLICY_VIOLATION, f"no initialize within {initialize_timeout:g}s") from None
        backend = self._backend
        try:
            _, response = await backend.initialize(message, initialize_timeout, self._principal, self._connection_id)
        except Refusal as refusal:
            await self._send_json(_refused(message["id"], refusal))
            raise _Close(_close_code(refusal), "initialize failed") from None
        self._initialized = True
        try:
            self._opened = await backend.open_stream(self._connection_id, None, None, self._principal)
        except Refusal as refusal:
            raise _Close(_close_code(refusal), "the connection's stream could not be opened") from None
        await self._send_json(response)

    async def _wait_for_initialize(self) -> dict[str, Any]:
        while True:
            message = await self._next_message()
            if is_initialize_request(message):
                return message
            if is_request(message):
                reason = "initialize first: the first request on a WebSocket must be initialize"
                await self._send_json(error_response(message["id"], INVALID_REQUEST_CODE, reason))
            else:
                logger.debug("connection %s: dropped a message sent before initialize", self._connection_id)

    async def _exchange(self, opened: OpenStream) -> None:
        """Messages in and events out until either side ends."""
        tasks = {asyncio.create_task(self._pump(opened)), asyncio.create_task(self._forward_forever())}
        if self._credential.can_end:
            tasks.add(asyncio.create_task(self._close_when_credential_ends()))
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, Exception):
                raise outcome
        # The stream ended: the connection closed, another reader took its stream, or the server stops.
        self.keep_connection = True
        if not self._backend.accepting:
            raise _Close(GOING_AWAY, "the server is shutting down")
        raise _Close(NORMAL_CLOSURE, "the connection closed, or another stream took it over")

    async def _close_when_credential_ends(self) -> None:
        reason = await self._authenticator.until_invalid(self._credential)
        logger.info("connection %s of %s: closing its WebSocket: %s", self._connection_id, self._principal.name, reason)
        raise _Close(CREDENTIALS_ENDED, reason)

    def _check_credential(self) -> None:
        """Every frame is the credential's again: one that stopped holding closes the socket first."""
        if not self._authenticator.still_valid(self._credential):
            expired = self._credential.expires_at is not None
            raise _Close(CREDENTIALS_ENDED, "the token expired" if expired else "the token was revoked")

    async def _forward_forever(self) -> None:
        while True:
            message = await self._next_message()
            try:
                await self._backend.post(self._connection_id, message, self._principal)
            except Refusal as refusal:
                if is_request(message):
                    await self._send_json(_refused(message["id"], refusal))
                else:
                    status, reason = refusal.status, refusal.message
                    logger.debug("connection %s: refused a message (%d): %s", self._connection_id, status, reason)

    async def _next_message(self) -> dict[str, Any]:
        """The client's next JSON-RPC message; what is not one is answered, and the socket goes on."""
        while True:
            frame = await self._websocket.receive()
            if frame["type"] == "websocket.disconnect":
                raise _ClientGone
            self._check_credential()
            text = frame.get("text")
            if text is None:
                reason = "binary frames carry no JSON-RPC here: send each message as one text frame"
                await self._send_json(error_response(None, INVALID_REQUEST_CODE, reason))
                continue
            message, (code, reason) = parse_message(text)
            if message is not None:
                return message
            await self._send_json(error_response(None, code, reason))

    async def _pump(self, opened: OpenStream) -> None:
        """Send the replay, then every event of the stream until it ends."""
        for event in opened.replay:
            await self._send_text(_text_of(event))
        reader = opened.reader
        while (batch := await reader.next_batch(self._keepalive_seconds)) is not None:
            await self._deliver(reader, batch)

    async def _deliver(self, reader: Reader, batch: list[Event]) -> None:
        sent = 0
        try:
            for event in batch:
                await self._send_text(_text_of(event))
                sent += 1
        finally:  # what was sent is delivered; the rest goes to the next reader
            if sent:
                reader.delivered(batch[:sent])
            if sent < len(batch):
                reader.give_back(batch[sent:])

    async def _send_json(self, message: dict[str, Any]) -> None:
        await self._send_text(dumps_bytes(message).decode())

    async def _send_text(self, text: str) -> None:
        async with self._sending:
            try:
                await self._websocket.send_text(text)
            except (WebSocketDisconnect, RuntimeError) as exc:  # uvicorn: RuntimeError once a close went out
                raise _ClientGone from exc

    async def _end(self) -> None:
        opened = self._opened
        if opened is not None:
            opened.reader.detach()
            opened.on_end()
        if self._opens_connection and self._initialized and not self.keep_connection and self._backend.accepting:
            logger.info("connection %s: its WebSocket ended; closing it", self._connection_id)
            with contextlib.suppress(Refusal):  # already closed (a DELETE, the idle reaper)
                await self._backend.close(self._connection_id, self._principal)


def _refused(request_id: Any, refusal: Refusal) -> dict[str, Any]:
    """The error response to a request the backend refused (the HTTP status a POST would get in data)."""
    return error_response(request_id, SERVER_ERROR_CODE, refusal.message, status=refusal.status)


def _close_code(refusal: Refusal) -> int:
    return TRY_AGAIN_LATER if refusal.status in (429, 503) else INTERNAL_ERROR


def _text_of(event: Event) -> str:
    if event.lost:
        notice = {"jsonrpc": "2.0", "method": EVENTS_LOST_METHOD, "params": json.loads(event.data)}
        return json.dumps(notice, separators=(",", ":"))
    return event.data.decode()
