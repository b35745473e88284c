"""The JSON-RPC method table: the SDK's router, plus the seed's aliases and uniform errors.

- `sessions/list` and `config/set` (the seed's names) reach `session/list` / `session/set_config_option`;
  `session/set_model` (removed from ACP, still sent by some clients) and `session/delete` (not routed by
  SDK 0.12), and `logout` (in its schema, not routed) are added.
- A missing `mcpServers` defaults to `[]` (the SDK model requires it; the seed calls it optional).
- `$/cancel_request` reaches the connection's requests in flight (cancellation.py says what it does).
- Invalid params answer -32602 with `data` naming each bad field, and so does a session whose stored
  files are damaged (`data.sessionId` says which and why); any other fault answers a bare -32603
  (details go to the log, never to the client). A notification with bad params is logged in one
  warning line and otherwise ignored.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

from acp import RequestError
from acp.agent.router import build_agent_router
from acp.connection import MethodHandler
from acp.router import MessageRouter, Route
from acp.schema import DeleteSessionRequest, LogoutRequest
from acp.utils import normalize_result
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from iac_code.acp.cancellation import CANCEL_REQUEST
from iac_code.errors import IacError, Unavailable
from iac_code.sessions.store import SessionDamaged

if TYPE_CHECKING:
    from acp.interfaces import Agent

    from iac_code.acp.agent import IacAgent
    from iac_code.acp.cancellation import InFlight

logger = logging.getLogger(__name__)

ALIASES = {"sessions/list": "session/list", "config/set": "session/set_config_option"}
_WITH_MCP_SERVERS = {"session/new", "session/load", "session/resume", "session/fork"}


class SetSessionModelRequest(BaseModel):
    """The removed `session/set_model` params (no longer in the SDK schema)."""

    model_config = ConfigDict(populate_by_name=True)
    session_id: str = Field(alias="sessionId")
    model_id: str = Field(alias="modelId")


# The agent of the connection whose message is being handled. One router serves every connection of the
# process: the SDK's router, built per connection, cost about 9 KB each (9 MB for 1,000 idle connections).
_serving: ContextVar[IacAgent] = ContextVar("iac_code_serving_agent")


_routers: dict[type[IacAgent], MessageRouter] = {}


def _shared_router(agent_class: type[IacAgent]) -> MessageRouter:
    router = _routers.get(agent_class)
    if router is None:
        router = _routers[agent_class] = _router_for(agent_class)
    return router


def _router_for(agent_class: type[IacAgent]) -> MessageRouter:
    # The SDK routes by the methods an agent has (IacAgent serves no ext_method/ext_notification, which the
    # router then answers "method not found"): the stand-in has a forwarder for each of the class's.
    methods = inspect.getmembers(agent_class, inspect.iscoroutinefunction)
    serving = SimpleNamespace(**{name: _forwarder(name) for name, _ in methods if not name.startswith("_")})
    router = build_agent_router(cast("Agent", serving), use_unstable_protocol=True)
    _add_extra_routes(router)
    return router


def _forwarder(name: str) -> Callable[..., Awaitable[Any]]:
    async def forward(**params: Any) -> Any:
        return await getattr(_serving.get(), name)(**params)

    return forward


def build_handler(agent: IacAgent, in_flight: InFlight) -> MethodHandler:
    """The connection's handler: each request runs through `in_flight` (cancellation.py), which
    `$/cancel_request` reaches."""
    router = _shared_router(type(agent))

    async def route(method: str, params: Any, is_notification: bool) -> Any:
        if method == CANCEL_REQUEST and is_notification:
            return await in_flight.cancel(params)
        if is_notification:
            return await router(method, params, True)
        return await in_flight.run(method, params, lambda: router(method, params, False))

    async def answer(method: str, params: Any, is_notification: bool) -> Any:
        try:
            return await route(method, _with_defaults(method, params), is_notification)
        except RequestError:
            raise
        except ValidationError as exc:
            raise RequestError.invalid_params(field_errors(exc)) from None
        except IacError as exc:
            if isinstance(exc, SessionDamaged | Unavailable):  # worth an operator's look
                logger.warning("%s: %s", method, exc)
            raise request_error(exc) from None
        except Exception:
            logger.exception("internal error in %s", method)
            raise RequestError(-32603, "Internal error") from None

    async def handle(method: str, params: Any, is_notification: bool) -> Any:
        _serving.set(agent)  # in the task handling this message: whom the shared router's handlers call
        if method == "initialize" and isinstance(params, dict):
            agent.client_said(params.get("clientCapabilities"))
        try:
            return await answer(method, params, is_notification)
        except RequestError as exc:
            if not is_notification:
                raise
            # Nobody waits for an answer, and the SDK would log a traceback for the client's mistake.
            logger.warning("ignored %s notification: %s %s", method, exc, exc.data or "")
            return None

    return handle


def _add_extra_routes(router: MessageRouter) -> None:
    for alias, target in ALIASES.items():

        async def forward(params: Any, target: str = target) -> Any:
            return await router(target, params, False)

        router.add_route(Route(method=alias, func=forward, kind="request"))

    async def set_model(params: Any) -> Any:
        request = SetSessionModelRequest.model_validate(params)
        return await _serving.get().set_model(model_id=request.model_id, session_id=request.session_id)

    async def delete(params: Any) -> Any:
        return await _serving.get().delete_session(session_id=DeleteSessionRequest.model_validate(params).session_id)

    async def logout(params: Any) -> Any:
        LogoutRequest.model_validate(params or {})  # not routed by SDK 0.12, though its schema has it
        return await _serving.get().logout()

    router.add_route(Route(method="logout", func=logout, kind="request", adapt_result=normalize_result))
    router.add_route(Route(method="session/set_model", func=set_model, kind="request", adapt_result=normalize_result))
    router.add_route(Route(method="session/delete", func=delete, kind="request", adapt_result=normalize_result))


def _with_defaults(method: str, params: Any) -> Any:
    if method in _WITH_MCP_SERVERS and isinstance(params, dict) and params.get("mcpServers") is None:
        return {**params, "mcpServers": []}
    return params


def request_error(exc: IacError) -> RequestError:
    """The one mapping of the neutral errors (errors.py) to JSON-RPC errors."""
    if exc.kind == "invalid_params":
        return RequestError.invalid_params(exc.data)
    if exc.kind == "auth_required":
        return RequestError(-32000, f"Authentication required: {exc.message}", exc.data or None)
    if exc.kind == "unavailable":
        return RequestError(-32603, exc.message, exc.data or None)
    return RequestError(-32603, "Internal error")


def field_errors(exc: ValidationError) -> dict[str, str]:
    """{"cwd": "Field required", "prompt.0.text": "Input should be a valid string"}."""
    errors: dict[str, str] = {}
    for error in exc.errors(include_url=False, include_input=False):
        name = ".".join(str(part) for part in error["loc"]) or "params"
        errors.setdefault(name, error["msg"])
    return errors
