"""What session/new, load, resume and fork answer: the SDK's response types, each with the seed's `models`
object beside `modes` and `configOptions` (its schema class was removed from ACP; Zed and others still
read it). The state itself is config_options.session_state, the one early answers use too."""

from __future__ import annotations

from typing import Any

from acp.schema import ForkSessionResponse, LoadSessionResponse, NewSessionResponse, ResumeSessionResponse


class NewSession(NewSessionResponse):
    models: dict[str, Any] | None = None


class LoadSession(LoadSessionResponse):
    models: dict[str, Any] | None = None


class ResumeSession(ResumeSessionResponse):
    models: dict[str, Any] | None = None


class ForkSession(ForkSessionResponse):
    models: dict[str, Any] | None = None
