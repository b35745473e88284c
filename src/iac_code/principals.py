"""Who is asking: the principal a request, a session and an audit record belong to."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Principal:
    name: str
    admin: bool = False


# stdio, headless and the single shared token: the local user, who sees everything
LOCAL = Principal("local", admin=True)
