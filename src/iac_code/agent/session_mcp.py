"""A session's MCP servers, as the session core uses them (the servers themselves: iac_code/mcp/README.md).

- The hub starts when the client can be told about the session (`start()`: after session/new has
  put the session's updates on hold, or when load/resume/reload opens it) and stops with it
  (`aclose()`), or in the background when the session is dropped without a close (`release()`:
  evicted for idleness, or taken over by another connection).
- A server's problem is told to the user once (`tell`: the session makes it a notice titled "MCP", which an
  ACP client shows as a notice or an "[MCP] …" agent message, in or out of a turn; headless prints it on
  stderr); a change in what the servers offer announces the session's commands again.
- The first turn waits a bounded time for servers still starting; each turn's loop then offers the
  tools of the servers ready at its start (`tools`, the loop's `extra_tools`).
- `/mcp__<server>__<prompt> args` becomes the prompt's text as the server renders it; one that cannot
  be rendered raises CommandError (the session shows it and the turn ends there).
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Awaitable, Callable
from typing import TypeVar

from iac_code.agent.session_commands import CommandError, CommandInfo
from iac_code.mcp import FIRST_TURN_WAIT, ChangeCallback, McpHub, ProblemCallback, PromptError
from iac_code.mcp.naming import PREFIX
from iac_code.messages import Message
from iac_code.tools.base import Tool

TITLE = "MCP"  # of its notices
MARKER = f"[{TITLE}]"

# (on_problem, on_change) → the session's hub; the agent binds the settings, the client's list and the cwd
HubFactory = Callable[[ProblemCallback, ChangeCallback], McpHub]
Tell = Callable[[str], Awaitable[None]]  # a server's problem, for the user

_PROMPT_COMMAND = re.compile(rf"/({PREFIX}\S+)\s*(.*)", re.DOTALL)
_releasing: set[asyncio.Task[None]] = set()  # hubs closing in the background after a release()
_Result = TypeVar("_Result")


class SessionMcp:
    def __init__(self, make_hub: HubFactory | None, tell: Tell, on_change: Callable[[], Awaitable[None]]) -> None:
        self._tell = tell
        self._on_change = on_change
        self._hub = make_hub(self._problem, self._changed) if make_hub is not None else None
        self._waited = False  # the first turn's bounded wait is done
        self._closed = False

    def start(self) -> None:
        if self._hub is not None and not self._closed:
            self._hub.start()

    def tools(self) -> list[Tool]:
        return self._hub.tools() if self._hub is not None else []

    def available_commands(self) -> list[CommandInfo]:
        """The prompts of the servers ready now, as commands."""
        if self._hub is None:
            return []
        return [CommandInfo(prompt.name, prompt.description, prompt.hint) for prompt in self._hub.prompts()]

    def status(self) -> dict[str, str]:
        """Each server's state (for /status)."""
        return self._hub.status() if self._hub is not None else {}

    async def prepare(self, message: Message, cancelled: asyncio.Event) -> Message | None:
        """The message to run: after the first turn's wait for starting servers, and with an MCP prompt
        command rendered. None when the turn was cancelled meanwhile; CommandError when the prompt cannot
        be rendered as typed."""
        if self._hub is None:
            return message
        if not self._waited:
            self._waited = True
            await _unless(cancelled, self._hub.wait_ready(FIRST_TURN_WAIT))
        command = _PROMPT_COMMAND.fullmatch(message.text.strip())
        if command is None or cancelled.is_set():
            return message
        try:
            rendered = await _unless(cancelled, self._hub.render_prompt(command[1], command[2]))
        except PromptError as exc:
            raise CommandError(f"{MARKER} {exc}\n") from None
        if rendered is None:
            return None
        return dataclasses.replace(message, text=rendered.text, images=[*message.images, *rendered.images])

    async def aclose(self) -> None:
        self._closed = True
        if self._hub is not None:
            await self._hub.aclose()

    def release(self) -> None:
        """Stop the servers in the background (the session is dropped, not closed)."""
        if self._hub is None or self._closed:
            return
        self._closed = True
        task = asyncio.ensure_future(self._hub.aclose())
        _releasing.add(task)
        task.add_done_callback(_releasing.discard)

    async def _problem(self, server: str, message: str) -> None:
        if not self._closed:
            await self._tell(message)

    async def _changed(self) -> None:
        if not self._closed:
            await self._on_change()


async def _unless(cancelled: asyncio.Event, work: Awaitable[_Result]) -> _Result | None:
    """`work`'s result, or None as soon as the turn is cancelled (the work is then cancelled too, as it is
    when this wait itself is cancelled)."""
    doing = asyncio.ensure_future(work)
    stopping = asyncio.ensure_future(cancelled.wait())
    try:
        await asyncio.wait({doing, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        if not doing.done():
            doing.cancel()
    return doing.result() if doing.done() else None
