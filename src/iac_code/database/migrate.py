"""Versioned schema migrations, applied at start-up by whichever instance gets there first.

Each file `migrations/NNNN_name.sql` is one version, applied once, in order, inside one transaction that
holds a transaction-level advisory lock: instances starting together queue on the lock, and each finds
the versions the others applied. A migration is never edited once released; a change is a new file.
"""

from __future__ import annotations

import logging

from psycopg import AsyncConnection
from psycopg.rows import TupleRow

from iac_code.database.migration_files import known_migrations

logger = logging.getLogger(__name__)

# Any constant works as long as nothing else in the database uses it: "iac-code" spelled in hex-ish.
MIGRATION_LOCK = 0x1AC_C0DE


async def migrate(conn: AsyncConnection[TupleRow]) -> list[int]:
    """Bring the schema up to date; returns the versions this call applied (usually none)."""
    applied_now = []
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", [MIGRATION_LOCK])
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS iac_schema_migrations"
            " (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        cursor = await conn.execute("SELECT version FROM iac_schema_migrations")
        done = {row[0] for row in await cursor.fetchall()}
        for migration in known_migrations():
            if migration.version in done:
                continue
            logger.info("applying database migration %04d_%s", migration.version, migration.name)
            await conn.execute(migration.sql.encode())  # several statements: one simple query
            await conn.execute(
                "INSERT INTO iac_schema_migrations (version, name) VALUES (%s, %s)", [migration.version, migration.name]
            )
            applied_now.append(migration.version)
    return applied_now
