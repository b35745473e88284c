"""`SessionFace`: what a session core (session.py) needs of a protocol: one per protocol (ACP: acp/face.py,
headless: headless.py). The core shows loop events and plain text through it and asks its questions there."""

from __future__ import annotations

from typing import Protocol

from iac_code.agent.events import Event, NoticeSeverity, PermissionRequest
from iac_code.agent.policy import Choice
from iac_code.agent.session_commands import CommandInfo
from iac_code.tools.questions import Answer, Form, Link


class SessionFace(Protocol):
    """Where a session shows what happens and asks its questions: one per protocol."""

    async def show(self, event: Event) -> None:
        """One loop event of a running turn (never TurnEnd or PermissionRequest: the session handles those)."""
        ...

    async def say(self, text: str) -> None:
        """A message from the session itself (a command's output), which the model does not see."""
        ...

    async def notice(self, severity: NoticeSeverity, title: str, detail: str) -> None:
        """Something for the user beside the conversation (an MCP server that failed, a skill skipped), which
        the model does not see; the turn goes on. `title` is short ("MCP"), `detail` says what happened."""
        ...

    async def command_failed(self, text: str) -> None:
        """A slash command could not run as typed; the turn ends here."""
        ...

    async def ask(self, request: PermissionRequest) -> Choice:
        """The user's answer about a call (its ToolUseStart was shown). The session stops waiting when the
        turn is cancelled, and resolves the request itself."""
        ...

    async def elicit(self, call_id: str, question: Form | Link) -> Answer:
        """The user's answer to a running call's question (tools/questions.py); UNSUPPORTED when it cannot be
        shown. The session stops waiting when the turn is cancelled."""
        ...

    async def titled(self, title: str) -> None:
        """The session got its title (from its first prompt)."""
        ...

    async def commands_changed(self, commands: list[CommandInfo]) -> None:
        """The commands a client may offer now."""
        ...
