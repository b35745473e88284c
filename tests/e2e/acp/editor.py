"""The official SDK's client playing an editor against a real `iac-code acp` process.

It offers what an editor offers: a file system with unsaved buffers (a read returns the buffer when
there is one; a write lands in the buffer, never on disk), and terminals that really run the command
(in their own process group), keep output up to the byte limit, and report how it ended. Every fs/*
and terminal/* request is logged in order, with what the user saw meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    FileSystemCapabilities,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    TerminalToolCallContent,
    ToolCallProgress,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from tests.acp_schema import check
from tests.e2e.acp.wire import model_env

EVERYTHING = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True)


@dataclass
class Terminal:
    process: asyncio.subprocess.Process
    limit: int | None
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    reader: asyncio.Task[None] | None = None

    async def read(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(4096):
            self.output += chunk
            if self.limit is not None and len(self.output) > self.limit:
                del self.output[: len(self.output) - self.limit]  # the client keeps the tail
                self.truncated = True

    def exit_status(self) -> TerminalExitStatus | None:
        code = self.process.returncode
        if code is None:
            return None
        return TerminalExitStatus(signal=signal.Signals(-code).name) if code < 0 else TerminalExitStatus(exit_code=code)


class Editor:
    """`answer(tool_call, options)` picks the permission answer (an option id, or None to cancel)."""

    def __init__(self, buffers: dict[Path, str] | None = None, answer: Callable[..., str | None] | None = None):
        self.reset(buffers, answer)

    def reset(self, buffers: dict[Path, str] | None = None, answer: Callable[..., str | None] | None = None) -> None:
        """A fresh editor state, for one connection serving several tests (terminals left are killed)."""
        for terminal in getattr(self, "terminals", {}).values():
            self._kill(terminal)
        self.buffers = {str(path): text for path, text in (buffers or {}).items()}
        self.answer = answer or (lambda tool_call, options: "allow_once")
        self.updates: list[Any] = []
        self.permissions: list[Any] = []
        self.log: list[str] = []  # fs/* and terminal/* requests, in order
        self.created: list[dict[str, Any]] = []  # terminal/create params
        self.terminals: dict[str, Terminal] = {}
        self.shown_running: list[bool] = []  # for each terminal shown on a tool call: was it still running?
        self.terminal_shown = asyncio.Event()
        self._ids = itertools.count(1)

    # -- the user's view -----------------------------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)
        if isinstance(update, ToolCallProgress) and update.status is None:
            for block in update.content or []:
                if isinstance(block, TerminalToolCallContent):
                    self.shown_running.append(self.terminals[block.terminal_id].process.returncode is None)
                    self.terminal_shown.set()

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **_: Any) -> Any:
        self.permissions.append(tool_call)
        option_id = self.answer(tool_call, options)
        if option_id is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option_id))

    def of_kind(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    # -- file system ---------------------------------------------------------------------------

    async def read_text_file(self, session_id: str, path: str, **_: Any) -> ReadTextFileResponse:
        self.log.append("fs/read_text_file")
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        return ReadTextFileResponse(content=Path(path).read_text())

    async def write_text_file(self, session_id: str, path: str, content: str, **_: Any) -> WriteTextFileResponse:
        self.log.append("fs/write_text_file")
        self.buffers[path] = content
        return WriteTextFileResponse()

    # -- terminals -----------------------------------------------------------------------------

    async def create_terminal(
        self, session_id: str, command: str, args: list[str] | None = None, env: Any = None, cwd: str | None = None,
        output_byte_limit: int | None = None, **_: Any,
    ) -> CreateTerminalResponse:  # fmt: skip
        self.log.append("terminal/create")
        variables = {v.name: v.value for v in env or []}
        self.created.append(
            {"command": command, "args": args, "cwd": cwd, "env": variables, "output_byte_limit": output_byte_limit}
        )
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, env=variables, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        terminal = Terminal(process, self._kept_output(output_byte_limit))
        terminal.reader = asyncio.ensure_future(terminal.read())
        terminal_id = f"term-{next(self._ids)}"
        self.terminals[terminal_id] = terminal
        return CreateTerminalResponse(terminal_id=terminal_id)

    def _kept_output(self, output_byte_limit: int | None) -> int | None:
        return output_byte_limit

    async def terminal_output(self, session_id: str, terminal_id: str, **_: Any) -> TerminalOutputResponse:
        self.log.append("terminal/output")
        terminal = self.terminals[terminal_id]
        if terminal.process.returncode is not None and terminal.reader is not None:
            await terminal.reader
        text = terminal.output.decode(errors="replace")
        return TerminalOutputResponse(output=text, truncated=terminal.truncated, exit_status=terminal.exit_status())

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **_: Any) -> WaitForTerminalExitResponse:
        self.log.append("terminal/wait_for_exit")
        terminal = self.terminals[terminal_id]
        await terminal.process.wait()
        status = terminal.exit_status()
        assert status is not None
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **_: Any) -> KillTerminalResponse:
        self.log.append("terminal/kill")
        self._kill(self.terminals[terminal_id])
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **_: Any) -> ReleaseTerminalResponse:
        self.log.append("terminal/release")
        self._kill(self.terminals[terminal_id])
        return ReleaseTerminalResponse()

    @staticmethod
    def _kill(terminal: Terminal) -> None:
        if terminal.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(terminal.process.pid, signal.SIGKILL)

    async def close(self) -> None:
        for terminal in self.terminals.values():
            self._kill(terminal)
            await terminal.process.wait()


class CarelessEditor(Editor):
    """An editor that misbehaves as a careless or stuck one might: with `keeps_everything` a terminal
    keeps its whole output whatever `outputByteLimit` said; the terminal/* methods in `silent` get
    no answer at all (the request waits until the connection closes)."""

    def __init__(self, *, keeps_everything: bool = False, silent: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.keeps_everything = keeps_everything
        self.silent = silent

    def _kept_output(self, output_byte_limit: int | None) -> int | None:
        return None if self.keeps_everything else output_byte_limit

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        await self._maybe_silent("terminal/output")
        return await super().terminal_output(session_id, terminal_id, **kwargs)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        await self._maybe_silent("terminal/wait_for_exit")
        return await super().wait_for_terminal_exit(session_id, terminal_id, **kwargs)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> KillTerminalResponse:
        await self._maybe_silent("terminal/kill")
        return await super().kill_terminal(session_id, terminal_id, **kwargs)

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> ReleaseTerminalResponse:
        await self._maybe_silent("terminal/release")
        return await super().release_terminal(session_id, terminal_id, **kwargs)

    async def _maybe_silent(self, method: str) -> None:
        if method in self.silent:
            self.log.append(method)
            await asyncio.get_running_loop().create_future()  # cancelled when the connection closes


@contextlib.asynccontextmanager
async def editing(
    editor: Editor, model_url: str, config_dir: Path, capabilities: ClientCapabilities = EVERYTHING, **env: str
) -> AsyncIterator[ClientSideConnection]:
    """An initialized connection from `editor` to a fresh `iac-code acp`."""
    command = (sys.executable, "-m", "iac_code.cli", "acp")
    observers = [check.Conformance("the SDK client (editor)").observe]
    env_of_agent = model_env(model_url, config_dir, **env)
    try:
        async with spawn_agent_process(editor, *command, env=env_of_agent, observers=observers) as (conn, _):
            await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities)
            yield conn
    finally:
        await editor.close()
