"""Which session store a server uses: PostgreSQL when a database is configured, else files on disk."""

from __future__ import annotations

from iac_code.config import ConfigError, Settings
from iac_code.sessions.store import SessionStore
from iac_code.sessions.threaded import open_file_store


async def open_store(settings: Settings) -> SessionStore:
    """The store for `settings`, ready to use; the caller closes it.

    The PostgreSQL driver is an optional extra (`pip install 'iac-code[postgres]'`), imported only when
    `database_url` is set, so the default file store needs nothing beyond the base install.
    """
    if not settings.database_url:
        return open_file_store(settings.sessions_dir)
    try:
        from psycopg import OperationalError

        from iac_code.sessions.postgres import PostgresSessionStore
    except ImportError as exc:
        raise ConfigError(
            f"IAC_CODE_DATABASE_URL is set but the PostgreSQL driver is missing ({exc}): "
            "pip install 'iac-code[postgres]'"
        ) from None
    try:
        return await PostgresSessionStore.open(settings.database_url)
    except OperationalError as exc:
        raise ConfigError(
            f"cannot reach the database of IAC_CODE_DATABASE_URL ({_where(settings.database_url)}): {exc}"
        ) from None


def _where(url: str) -> str:
    """The URL without its credentials, for messages."""
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(url)
    except ProgrammingError:
        return "unparsable URL"
    return f"host {parts.get('host', 'localhost')}, port {parts.get('port', 5432)}, database {parts.get('dbname')}"
