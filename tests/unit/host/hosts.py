"""A session host over a store a test opened (the test closes it)."""

from __future__ import annotations

from typing import Any

from iac_code.config import Settings
from iac_code.host.host import SessionHost
from iac_code.sessions.store import SessionStore


def host_over(store: SessionStore, settings: Settings, **options: Any) -> SessionHost:
    async def given(_: Settings) -> SessionStore:
        return store

    return SessionHost(settings, open_store=given, **options)
