"""What the protocol layer needs from session persistence, so another backend can replace the files.

Every method is async: an implementation keeps its blocking work (disk syncs, locks, network) off the
event loop. `threaded.py` adapts the synchronous file store (files.py); a PostgreSQL store implements
the protocol directly. tests/unit/sessions/test_store_conformance.py is the contract, for all of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from iac_code.errors import InvalidParams, SessionNotFound
from iac_code.messages import Message

__all__ = ["Decision", "RecordChanges", "SessionDamaged", "SessionNotFound", "SessionRecord", "SessionStore"]

Decision = Literal["allow", "reject"]


@dataclass
class SessionRecord:
    """A session's metadata. Times are ISO 8601 UTC strings ("2026-11-30T02:36:16.123Z")."""

    session_id: str
    cwd: str
    title: str = ""
    created_at: str = ""
    updated_at: str = ""
    model: str = ""
    mode: str = "default"
    permissions: dict[str, Decision] = field(default_factory=dict)  # tool name → allow/reject_always
    owner: str = ""  # the principal that created it; "" for sessions stored before principals existed
    # ACP's additionalDirectories of its last attach (new, load, resume, fork): absolute, admitted, in order
    additional_directories: list[str] = field(default_factory=list)
    options: dict[str, bool] = field(default_factory=dict)  # its on/off settings by id (acp/config_options.py)


@dataclass(frozen=True)
class RecordChanges:
    """Metadata fields to change on a session's record; None leaves a field as it is."""

    title: str | None = None
    model: str | None = None
    mode: str | None = None
    permissions: dict[str, Decision] | None = None
    additional_directories: list[str] | None = None
    options: dict[str, bool] | None = None

    def given(self) -> dict[str, str | dict[str, Decision] | list[str] | dict[str, bool]]:
        """The fields to change, by name."""
        named = {
            "title": self.title,
            "model": self.model,
            "mode": self.mode,
            "permissions": self.permissions,
            "additional_directories": self.additional_directories,
            "options": self.options,
        }
        return {name: value for name, value in named.items() if value is not None}

    def applied_to(self, record: SessionRecord) -> SessionRecord:
        """`record` with these changes (updated_at untouched)."""
        return SessionRecord(
            session_id=record.session_id,
            cwd=record.cwd,
            title=record.title if self.title is None else self.title,
            created_at=record.created_at,
            updated_at=record.updated_at,
            model=record.model if self.model is None else self.model,
            mode=record.mode if self.mode is None else self.mode,
            permissions=dict(record.permissions if self.permissions is None else self.permissions),
            owner=record.owner,
            additional_directories=list(
                record.additional_directories if self.additional_directories is None else self.additional_directories
            ),
            options=dict(record.options if self.options is None else self.options),
        )


class SessionDamaged(InvalidParams):
    """The session exists but its stored data cannot be read back (hand-edited, or not regular files).
    The message names the session and what is wrong; every other session is unaffected."""

    def __init__(self, session_id: str, problem: str) -> None:
        super().__init__("sessionId", f"session {session_id} is damaged: {problem}")
        self.session_id = session_id


class SessionStore(Protocol):
    async def create(self, record: SessionRecord) -> None:
        """Persist a new, empty session (durable on return)."""

    async def append(self, session_id: str, message: Message) -> None:
        """Append one message to the session's log; durable on return; bumps updated_at. Callers keep
        one writer per session (sessions/writer.py), so a session's appends never race."""

    async def update(self, session_id: str, changes: RecordChanges) -> SessionRecord:
        """Change metadata fields (title, model, mode, permissions); returns the new record."""

    async def load(self, session_id: str) -> tuple[SessionRecord, list[Message]]:
        """The record and the full log, repaired (torn last line dropped, unanswered tool calls
        answered "interrupted"), with the repair written back. Raises SessionNotFound."""

    async def get(self, session_id: str) -> SessionRecord:
        """The record alone (cheap). Raises SessionNotFound."""

    async def list(
        self, cwd: str | None, cursor: str | None = None, limit: int = 50, owner: str | None = None
    ) -> tuple[list[SessionRecord], str | None]:
        """Sessions of `cwd` (all when None) owned by `owner` (anyone's when None), newest updated first,
        and the next page's cursor. Raises ValueError for a cursor it did not issue."""

    async def fork(self, session_id: str, new_session_id: str, owner: str | None = None) -> SessionRecord:
        """Copy a session's log and metadata under a new id, owned by `owner` (None: the source's owner),
        durable on return."""

    async def clear(self, session_id: str) -> None:
        """Start the session's log afresh (for /clear); durable."""

    async def delete(self, session_id: str) -> None:
        """Remove the session entirely; no error if unknown."""

    async def close(self) -> None:
        """Release what the store holds (threads, descriptors, connections); it is not used after."""
