"""The session host: one per process, the owner of every session's life whatever the protocol.

It opens the session store (once, on first need), creates the record of a new session (the one creation
path: ACP's early `session/new` on stdio, `session/new`, fork), opens headless's unsaved session, and hands
each client connection its
`ClientSessions` (client_sessions.py: restore, resume, fork, residency, close, delete, list). How a
session's runtime is put together is assembly.py's. The protocol face (acp/) and headless.py only
translate: parameters in, host calls, their responses out.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from iac_code.config import Settings
from iac_code.errors import Unavailable
from iac_code.host.workspaces import admitted_workspace
from iac_code.principals import Principal
from iac_code.sessions.audit import Audited, AuditTrail
from iac_code.sessions.owners import SessionOwners
from iac_code.sessions.store import SessionRecord, SessionStore

if TYPE_CHECKING:  # the early stdio answers import this module: its assembly's imports wait for a connection
    from pathlib import Path

    from iac_code.agent.face import SessionFace
    from iac_code.agent.policy import Mode, Remembered
    from iac_code.agent.session import SessionCore
    from iac_code.host.assembly import LoopMaker
    from iac_code.host.client_sessions import ClientSessions, Front

StoreOpener = Callable[[Settings], Awaitable[SessionStore]]


async def _open_store(settings: Settings) -> SessionStore:
    from iac_code.sessions.open import open_store

    return await open_store(settings)


ONE_SHOT_ID = "headless"  # the id a headless run's session has in the audit trail and the logs


class SessionHost:
    def __init__(
        self,
        settings: Settings,
        *,
        open_store: StoreOpener = _open_store,
        owners: SessionOwners | None = None,
        make_loop: LoopMaker | None = None,
    ) -> None:
        """`open_store` is called once, by the first call that needs the store. `owners`: which connection of
        the process holds each session's runtime (the cluster's, leased, when instances share a database).
        `make_loop`: tests' own loops (agent/factory.build_loop by default)."""
        self.settings = settings
        self.owners = owners if owners is not None else SessionOwners()
        self.make_loop = make_loop
        self._open_store = open_store
        self._store: SessionStore | None = None
        self._opening = asyncio.Lock()

    @property
    def opened(self) -> SessionStore | None:
        """The store, if a call has opened it."""
        return self._store

    async def store(self) -> SessionStore:
        """The process's session store, opened by the first call."""
        async with self._opening:
            if self._store is None:
                self._store = await self._open_store(self.settings)
            return self._store

    async def audit_trail(self) -> AuditTrail:
        """The trail of every decision, kept in the store's database (every store open_store opens keeps one)."""
        store = await self.store()
        if not isinstance(store, Audited):
            raise Unavailable("the session store keeps no audit trail", {"audit": "unavailable"})
        return store.audit_trail()

    async def close(self) -> None:
        if self._store is not None:
            await self._store.close()

    def workspace(self, principal: Principal, cwd: str) -> Path:
        """Where `principal` may open a session for `cwd` (workspaces.py); InvalidParams otherwise."""
        return admitted_workspace(self.settings, principal, cwd)

    def new_session_id(self) -> str:
        return f"sess_{uuid.uuid4().hex}"

    def new_record(self, principal: Principal, workspace: Path) -> SessionRecord:
        """A new session's record, owned by `principal`, with the configured model (its SDK not imported)."""
        from iac_code.providers.lazy import LazyProvider

        model = LazyProvider(self.settings).model  # ConfigError: model settings to fix
        return SessionRecord(self.new_session_id(), str(workspace), model=model, owner=principal.name)

    async def store_new(self, record: SessionRecord) -> None:
        """The one way a session comes to exist: its record stored (every face, the early answers too)."""
        await (await self.store()).create(record)

    def open_one_shot(
        self, face: SessionFace, workspace: Path, *, mode: Mode, remembered: dict[str, Remembered], trail: AuditTrail
    ) -> SessionCore:
        """A session nobody stores, for one headless turn (`iac-code -p`): its questions are answered from the
        command line's flags (`face`), its decisions still audited in `trail`, and its project trusted only
        by config.json's trustedProjects (nobody is there to have trusted it). Its MCP servers are
        config.json's; the caller starts them. ConfigError: model settings to fix; InvalidParams: a bad
        project rule."""
        from iac_code.host.assembly import SessionOpening, assemble
        from iac_code.principals import LOCAL

        record = SessionRecord(ONE_SHOT_ID, str(workspace), mode=mode, permissions=dict(remembered))
        opening = SessionOpening(
            ONE_SHOT_ID, workspace, LOCAL, record, answered_by="headless-flag", remembered_trust=False
        )
        return assemble(
            self.settings, opening, face, store=None, trail=trail, make_loop=self.make_loop, prewarm_checkers=False
        )

    def connect(self, principal: Principal, front: Front, owners: SessionOwners | None = None) -> ClientSessions:
        """One client connection's sessions; `owners` other than the host's: a backend's own (the cluster's)."""
        from iac_code.host.client_sessions import ClientSessions

        return ClientSessions(self, principal, front, owners if owners is not None else self.owners)
