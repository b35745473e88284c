"""What every backend shares about naming and ordering sessions: ids, times and list cursors.

Ids were directory names in the file store, and stay as strict: `[A-Za-z0-9_-]{1,128}`, no dot, so
never `..`, a path or a temp file, whatever a backend does with them.
"""

from __future__ import annotations

import base64
import binascii
import re
import time
from datetime import UTC, datetime

from iac_code.sessions.store import SessionNotFound

SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


class InvalidSessionId(SessionNotFound, ValueError):
    """An id that no session can have; callers may treat it as either "not found" or a bad argument."""


def check_id(session_id: str) -> str:
    """`session_id`, or InvalidSessionId when no session can have it."""
    if not isinstance(session_id, str) or not SESSION_ID.fullmatch(session_id):
        raise InvalidSessionId(f"invalid session id {str(session_id)[:40]!r}")
    return session_id


def iso_time(seconds: float | None = None) -> str:
    """A Unix time (default: now) as ISO 8601 UTC with milliseconds: "2026-11-30T02:36:16.123Z".
    Fixed width, so these strings sort as the times do."""
    moment = datetime.fromtimestamp(time.time() if seconds is None else seconds, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def encode_cursor(updated_at: str, session_id: str) -> str:
    """The cursor of the page after the session (updated_at, session_id): base64url of both."""
    return base64.urlsafe_b64encode(f"{updated_at}|{session_id}".encode()).decode()


def decode_cursor(cursor: str) -> tuple[str, str]:
    """(updated_at, session_id) of a cursor encode_cursor made; ValueError for anything else."""
    try:
        updated_at, session_id = base64.urlsafe_b64decode(cursor.encode()).decode().split("|")
    except (ValueError, binascii.Error, UnicodeError):
        raise ValueError("invalid cursor") from None
    if not _TIMESTAMP.fullmatch(updated_at) or not SESSION_ID.fullmatch(session_id):
        raise ValueError("invalid cursor")
    return updated_at, session_id
