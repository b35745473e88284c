"""One client connection's sessions, as the host gives them: created, restored (load, resume, a reload after
idling), forked, closed, deleted and listed, each seen only by the principal that owns it (ownership.py).

A session's runtime comes up one way (`_bring_up`: claimed in the process's owners, added to the
connection's residency, its client MCP servers' starts audited, then started), and a stored session is
opened only in the workspace it was recorded for, by the principal that owns it (or an admin).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from iac_code.agent.session import SessionCore, SessionFace
from iac_code.config import ConfigError, Settings
from iac_code.errors import AuthRequired, InvalidParams, SessionNotFound, Unavailable
from iac_code.host.assembly import SessionOpening, assemble
from iac_code.host.client_mcp import ClientMcp
from iac_code.host.ownership import may_delete, visible
from iac_code.host.residency import Residency
from iac_code.host.workspaces import FIELD, admitted_directories, check_recorded_cwd
from iac_code.iac.plans.store import discard_session_plans
from iac_code.messages import Message
from iac_code.principals import Principal
from iac_code.sessions.owners import SessionOwners
from iac_code.sessions.store import RecordChanges, SessionRecord, SessionStore
from iac_code.tools.backends import WorkspaceIO
from iac_code.tools.workspace import Roots

if TYPE_CHECKING:
    from iac_code.host.assembly import LoopMaker

logger = logging.getLogger(__name__)


class Host(Protocol):
    """What a connection's sessions need of the process's session host (host.py's SessionHost)."""

    settings: Settings
    make_loop: LoopMaker | None

    async def store(self) -> SessionStore: ...

    def workspace(self, principal: Principal, cwd: str) -> Path: ...

    def new_session_id(self) -> str: ...

    def new_record(self, principal: Principal, workspace: Path) -> SessionRecord: ...

    async def store_new(self, record: SessionRecord) -> None: ...


class Front(Protocol):
    """What a protocol gives the host for one connection."""

    def face(self, session_id: str, workspace: Path) -> SessionFace:
        """Where the session shows what happens and asks its questions."""
        ...

    def io(self, session_id: str, workspace: Roots) -> WorkspaceIO | None:
        """Where its tools read, write and run (the client's fs and terminals), confined to the session's roots
        (its cwd first); None: the local disk."""
        ...

    def opening(self, session_id: str) -> None:
        """A new session (new, fork) is about to start: what it says before the response must wait."""
        ...


class ClientSessions:
    def __init__(self, host: Host, principal: Principal, front: Front, owners: SessionOwners) -> None:
        self._host = host
        self.principal = principal  # its sessions are the only ones it may see (an admin sees all)
        self._front = front
        self._residency = Residency(host.settings.session_idle_seconds, owners=owners)
        self.live = self._residency.live
        # Each session's MCP servers as its client sent them (on a shared server: as admitted, commands by
        # their path), in memory only (env and headers may hold secrets): a session reloaded after idling
        # starts them again.
        self._client_servers: dict[str, Sequence[Any]] = {}
        self._client_mcp = ClientMcp(host.settings, principal, host.store)

    async def create(self, cwd: str, mcp_servers: list[Any], directories: Sequence[str] = ()) -> SessionCore:
        workspace = self._host.workspace(self.principal, cwd)
        additional = self._admitted_directories(directories)
        servers = await self._client_mcp.admitted(mcp_servers, workspace)
        with _model_settings_as_auth_required():
            record = self._host.new_record(self.principal, workspace)
        record.additional_directories = [str(directory) for directory in additional]
        store = await self._host.store()
        # assembled before it is stored: a bad project rule is refused with nothing left behind
        opening = SessionOpening(
            record.session_id, workspace, self.principal, record, (), servers, additional=additional
        )
        core = self._assemble(opening, store)
        await self._host.store_new(record)
        return await self._bring_up(core, fresh=True)

    async def restore(
        self, session_id: str, cwd: str, mcp_servers: list[Any], directories: Sequence[str] = ()
    ) -> SessionCore:
        """The session live in this connection, or rebuilt from the store (after a restart, a close, an
        eviction, or from another connection of this process, which then loses it). `directories` (ACP's
        additionalDirectories of load and resume) are its additional directories from now on, as the spec
        says (none when omitted), and stored: a reload after idling keeps them, and session/list shows them."""
        workspace = self._host.workspace(self.principal, cwd)
        additional = self._admitted_directories(directories)
        servers = await self._client_mcp.admitted(mcp_servers, workspace)
        if (core := self.live.get(session_id)) is not None:
            check_recorded_cwd(session_id, str(core.cwd), workspace)
            if core.workspace.additional == additional:
                self._residency.touch(session_id)
                return core
            if core.busy:  # its tools are at work in the roots it has: they change between turns only
                raise InvalidParams(FIELD, "a prompt is running for this session")
            await self._drop(session_id)  # its workspace is assembled anew (rules, skills, instructions)
        store = await self._stored(session_id, workspace)
        await self._residency.claim(session_id)  # before the log is read: the other runtime stops writing
        record, history = await store.load(session_id)
        if (core := self.live.get(session_id)) is not None:  # a concurrent call opened it meanwhile
            return core
        record = await self._with_directories(store, record, additional)
        return await self._bring_up(self._assemble_stored(store, record, history, servers), fresh=False)

    async def fork(
        self, session_id: str, cwd: str, mcp_servers: list[Any], directories: Sequence[str] = ()
    ) -> SessionCore:
        workspace = self._host.workspace(self.principal, cwd)
        additional = self._admitted_directories(directories)
        servers = await self._client_mcp.admitted(mcp_servers, workspace)
        store = await self._stored(session_id, workspace)
        fork_id = self._host.new_session_id()
        if (source := self.live.get(session_id)) is not None:
            await source.flush()
        await store.fork(session_id, fork_id, owner=self.principal.name)  # the log so far: complete messages only
        record, history = await store.load(fork_id)
        record = await self._with_directories(store, record, additional)
        return await self._bring_up(self._assemble_stored(store, record, history, servers), fresh=True)

    async def get(self, session_id: str) -> SessionCore:
        """The session's runtime, reloaded from the store if it was evicted for idleness."""
        core = self.live.get(session_id)
        if core is None and session_id in self._residency.evicted:
            store = await self._host.store()
            try:
                record, history = await store.load(session_id)
            except SessionNotFound:  # deleted meanwhile (by another window)
                self._residency.evicted.discard(session_id)
                raise
            # While the store loaded, a concurrent call may have reloaded it, or a close forgotten it.
            core = self.live.get(session_id)
            if core is None and session_id in self._residency.evicted:
                servers = self._client_servers.get(session_id, [])
                core = await self._bring_up(self._assemble_stored(store, record, history, servers), fresh=False)
                logger.debug("session %s reloaded after idling", session_id)
        if core is None:
            raise SessionNotFound(session_id)
        self._residency.touch(session_id)
        return core

    def touch(self, session_id: str) -> None:
        """The session was used: idle from now (a prompt's end, not its start)."""
        if session_id in self.live:
            self._residency.touch(session_id)

    async def close(self, session_id: str) -> None:
        """Free the runtime; the history stays in the store, and load or resume brings it back."""
        if session_id not in self.live and session_id not in self._residency.evicted:
            raise SessionNotFound(session_id)
        await self._drop(session_id)

    async def delete(self, session_id: str) -> None:
        store = await self._host.store()
        if not await may_delete(store, self.principal, session_id):
            return  # like an unknown id: nothing to delete, and nothing said about whose it is
        await self._residency.claim(session_id)  # another connection must not go on writing to it
        await self._drop(session_id)
        await store.delete(session_id)
        await asyncio.to_thread(discard_session_plans, self._host.settings.config_dir, session_id)  # iac_plan's

    async def page(self, cwd: str | None, cursor: str | None) -> tuple[list[SessionRecord], str | None]:
        """A page of the sessions this principal may see (an admin: all), newest first."""
        store = await self._host.store()
        owner = None if self.principal.admin else self.principal.name
        try:
            return await store.list(cwd, cursor, owner=owner)
        except ValueError:
            raise InvalidParams("cursor", "invalid cursor: pass a nextCursor as received") from None

    async def shutdown(self) -> None:
        """The connection ended: stop every turn and free every session."""
        await asyncio.gather(*(core.close() for core in self._residency.forget_all()))
        self._client_servers.clear()

    # -- bringing a runtime up ---------------------------------------------------------------

    def _admitted_directories(self, directories: Sequence[str]) -> tuple[Path, ...]:
        return admitted_directories(self._host.settings, self.principal, directories)

    @staticmethod
    async def _with_directories(
        store: SessionStore, record: SessionRecord, additional: tuple[Path, ...]
    ) -> SessionRecord:
        """`record` with `additional` as its additional directories, stored when they changed."""
        wanted = [str(directory) for directory in additional]
        if record.additional_directories == wanted:
            return record
        return await store.update(record.session_id, RecordChanges(additional_directories=wanted))

    async def _stored(self, session_id: str, workspace: Path) -> SessionStore:
        """The store, once it is known to hold the session, recorded for `workspace`, visible to the principal."""
        store = await self._host.store()
        record = await store.get(session_id)
        if not visible(self.principal, record):  # another principal's: answered as an unknown id, before its cwd shows
            logger.info("%s asked for session %s, which is not theirs", self.principal.name, session_id)
            raise SessionNotFound(session_id)
        check_recorded_cwd(session_id, record.cwd, workspace)
        return store

    def _assemble_stored(
        self, store: SessionStore, record: SessionRecord, history: list[Message], servers: Sequence[Any]
    ) -> SessionCore:
        # the directories as admitted at the last attach (a reload after idling checks nothing again)
        additional = tuple(Path(directory) for directory in record.additional_directories)
        opening = SessionOpening(
            record.session_id, Path(record.cwd), self.principal, record, history, servers, additional=additional
        )
        return self._assemble(opening, store)

    def _assemble(self, opening: SessionOpening, store: SessionStore) -> SessionCore:
        session_id, root = opening.session_id, opening.root
        with _model_settings_as_auth_required():
            core = assemble(
                self._host.settings,
                opening,
                self._front.face(session_id, root),
                store=store,
                io=self._front.io(session_id, (root, *opening.additional)),
                make_loop=self._host.make_loop,
            )
        self._client_servers[session_id] = opening.mcp_servers
        return core

    async def _bring_up(self, core: SessionCore, *, fresh: bool) -> SessionCore:
        """The one way a runtime comes to live in this connection: claimed, added, its MCP servers started.
        Returns the live runtime: another call may have brought the same session up while the claim waited
        (a lease)."""
        await self._residency.claim(core.id)
        if (live := self.live.get(core.id)) is not None:
            core.release()
            return live
        try:
            await self._client_mcp.record_starts(core.id, self._client_servers.get(core.id, []))
        except Unavailable:
            core.release()
            raise
        self._residency.add(core)
        if fresh:
            self._front.opening(core.id)
        core.mcp.start()
        return core

    async def _drop(self, session_id: str) -> None:
        core = self.live.get(session_id)
        self._residency.forget(session_id)
        self._client_servers.pop(session_id, None)
        if core is not None:
            await core.close()


@contextlib.contextmanager
def _model_settings_as_auth_required() -> Iterator[None]:
    """Model settings that cannot make a provider: what initialize's auth method says to set."""
    try:
        yield
    except ConfigError as exc:
        raise AuthRequired(str(exc), {"config": str(exc)}) from None
