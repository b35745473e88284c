"""What session/new, load, resume and fork answer: the SDK's response types, each with the seed's `models`
object beside `modes` and `configOptions` (its schema class was removed from ACP; Zed and others still
read it). The state itself is config_options.session_state, the one early answers use too.

Each is built on first use, like the SDK's models (sdk_import.py): a connection answers one or two of the
four, and building all of them at import cost ~15 ms of the first prompt sent at once after start-up."""

from __future__ import annotations

from typing import Any

from acp.schema import ForkSessionResponse, LoadSessionResponse, NewSessionResponse, ResumeSessionResponse
from pydantic import ConfigDict


class NewSession(NewSessionResponse):
    model_config = ConfigDict(defer_build=True)
    models: dict[str, Any] | None = None


class LoadSession(LoadSessionResponse):
    model_config = ConfigDict(defer_build=True)
    models: dict[str, Any] | None = None


class ResumeSession(ResumeSessionResponse):
    model_config = ConfigDict(defer_build=True)
    models: dict[str, Any] | None = None


class ForkSession(ForkSessionResponse):
    model_config = ConfigDict(defer_build=True)
    models: dict[str, Any] | None = None
