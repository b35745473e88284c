"""The ACP method handlers. The SDK router validates params and calls these with snake_case keywords."""

from __future__ import annotations

import asyncio
import functools
import logging
import uuid
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from acp.connection import Connection
from acp.schema import (
    ClientCapabilities,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    InitializeResponse,
    ListSessionsResponse,
    PromptResponse,
    SessionInfo,
    SetSessionConfigOptionResponse,
)
from pydantic import ValidationError

from iac_code.acp.client_io import workspace_io
from iac_code.acp.client_mcp import ClientMcp
from iac_code.acp.config_options import MODE_IDS, config_options, model_choices, session_state
from iac_code.acp.handshake import initialize_result
from iac_code.acp.outbox import Outbox
from iac_code.acp.ownership import may_delete, visible
from iac_code.acp.prompt import PromptBlock
from iac_code.acp.residency import Residency
from iac_code.acp.responses import ForkSession, LoadSession, NewSession, ResumeSession
from iac_code.acp.session import ConnectionPeer, Session, SessionUpdate
from iac_code.acp.workspaces import admitted_workspace, check_recorded_cwd
from iac_code.agent.factory import LoopParts, build_loop
from iac_code.agent.loop import AgentLoop
from iac_code.agent.policy import Mode, is_mode
from iac_code.agent.rules import RulesError, load_rules
from iac_code.agent.session import Session as SessionCore
from iac_code.config import ConfigError, Settings
from iac_code.errors import AuthRequired, InvalidParams, SessionNotFound, Unavailable
from iac_code.iac.plans.store import discard_session_plans
from iac_code.mcp import hub_for_session
from iac_code.messages import Message
from iac_code.principals import LOCAL, Principal
from iac_code.providers.images import images_enabled
from iac_code.providers.lazy import LazyProvider
from iac_code.providers.presets import available_models
from iac_code.sessions.owners import SessionOwners
from iac_code.sessions.store import SessionRecord, SessionStore

logger = logging.getLogger(__name__)

# (the session's workspace, what the session gives its loop) → its loop; tests pass their own
WorkspaceLoopFactory = Callable[[Path, LoopParts], AgentLoop]


class IacAgent:
    """The methods of one connection. Its sessions' runtimes come and go as residency.py says."""

    def __init__(
        self,
        settings: Settings,
        outbox: Outbox,
        *,
        store: SessionStore | None = None,
        owners: SessionOwners | None = None,
        make_loop: WorkspaceLoopFactory | None = None,
        client_capabilities: Any = None,
        principal: Principal = LOCAL,
    ) -> None:
        self.settings = settings
        # Who is asking: its sessions are the only ones it may see (an admin sees all; see _stored_record).
        self.principal = principal
        # What the client offers (fs, terminal); the stdio transport may have answered initialize itself.
        self._client_capabilities = _capabilities(client_capabilities)
        owners = owners if owners is not None else SessionOwners()  # one connection alone in its process
        self._residency = Residency(settings.session_idle_seconds, can_reload=store is not None, owners=owners)
        self.sessions = self._residency.live
        self._outbox = outbox
        self._store = store
        self._make_loop = make_loop or self._build_loop
        self._peer: ConnectionPeer | None = None
        self._background: set[asyncio.Task[None]] = set()
        # Each session's MCP servers as its client sent them (on a shared server: as admitted, commands by
        # their path), in memory only (env and headers may hold secrets): a session reloaded after idling
        # starts them again.
        self._client_servers: dict[str, list[Any]] = {}
        self._client_mcp = ClientMcp(settings, principal, store)  # what this principal's clients may start

    def attach(self, connection: Connection) -> None:
        self._peer = ConnectionPeer(connection)

    async def shutdown(self) -> None:
        """The connection ended: stop every turn and free every session."""
        await asyncio.gather(*(session.close() for session in self._residency.forget_all()))
        self._client_servers.clear()

    # -- methods -----------------------------------------------------------------------------

    async def initialize(
        self, protocol_version: int, client_capabilities: ClientCapabilities | None = None, **_: Any
    ) -> InitializeResponse:
        self._client_capabilities = client_capabilities
        return InitializeResponse.model_validate(initialize_result(self.settings, protocol_version))

    async def authenticate(self, method_id: str, **_: Any) -> None:
        # Credentials come from the environment; there is nothing to do at runtime.
        return None

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any) -> NewSession:
        workspace = self._workspace(cwd)
        servers = await self._client_mcp.admitted(mcp_servers or [], workspace)
        session_id = _new_id()
        session = self._open(session_id, workspace, servers)
        if self._store is not None:
            record = SessionRecord(session_id, str(workspace), model=session.core.model, owner=self.principal.name)
            await self._store.create(record)
        session = await self._bring_up(session, fresh=True)
        return NewSession.model_validate({"sessionId": session_id, **self._state(session)})

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> LoadSession:
        """Replay the history, then answer: clients drop updates that come after the response."""
        live = self.sessions.get(session_id)
        if live is not None and live.busy:
            raise InvalidParams("sessionId", "a prompt is running for this session")
        session = await self._restore(session_id, cwd, mcp_servers or [])
        await session.replay()
        await session.core.announce_commands()
        return LoadSession.model_validate(self._state(session))

    async def resume_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> ResumeSession:
        session = await self._restore(session_id, cwd, mcp_servers or [])
        await session.core.announce_commands()
        return ResumeSession.model_validate(self._state(session))  # no sessionId: the client already has it

    async def fork_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> ForkSession:
        workspace = self._workspace(cwd)
        servers = await self._client_mcp.admitted(mcp_servers or [], workspace)
        store = await self._stored_record(session_id, workspace)
        fork_id = _new_id()
        if (source := self.sessions.get(session_id)) is not None:
            await source.flush()
        await store.fork(session_id, fork_id, owner=self.principal.name)  # the log so far: complete messages only
        record, history = await store.load(fork_id)
        session = self._open(fork_id, workspace, servers, record, history)
        session = await self._bring_up(session, fresh=True)
        return ForkSession.model_validate({"sessionId": fork_id, **self._state(session)})

    async def prompt(self, session_id: str, prompt: list[PromptBlock], **_: Any) -> PromptResponse:
        try:
            return await (await self._live(session_id)).prompt(prompt)
        finally:
            if session_id in self.sessions:
                self._residency.touch(session_id)  # idle from the end of the turn, not its start

    async def cancel(self, session_id: str, **_: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def close_session(self, session_id: str, **_: Any) -> None:
        """Free the runtime; the history stays in the store, and load or resume brings it back."""
        if session_id not in self.sessions and session_id not in self._residency.evicted:
            raise SessionNotFound(session_id)
        session = self.sessions.get(session_id)
        self._residency.forget(session_id)
        self._client_servers.pop(session_id, None)
        if session is not None:
            await session.close()

    async def delete_session(self, session_id: str, **_: Any) -> None:
        if self._store is not None and not await may_delete(self._store, self.principal, session_id):
            return  # like an unknown id: nothing to delete, and nothing said about whose it is
        await self._residency.claim(session_id)  # another connection must not go on writing to it
        session = self.sessions.get(session_id)
        self._residency.forget(session_id)
        self._client_servers.pop(session_id, None)
        if session is not None:
            await session.close()
        if self._store is not None:
            await self._store.delete(session_id)
        await asyncio.to_thread(discard_session_plans, self.settings.config_dir, session_id)  # iac_plan's files

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **_: Any) -> ListSessionsResponse:
        if self._store is None:
            infos = [
                SessionInfo(session_id=s.id, cwd=str(s.cwd), title=s.core.title or None)
                for s in self.sessions.values()
                if cwd is None or str(s.cwd) == cwd
            ]
            return ListSessionsResponse(sessions=infos)
        try:
            owner = None if self.principal.admin else self.principal.name
            records, next_cursor = await self._store.list(cwd, cursor, owner=owner)
        except ValueError:
            raise InvalidParams("cursor", "invalid cursor: pass a nextCursor as received") from None
        infos = [
            SessionInfo(session_id=r.session_id, cwd=r.cwd, title=r.title or None, updated_at=r.updated_at or None)
            for r in records
        ]
        return ListSessionsResponse(sessions=infos, next_cursor=next_cursor)

    async def set_session_mode(self, mode_id: str, session_id: str, **_: Any) -> None:
        await self._set_mode(await self._live(session_id), "modeId", mode_id)

    async def set_model(self, model_id: str, session_id: str) -> None:
        await self._set_model(await self._live(session_id), "modelId", model_id)

    async def set_config_option(
        self, config_id: str, session_id: str, value: Any, **_: Any
    ) -> SetSessionConfigOptionResponse:
        session = await self._live(session_id)
        if config_id == "mode":
            await self._set_mode(session, "value", value)
        elif config_id == "model":
            await self._set_model(session, "value", value)
        else:
            raise InvalidParams("configId", f"unknown config option {config_id!r} (mode, model)")
        return SetSessionConfigOptionResponse.model_validate({"configOptions": self._options(session)})

    async def _set_mode(self, session: Session, field: str, value: object) -> None:
        """The one way a mode changes, whichever method asked: a client that follows the legacy `modes`
        and one that follows `configOptions` (the spec's preferred way) both hear of it."""
        if not is_mode(value):
            raise InvalidParams(field, f"must be one of {', '.join(MODE_IDS)}")
        await session.core.set_mode(value)
        await self._tell(session, CurrentModeUpdate(session_update="current_mode_update", current_mode_id=value))
        await self._push_config(session)

    async def _set_model(self, session: Session, field: str, value: object) -> None:
        models = self._models(session)
        if not isinstance(value, str) or value not in models:
            raise InvalidParams(field, f"must be one of {', '.join(models)}")
        await session.core.set_model(value)
        await self._push_config(session)

    # -- sessions in memory ------------------------------------------------------------------

    async def _live(self, session_id: str) -> Session:
        """The session's runtime, reloaded from the store if it was evicted for idleness."""
        session = self.sessions.get(session_id)
        if session is None and session_id in self._residency.evicted and self._store is not None:
            try:
                record, history = await self._store.load(session_id)
            except SessionNotFound:  # deleted meanwhile (by another window)
                self._residency.evicted.discard(session_id)
                raise
            # While the store loaded, a concurrent call may have reloaded it, or a close forgotten it.
            session = self.sessions.get(session_id)
            if session is None and session_id in self._residency.evicted:
                servers = self._client_servers.get(session_id, [])
                opened = self._open(session_id, Path(record.cwd), servers, record, history)
                session = await self._bring_up(opened, fresh=False)
                logger.debug("session %s reloaded after idling", session_id)
        if session is None:
            raise SessionNotFound(session_id)
        self._residency.touch(session_id)
        return session

    async def _restore(self, session_id: str, cwd: str, mcp_servers: list[Any]) -> Session:
        """The session live in this connection, or rebuilt from the store (after a restart, a close,
        an eviction, or from another connection of this process, which then loses it)."""
        workspace = self._workspace(cwd)
        mcp_servers = await self._client_mcp.admitted(mcp_servers, workspace)
        session = self.sessions.get(session_id)
        if session is not None:
            check_recorded_cwd(session_id, str(session.cwd), workspace)
            self._residency.touch(session_id)
            return session
        store = await self._stored_record(session_id, workspace)
        await self._residency.claim(session_id)  # before the log is read: the other runtime stops writing
        record, history = await store.load(session_id)
        session = self.sessions.get(session_id)  # a concurrent call may have opened it meanwhile
        if session is None:
            opened = self._open(session_id, workspace, mcp_servers, record, history)
            session = await self._bring_up(opened, fresh=False)
        return session

    async def _stored_record(self, session_id: str, workspace: Path) -> SessionStore:
        """The store, once it is known to hold the session, recorded for `workspace`."""
        if self._store is None:
            raise SessionNotFound(session_id)
        record = await self._store.get(session_id)
        if not visible(self.principal, record):  # another principal's: answered as an unknown id, before its cwd shows
            logger.info("%s asked for session %s, which is not theirs", self.principal.name, session_id)
            raise SessionNotFound(session_id)
        check_recorded_cwd(session_id, record.cwd, workspace)
        return self._store

    async def _bring_up(self, session: Session, *, fresh: bool) -> Session:
        """The one way a runtime comes to live in this connection: claimed, added, its MCP servers started.
        A `fresh` session (new, fork) has its updates held until the response is out, and announces its
        commands after it; a restored one announces them in its own response's time. Returns the live
        runtime: another call may have brought the same session up while the claim waited (a lease)."""
        await self._residency.claim(session.id)
        if (live := self.sessions.get(session.id)) is not None:
            session.release()
            return live
        try:
            await self._client_mcp.record_starts(session.id, self._client_servers.get(session.id, []))
        except Unavailable:
            session.release()
            raise
        self._residency.add(session)
        if fresh:
            self._outbox.hold(session.id)
        session.core.mcp.start()
        if fresh:
            self._spawn(session.core.announce_commands())
        return session

    # -- helpers -----------------------------------------------------------------------------

    def _open(
        self,
        session_id: str,
        workspace: Path,
        mcp_servers: list[Any],
        record: SessionRecord | None = None,
        history: list[Message] | None = None,
    ) -> Session:
        assert self._peer is not None, "attach() the connection first"
        mode: Mode = record.mode if record is not None and is_mode(record.mode) else "default"
        settings = self.settings
        try:
            trusted, config_dir = settings.trusted_projects, settings.config_dir
            rules = load_rules(workspace, settings.permissions, trusted, config_dir, principal=self.principal)
        except RulesError as exc:  # a bad rule in the project's .iac-code/settings.json, named with its file
            raise InvalidParams("cwd", str(exc)) from None
        try:
            core = functools.partial(
                SessionCore,
                session_id,
                workspace,
                make_loop=functools.partial(self._make_loop, workspace),
                store=self._store,
                mcp=functools.partial(hub_for_session, self.settings, mcp_servers, workspace),
                mode=mode,
                title=record.title if record is not None else "",
                always=record.permissions if record is not None else None,
                model=record.model if record is not None else "",
                history=history or [],
                principal=self.principal,
                io=workspace_io(workspace, session_id, self._client_request, self._client_capabilities),
                config_dir=self.settings.config_dir,
                rules=rules,
            )
            session = Session(
                session_id,
                workspace,
                self._peer,
                lambda face: core(face=face),
                reads_images=lambda model: images_enabled(self.settings, model),
            )
        except ConfigError as exc:  # initialize advertised the env-var auth method for this
            raise AuthRequired(str(exc), {"config": str(exc)}) from None
        self._client_servers[session_id] = mcp_servers
        return session

    def _workspace(self, cwd: str) -> Path:
        return admitted_workspace(self.settings, self.principal, cwd)

    async def _client_request(self, method: str, params: dict[str, Any]) -> Any:
        assert self._peer is not None
        return await self._peer.request(method, params)

    def _build_loop(self, workspace: Path, parts: LoopParts) -> AgentLoop:
        # session/new must not wait for a model SDK to import: the provider is built on first use
        return build_loop(self.settings, LazyProvider(self.settings), workspace, parts, prewarm_checkers=True)

    def _models(self, session: Session) -> list[str]:
        return model_choices(session.core.model, available_models(self.settings))

    def _options(self, session: Session) -> list[dict[str, Any]]:
        return config_options(session.core.mode, session.core.model, self._models(session))

    def _state(self, session: Session) -> dict[str, Any]:
        return session_state(session.core.mode, session.core.model, self._models(session))

    async def _push_config(self, session: Session) -> None:
        options = {"sessionUpdate": "config_option_update", "configOptions": self._options(session)}
        await self._tell(session, ConfigOptionUpdate.model_validate(options))

    async def _tell(self, session: Session, update: SessionUpdate) -> None:
        assert self._peer is not None
        await self._peer.update(session.id, update)

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)


def _capabilities(value: Any) -> ClientCapabilities | None:
    """The client's capabilities from raw initialize params; None (use none of them) when unusable."""
    if value is None or isinstance(value, ClientCapabilities):
        return value
    try:
        return ClientCapabilities.model_validate(value)
    except ValidationError:
        logger.warning("unusable clientCapabilities in initialize: the client's fs and terminal are not used")
        return None


def _new_id() -> str:
    return f"sess_{uuid.uuid4().hex}"
