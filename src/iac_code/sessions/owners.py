"""Which connection of this process holds each session's runtime, so a session's log has one writer.

A connection keeps its live sessions in a `Holder` (host/residency.py's Residency); the server owns one
`SessionOwners` and gives it to every connection it serves. Alone, a process needs nothing more;
instances sharing a database first take the session's lease (cluster/owners.py). Both raise the
neutral errors of errors.py, which the protocol face maps.
"""

from __future__ import annotations

from typing import Protocol


class HeldSession(Protocol):
    """What the owners need of a live session's runtime."""

    @property
    def busy(self) -> bool:
        """A prompt is running for it."""
        ...

    async def flush(self) -> None:
        """Wait until everything it wrote is in the store."""
        ...

    async def close(self) -> None: ...


class Holder(Protocol):
    """One connection's live sessions."""

    def held(self, session_id: str) -> HeldSession | None: ...

    def forget(self, session_id: str) -> None:
        """Drop the session's runtime here (and release it in the owners)."""
        ...


class SessionOwners:
    """Which holder of this process has each session's runtime (session id → its Holder)."""

    def __init__(self) -> None:
        self._by_session: dict[str, Holder] = {}

    def get(self, session_id: str) -> Holder | None:
        return self._by_session.get(session_id)

    async def reserve(self, session_id: str) -> None:
        """Called before a holder of this process takes the session. Alone, there is nothing to do;
        instances sharing a database first take the session's lease (cluster/owners.py)."""

    def set(self, session_id: str, owner: Holder) -> None:
        self._by_session[session_id] = owner

    def release(self, session_id: str, owner: Holder) -> None:
        if self._by_session.get(session_id) is owner:
            del self._by_session[session_id]
