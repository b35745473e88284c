"""The failures a client hears about, in protocol-neutral terms.

Every layer below the protocol face raises these (never a JSON-RPC error); `acp/router.py` is the one
place that maps them to JSON-RPC errors, and `headless.py` prints them. Each carries `data`: what the
client should read, keyed by the request field at fault (`{"sessionId": "Session not found"}`).
"""

from __future__ import annotations

from typing import ClassVar


class IacError(Exception):
    """A failure phrased for the client; `kind` says which JSON-RPC error it becomes."""

    kind: ClassVar[str] = "internal"

    def __init__(self, message: str, data: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data: dict[str, str] = data if data is not None else {}


class InvalidParams(IacError):
    """The request names something wrong: `field` is the request field at fault (-32602)."""

    kind = "invalid_params"

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}", {field: problem})
        self.field = field


class SessionNotFound(InvalidParams):
    """No session has that id (or it was deleted meanwhile)."""

    def __init__(self, session_id: str = "") -> None:
        super().__init__("sessionId", "Session not found")
        self.session_id = session_id


class AuthRequired(IacError):
    """No model credentials are configured (-32000, as ACP's auth_required)."""

    kind = "auth_required"


class Unavailable(IacError):
    """Something this server depends on is missing or unreachable (the store, the database): -32603 with
    `data` saying what, so the client may retry later."""

    kind = "unavailable"


class ModelCallFailed(Unavailable):
    """The model call of a turn failed for good (after the provider's retries): -32603 with the provider's
    words (secrets taken out), after what the turn streamed before was saved."""
