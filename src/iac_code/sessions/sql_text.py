"""SQL text the PostgreSQL and SQLite stores share: both have the same tables and columns, and both
dialects read the list query with its keyset cursor alike. Each store passes its placeholder ("%s", "?").

Not shared, because the dialects differ: time (PostgreSQL's now() and greatest(), SQLite's ISO strings
given by Python and max()), appends (a data-modifying CTE vs UPDATE … RETURNING then INSERT) and locks
(FOR SHARE vs BEGIN IMMEDIATE).
"""

from __future__ import annotations

import os

from iac_code.database.json_text import to_json_text

COLUMNS = (
    "session_id, cwd, title, created_at, updated_at, model, mode, permissions, owner, additional_directories, options"
)
INSERT_COLUMNS = (
    "session_id, cwd, cwd_key, title, created_at, updated_at, model, mode, permissions, owner, additional_directories,"
    " options"
)


def cwd_key(cwd: str) -> str:
    """What list(cwd) compares: the normalised path as JSON text, as the cwd_key column holds it."""
    return to_json_text(os.path.normpath(cwd))


def list_query(placeholder: str, *, by_cwd: bool, after_cursor: bool, by_owner: bool = False) -> str:
    """Sessions newest updated first, ties by id (both stores sort ids bytewise), optionally of one
    cwd_key, of one owner and after a cursor's (updated_at, session_id); parameters: [cwd_key], [owner],
    [updated_at, session_id], then the limit. The indexes on (updated_at, session_id), (cwd_key, updated_at,
    session_id) and (owner, updated_at, session_id) serve it."""
    conditions = ["true"]
    if by_cwd:
        conditions.append(f"cwd_key = {placeholder}")
    if by_owner:
        conditions.append(f"owner = {placeholder}")
    if after_cursor:
        conditions.append(f"(updated_at, session_id) < ({placeholder}, {placeholder})")
    return (
        f"SELECT {COLUMNS} FROM iac_sessions WHERE {' AND '.join(conditions)}"
        f" ORDER BY updated_at DESC, session_id DESC LIMIT {placeholder}"
    )
