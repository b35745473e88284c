"""Which stored sessions a principal may use: the ones it created, or every one for an admin. Another
principal's session is answered exactly like an unknown id, so its existence is never revealed."""

from __future__ import annotations

from iac_code.principals import Principal
from iac_code.sessions.store import SessionDamaged, SessionNotFound, SessionRecord, SessionStore


def visible(principal: Principal, record: SessionRecord) -> bool:
    """Sessions stored before principals existed have no owner (""): only admins see them."""
    return principal.admin or record.owner == principal.name


async def may_delete(store: SessionStore, principal: Principal, session_id: str) -> bool:
    try:
        return visible(principal, await store.get(session_id))
    except SessionNotFound:
        return True  # unknown (or an id the store refuses): delete answers as it always did
    except SessionDamaged:
        return principal.admin  # whose it is cannot be read
