"""Who is asking: the principal a connection authenticated as, which owns the sessions it creates."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Principal:
    name: str
    admin: bool = False


LOCAL = Principal("local", admin=True)


def principal_of(transport: object) -> Principal:
    """The principal a transport authenticated (an HTTP connection carries one); the local user otherwise."""
    found = getattr(transport, "principal", None)
    return found if isinstance(found, Principal) else LOCAL
