"""`$/cancel_request` (ACP v1.21): the requests in flight on one connection, by id, and what cancelling each does.

Why a module of ours and not the SDK's Connection: the SDK (0.12) runs each request in a task of its own but
tells the handler only (method, params) — neither the id nor a way to find the task — and routes no
`$/cancel_request`. Rather than subclass its private `_execute_request`, the transport the Connection reads
through (`InFlight.reading`) puts each request's id in a context variable as the message is read; the
Connection creates the request's task right after, and a task starts with a copy of its creator's context,
so the handler (router.build_handler) knows the id of the request it serves and registers it here
(`InFlight.run`) before its first await. The `$/cancel_request` that follows is handled in a task created
later, so the request it names is already registered. One `InFlight` per Connection (server.serve makes
both: the stdio process, each HTTP or WebSocket client connection): an id is looked up only among the
requests of the connection that sent the cancel, whatever another connection's ids are.

What a cancel does, by method:
- `session/prompt`: what `session/cancel` does (the turn stops, its tools are stopped, a pending permission
  question is no longer waited for, the prompt answers `stopReason: "cancelled"`); a prompt whose turn has not
  started yet (its session loading, its resource links read) is stopped there and answers `cancelled` too.
- `session/new`, `load`, `resume`, `fork`: opening a session is not torn mid-way (a lease claimed, a record
  stored, MCP servers starting, a replay half sent): it runs to its end and is then undone — a new or forked
  session deleted (the client never learnt its id), a loaded or resumed one closed unless it was already
  open on this connection (its MCP servers stop) — and the request answers -32800.
- requests that only read (`initialize`, `authenticate`, `session/list`): the handler's task is cancelled
  and the request answers -32800.
- any other (a mode or model set, a close, a delete): the change is made whole and answered as usual, as the
  protocol allows for work that cannot be stopped; tearing it would leave half a change.
- an unknown or already answered id: nothing (a debug log); bad params: a warning, as for any notification.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from acp import RequestError
from acp.schema import CancelRequestNotification, PromptResponse

if TYPE_CHECKING:
    from acp._transport import Transport

    from iac_code.acp.agent import IacAgent
    from iac_code.acp.outbox import Outbox

logger = logging.getLogger(__name__)

CANCEL_REQUEST = "$/cancel_request"
REQUEST_CANCELLED = -32800  # the schema's ErrorCode "Request cancelled" (the SDK 0.12 names no constant)

_OPENING = frozenset({"session/new", "session/load", "session/resume", "session/fork"})
_CREATING = frozenset({"session/new", "session/fork"})  # the session did not exist before the request
_READING = frozenset({"initialize", "authenticate", "session/list", "sessions/list"})

RequestId = int | str
T = TypeVar("T")

# The id of the request whose message the connection's receive loop read last; each request's task starts
# with a copy of it (see the module docstring). None: a notification or a response.
_reading: ContextVar[RequestId | None] = ContextVar("iac_code_request_id", default=None)


@dataclass
class _Request:
    method: str
    task: asyncio.Task[Any]
    session_id: str | None  # the prompt's session; the session loaded or resumed
    cancelled: bool = False
    task_cancelled: bool = False  # its task stopped by the cancel (a reading request)


class InFlight:
    """The requests of one connection that have not been answered yet, and `$/cancel_request` for them."""

    def __init__(self, agent: IacAgent, outbox: Outbox) -> None:
        self._agent = agent
        self._outbox = outbox
        self._requests: dict[RequestId, _Request] = {}

    def reading(self, transport: Transport) -> Transport:
        """The transport the Connection reads through: it tells each request's task which id it serves."""
        return _IdReading(transport)

    def __len__(self) -> int:
        return len(self._requests)

    async def run(self, method: str, params: Any, work: Callable[[], Awaitable[T]]) -> T:
        """Answer one request (`work`), cancellable by its id while it runs; a request without one runs as is."""
        request_id = _reading.get()
        task = asyncio.current_task()
        if request_id is None or task is None or request_id in self._requests:  # a duplicate id keeps the first
            return await work()
        request = _Request(method, task, _session_id(params))
        self._requests[request_id] = request
        already_open = request.session_id in self._agent.sessions.live  # load/resume: nothing to undo then
        try:
            result = await work()
        except asyncio.CancelledError:
            if request.task_cancelled and task.uncancel() == 0:  # ours alone, not the connection closing
                if method == "session/prompt":
                    return cast(T, PromptResponse(stop_reason="cancelled"))
                raise _cancelled(request_id) from None
            raise
        finally:
            del self._requests[request_id]
        if request.cancelled and method in _OPENING:
            opened = _result_session_id(result) if method in _CREATING else request.session_id  # fork: not its source
            await self._undo_opening(method, opened, already_open)
            raise _cancelled(request_id)
        return result

    async def cancel(self, params: Any) -> None:
        """`$/cancel_request`: raises pydantic's ValidationError for bad params (the router logs it)."""
        request_id = CancelRequestNotification.model_validate(params).request_id
        request = self._requests.get(request_id) if request_id is not None else None
        if request is None or request.cancelled:
            logger.debug("cancel of request %r: not in flight, or cancelled already", request_id)
            return
        logger.debug("cancel of request %r (%s)", request_id, request.method)
        if request.method == "session/prompt":
            request.cancelled = True
            if request.session_id is not None and self._holds_turn(request_id, request.session_id):
                await self._agent.cancel(session_id=request.session_id)
            else:  # its turn has not started (the session loading, resource links read): it never will
                request.task_cancelled = True
                request.task.cancel()
        elif request.method in _OPENING:
            request.cancelled = True  # undone when it has opened
        elif request.method in _READING:
            request.cancelled = request.task_cancelled = True
            request.task.cancel()
        else:
            logger.debug("request %r (%s) is made whole: a change is not torn", request_id, request.method)

    def _holds_turn(self, request_id: object, session: str) -> bool:
        """Whether the session's running turn is this prompt's: the session is busy and this is the first of its
        prompts in flight (a later one is refused as the turn runs)."""
        core = self._agent.sessions.live.get(session)
        if core is None or not core.busy:
            return False
        prompts = (rid for rid, r in self._requests.items() if r.method == "session/prompt" and r.session_id == session)
        return next(prompts, None) == request_id

    async def _undo_opening(self, method: str, session_id: str | None, already_open: bool) -> None:
        if session_id is None:
            return
        try:
            if method in _CREATING:
                await self._agent.sessions.delete(session_id)
                # after the delete, which lets its first updates (the commands) be held: they go nowhere
                self._outbox.discard(session_id)
            elif not already_open and session_id in self._agent.sessions.live:
                await self._agent.sessions.close(session_id)
        except Exception:  # the client asked to cancel: it is answered so, whatever the undo met
            logger.exception("%s cancelled: session %s could not be undone", method, session_id)
            return
        logger.info("%s cancelled: session %s undone", method, session_id)


class _IdReading:
    """A Transport that notes the id of each request it hands to the Connection's receive loop."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    async def receive(self) -> dict[str, Any] | None:
        message = await self._transport.receive()
        is_request = message is not None and "method" in message and "id" in message
        _reading.set(_as_request_id(message["id"]) if message is not None and is_request else None)
        return message

    async def send(self, message: dict[str, Any]) -> None:
        await self._transport.send(message)

    async def close(self) -> None:
        await self._transport.close()


def _as_request_id(value: Any) -> RequestId | None:
    # bool is an int in Python, and JSON true is no id; null, floats and objects are not tracked either
    return value if isinstance(value, int | str) and not isinstance(value, bool) else None


def _session_id(params: Any) -> str | None:
    value = params.get("sessionId") if isinstance(params, dict) else None
    return value if isinstance(value, str) else None


def _result_session_id(result: Any) -> str | None:
    if isinstance(result, dict):
        return _session_id(result)
    value = getattr(result, "session_id", None)
    return value if isinstance(value, str) else None


def _cancelled(request_id: RequestId) -> RequestError:
    return RequestError(REQUEST_CANCELLED, "Request cancelled", {"requestId": request_id})
