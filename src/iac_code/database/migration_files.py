"""The schema versions shipped with the package: `<folder>/NNNN_name.sql`, one version per file, in order.

Shared by PostgreSQL (`migrations/`, migrate.py) and SQLite (`sqlite_migrations/`, sqlite.py); each
applies them its own way. A released file is never edited: a change is the next number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

_FILE_NAME = re.compile(r"(\d{4})_(\w+)\.sql")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def known_migrations(folder: str = "migrations") -> list[Migration]:
    """The migrations of `folder` (inside iac_code.database), oldest first."""
    found = []
    for entry in resources.files(__package__).joinpath(folder).iterdir():
        match = _FILE_NAME.fullmatch(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    return sorted(found, key=lambda migration: migration.version)
