"""The ACP method handlers: ACP in, the session host's calls (host/), ACP out. The SDK router validates params
and calls these with snake_case keywords; what a session is, where it lives and who may see it is the host's."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from acp.connection import Connection
from acp.schema import (
    ConfigOptionUpdate,
    CurrentModeUpdate,
    InitializeResponse,
    ListSessionsResponse,
    PromptResponse,
    SessionInfo,
    SetSessionConfigOptionResponse,
)

from iac_code.acp.client_io import known_capabilities
from iac_code.acp.config_options import MODE_IDS, Toggles, config_options, model_choices, session_state
from iac_code.acp.face import AcpFront, ConnectionPeer, prompt_turn, replay
from iac_code.acp.handshake import AUTH_METHOD_IDS, initialize_result
from iac_code.acp.outbox import Outbox
from iac_code.acp.prompt import PromptBlock
from iac_code.acp.responses import ForkSession, LoadSession, NewSession, ResumeSession
from iac_code.acp.schema_v1_21 import SessionUpdate
from iac_code.agent.options import OPTIONS
from iac_code.agent.policy import is_mode
from iac_code.agent.session import SessionCore
from iac_code.config import ConfigError
from iac_code.errors import AuthRequired, InvalidParams
from iac_code.host.host import SessionHost
from iac_code.principals import LOCAL, Principal
from iac_code.providers.images import images_enabled
from iac_code.providers.presets import available_models
from iac_code.providers.sign_in import sign_in, sign_out
from iac_code.sessions.owners import SessionOwners


class IacAgent:
    """The methods of one connection."""

    def __init__(
        self,
        host: SessionHost,
        outbox: Outbox,
        *,
        owners: SessionOwners | None = None,
        client_capabilities: Any = None,
        principal: Principal = LOCAL,
    ) -> None:
        self.settings = host.settings
        # the stdio transport may have answered initialize itself: the capabilities it was told
        self._front = AcpFront(outbox, client_capabilities)
        self._background: set[asyncio.Task[None]] = set()
        self.sessions = host.connect(principal, self._front, owners)

    def attach(self, connection: Connection) -> None:
        self._front.peer = ConnectionPeer(connection)

    async def shutdown(self) -> None:
        """The connection ended: stop every turn and free every session."""
        await self.sessions.shutdown()

    # -- methods -----------------------------------------------------------------------------

    def client_said(self, capabilities: Any) -> None:
        """The raw `clientCapabilities` of `initialize` (the router hands them over: the SDK's model drops v1.21's)."""
        self._front.capabilities = known_capabilities(capabilities)

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        return InitializeResponse.model_validate(initialize_result(self.settings, protocol_version))

    async def authenticate(self, method_id: str, **_: Any) -> None:
        """Sign in again after a `logout`, with the key the environment, the stored credentials or config.json
        hold now; -32000 naming what to set when there is none that works."""
        if method_id not in AUTH_METHOD_IDS:
            raise InvalidParams("methodId", f"must be one of {', '.join(sorted(AUTH_METHOD_IDS))}")
        try:
            sign_in(self.settings)
        except ConfigError as exc:
            raise AuthRequired(str(exc), {"config": str(exc)}) from None

    async def logout(self, **_: Any) -> None:
        """Forget the credentials stored for the user; no session opens until `authenticate` (sign_in.py). They
        are the process's: on a shared server, only an administrator may sign it out for everyone."""
        if not self.sessions.principal.admin:
            raise InvalidParams("method", "logout signs the whole server out: only an administrator may")
        sign_out(self.settings)

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, additional_directories: list[str] | None = None, **_: Any
    ) -> NewSession:
        core = await self.sessions.create(cwd, mcp_servers or [], additional_directories or [])
        self._spawn(core.announce_commands())  # after the response, which the outbox holds them for
        return NewSession.model_validate({"sessionId": core.id, **self._state(core)})

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **_: Any,
    ) -> LoadSession:
        """Replay the history, then answer: clients drop updates that come after the response."""
        live = self.sessions.live.get(session_id)
        if live is not None and live.busy:
            raise InvalidParams("sessionId", "a prompt is running for this session")
        core = await self.sessions.restore(session_id, cwd, mcp_servers or [], additional_directories or [])
        await replay(self._front.connected(), core, self._front.reports())
        await core.announce_commands()
        return LoadSession.model_validate(self._state(core))

    async def resume_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **_: Any,
    ) -> ResumeSession:
        core = await self.sessions.restore(session_id, cwd, mcp_servers or [], additional_directories or [])
        await core.announce_commands()
        return ResumeSession.model_validate(self._state(core))  # no sessionId: the client already has it

    async def fork_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **_: Any,
    ) -> ForkSession:
        core = await self.sessions.fork(session_id, cwd, mcp_servers or [], additional_directories or [])
        self._spawn(core.announce_commands())
        return ForkSession.model_validate({"sessionId": core.id, **self._state(core)})

    async def prompt(self, session_id: str, prompt: list[PromptBlock], **_: Any) -> PromptResponse:
        try:
            core = await self.sessions.get(session_id)
            return await prompt_turn(core, prompt, images_enabled(self.settings, core.model))
        finally:
            self.sessions.touch(session_id)  # idle from the end of the turn, not its start

    async def cancel(self, session_id: str, **_: Any) -> None:
        if (core := self.sessions.live.get(session_id)) is not None:
            core.cancel()

    async def close_session(self, session_id: str, **_: Any) -> None:
        await self.sessions.close(session_id)

    async def delete_session(self, session_id: str, **_: Any) -> None:
        await self.sessions.delete(session_id)

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **_: Any) -> ListSessionsResponse:
        records, next_cursor = await self.sessions.page(cwd, cursor)
        infos = [
            SessionInfo(
                session_id=r.session_id,
                cwd=r.cwd,
                title=r.title or None,
                updated_at=r.updated_at or None,
                additional_directories=r.additional_directories or None,
            )
            for r in records
        ]
        return ListSessionsResponse(sessions=infos, next_cursor=next_cursor)

    async def set_session_mode(self, mode_id: str, session_id: str, **_: Any) -> None:
        await self._set_mode(await self.sessions.get(session_id), "modeId", mode_id)

    async def set_model(self, model_id: str, session_id: str) -> None:
        await self._set_model(await self.sessions.get(session_id), "modelId", model_id)

    async def set_config_option(
        self, config_id: str, session_id: str, value: Any, **_: Any
    ) -> SetSessionConfigOptionResponse:
        core = await self.sessions.get(session_id)
        toggles = self._toggles(core)
        boolean = isinstance(value, bool)  # {type: "boolean"}: the SDK checked it
        if config_id == "mode" and not boolean:
            await self._set_mode(core, "value", value)
        elif config_id == "model" and not boolean:
            await self._set_model(core, "value", value)
        elif boolean and toggles is not None and config_id in toggles:
            await core.set_option(config_id, value)
            await self._push_config(core)
        else:  # a boolean option to a client that did not say it shows them is as unknown as any
            ids = ", ".join(option["id"] for option in self._options(core))
            raise InvalidParams(
                "configId", f"unknown {'boolean' if boolean else 'select'} config option {config_id!r} ({ids})"
            )
        return SetSessionConfigOptionResponse.model_validate({"configOptions": self._options(core)})

    async def _set_mode(self, core: SessionCore, field: str, value: object) -> None:
        """The one way a mode changes, whichever method asked: a client that follows the legacy `modes`
        and one that follows `configOptions` (the spec's preferred way) both hear of it."""
        if not is_mode(value):
            raise InvalidParams(field, f"must be one of {', '.join(MODE_IDS)}")
        await core.set_mode(value)
        await self._tell(core, CurrentModeUpdate(session_update="current_mode_update", current_mode_id=value))
        await self._push_config(core)

    async def _set_model(self, core: SessionCore, field: str, value: object) -> None:
        models = self._models(core)
        if not isinstance(value, str) or value not in models:
            raise InvalidParams(field, f"must be one of {', '.join(models)}")
        await core.set_model(value)
        await self._push_config(core)

    # -- helpers -----------------------------------------------------------------------------

    def _models(self, core: SessionCore) -> list[str]:
        return model_choices(core.model, available_models(self.settings))

    def _toggles(self, core: SessionCore) -> Toggles:
        """The session's on/off settings, all of them; None for a client without boolean config options."""
        if not self._front.offers_boolean_options():
            return None
        return {option.id: core.options.get(option.id, False) for option in OPTIONS}

    def _options(self, core: SessionCore) -> list[dict[str, Any]]:
        return config_options(core.mode, core.model, self._models(core), self._toggles(core))

    def _state(self, core: SessionCore) -> dict[str, Any]:
        return session_state(core.mode, core.model, self._models(core), self._toggles(core))

    async def _push_config(self, core: SessionCore) -> None:
        options = {"sessionUpdate": "config_option_update", "configOptions": self._options(core)}
        await self._tell(core, ConfigOptionUpdate.model_validate(options))

    async def _tell(self, core: SessionCore, update: SessionUpdate) -> None:
        await self._front.connected().update(core.id, update)

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
