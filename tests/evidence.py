"""What a failing test shows about the processes it drove, so that a red CI run explains itself.

A test helper that drives a real process (an `iac-code acp` on pipes, an HTTP server, a client's connection)
calls `watch(self)`; when a test fails, tests/conftest.py adds each watched witness's `evidence()` (the
process's stderr or log tail, the last protocol messages) to the failure's report. Witnesses whose work was
finished before a test started are forgotten then, so a report names what the failing test could have used:
its own processes and the module's shared ones.
"""

from __future__ import annotations

import json
import weakref
from collections import deque
from typing import Any, Protocol

TAIL_LINES = 40
MESSAGES_KEPT = 12
MESSAGE_CHARS = 600


class Witness(Protocol):
    def evidence_title(self) -> str: ...

    def evidence(self) -> str: ...

    def finished(self) -> bool: ...


_watched: weakref.WeakSet[Any] = weakref.WeakSet()


def watch(witness: Witness) -> None:
    _watched.add(witness)


def forget_finished() -> None:
    for witness in list(_watched):
        if witness.finished():
            _watched.discard(witness)


def report_sections() -> list[tuple[str, str]]:
    """(title, text) for each watched witness, oldest first; a witness that fails to describe itself says so."""
    sections = []
    for witness in sorted(_watched, key=id):
        try:
            sections.append((witness.evidence_title(), witness.evidence()))
        except Exception as exc:  # the report of a failure must not fail in turn
            sections.append((type(witness).__name__, f"(no evidence: {exc!r})"))
    return sections


def tail(text: str, lines: int = TAIL_LINES) -> str:
    kept = text.splitlines()[-lines:]
    return "\n".join(kept) if kept else "(empty)"


class Transcript:
    """The last protocol messages one side exchanged, newest last, each cut to a readable length."""

    def __init__(self) -> None:
        self._lines: deque[str] = deque(maxlen=MESSAGES_KEPT)

    def sent(self, message: Any) -> None:
        self._lines.append("→ " + _short(message))

    def received(self, message: Any) -> None:
        self._lines.append("← " + _short(message))

    def text(self) -> str:
        return "\n".join(self._lines) if self._lines else "(no messages)"


def _short(message: Any) -> str:
    if isinstance(message, bytes):
        message = message.decode(errors="replace")
    text = message if isinstance(message, str) else json.dumps(message, ensure_ascii=False, default=str)
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + f"… ({len(text)} characters)"
