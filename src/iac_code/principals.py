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


def is_shared(principal: Principal) -> bool:
    """A principal of a shared server (a token, a JWT): not the editor's own user, whom stdio (and an HTTP
    server without authentication) serves. The name `local` is reserved, so a token or a
    JWT never stands for the local user."""
    return principal.name != LOCAL.name
