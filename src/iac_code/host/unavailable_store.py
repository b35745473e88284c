"""The session store of a stdio server whose sessions directory cannot be used.

An editor launches the stdio server and shows its JSON-RPC errors, not its stderr, so the server
starts anyway: `initialize` works, and every method that needs the store (session/new, load, resume,
fork, list, delete) answers -32603 with one line saying what to fix. The stdio start-up (serve.py) has
the host open it with `open_or_explain`; HTTP refuses to start instead (startup.py's checks).
"""

from __future__ import annotations

import logging
from typing import NoReturn

from iac_code.config import ConfigError, Settings
from iac_code.errors import Unavailable
from iac_code.messages import Message
from iac_code.sessions.store import RecordChanges, SessionRecord, SessionStore

logger = logging.getLogger(__name__)


class UnavailableStore:
    """Every call fails with the problem."""

    def __init__(self, problem: str) -> None:
        self.problem = problem

    async def create(self, record: SessionRecord) -> NoReturn:
        self._fail()

    async def append(self, session_id: str, message: Message) -> NoReturn:
        self._fail()

    async def update(self, session_id: str, changes: RecordChanges) -> NoReturn:
        self._fail()

    async def load(self, session_id: str) -> NoReturn:
        self._fail()

    async def get(self, session_id: str) -> NoReturn:
        self._fail()

    async def list(
        self, cwd: str | None, cursor: str | None = None, limit: int = 50, owner: str | None = None
    ) -> NoReturn:
        self._fail()

    async def fork(self, session_id: str, new_session_id: str, owner: str | None = None) -> NoReturn:
        self._fail()

    async def clear(self, session_id: str) -> NoReturn:
        self._fail()

    async def delete(self, session_id: str) -> NoReturn:
        self._fail()

    async def close(self) -> None:
        """Nothing to release (the async SessionStore closes its store when the server stops)."""

    def _fail(self) -> NoReturn:
        raise Unavailable(self.problem, {"config": self.problem})


async def open_or_explain(settings: Settings) -> SessionStore:
    """The store of a stdio server, or, when its file cannot be used (open_store checks it), one that answers
    every call with what to fix. An unreachable database still stops the server (exit 2), as on HTTP."""
    from iac_code.sessions.open import open_store

    try:
        return await open_store(settings)
    except ConfigError as exc:
        if settings.database_url:
            raise
        logger.error("%s", exc)
        return UnavailableStore(str(exc))
